#include "json_fields.h"

#include "extender/wire/json_text.h"

namespace extender::wire::detail {
namespace {

Error wrong_type(std::string_view path, std::string_view expected) {
  return Error{std::string(path) + ": expected " + std::string(expected)};
}

}  // namespace

const json* field(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  const json* found = nullptr;
  bool exact = false;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& k = it.key();
    if (k == key) {
      found = &it.value();
      exact = true;
    } else if (!exact && key_matches(k, key)) {
      found = &it.value();
    }
  }
  if (found && found->is_null()) return nullptr;
  return found;
}

Status read_string(const json* v, std::string& out, std::string_view path) {
  if (!v) return {};
  if (!v->is_string()) return wrong_type(path, "a string");
  out = v->get_ref<const std::string&>();
  return {};
}

Status read_bool(const json* v, bool& out, std::string_view path) {
  if (!v) return {};
  if (!v->is_boolean()) return wrong_type(path, "true or false");
  out = v->get<bool>();
  return {};
}

Status read_int(const json* v, std::int64_t& out, std::string_view path) {
  if (!v) return {};
  if (v->is_number_integer()) {
    out = v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)
              ? INT64_MAX
              : v->get<std::int64_t>();
    return {};
  }
  return wrong_type(path, "an integer");
}

Status read_string_map(const json* v, model::StringMap& out, std::string_view path, bool numbers_allowed) {
  if (!v) return {};
  if (!v->is_object()) return wrong_type(path, "an object");
  for (auto it = v->begin(); it != v->end(); ++it) {
    const json& value = it.value();
    if (value.is_string()) {
      out[it.key()] = value.get_ref<const std::string&>();
    } else if (numbers_allowed && value.is_number()) {
      out[it.key()] = value.dump();
    } else if (!value.is_null()) {
      return wrong_type(std::string(path) + "." + it.key(), numbers_allowed ? "a quantity" : "a string");
    }
  }
  return {};
}

Status expect_object(const json* v, std::string_view path) {
  if (v && !v->is_object()) return wrong_type(path, "an object");
  return {};
}

Status expect_array(const json* v, std::string_view path) {
  if (v && !v->is_array()) return wrong_type(path, "an array");
  return {};
}

Status read_name(const json& object, std::string_view kind, std::string& name, std::string* ns) {
  EXTENDER_TRY(expect_object(&object, kind));
  const json* meta = field(object, "metadata");
  EXTENDER_TRY(expect_object(meta, "metadata"));
  if (!meta) return {};
  EXTENDER_TRY(read_string(field(*meta, "name"), name, "metadata.name"));
  if (ns) EXTENDER_TRY(read_string(field(*meta, "namespace"), *ns, "metadata.namespace"));
  return {};
}

std::string at(std::string_view path, std::size_t i) { return std::string(path) + "[" + std::to_string(i) + "]"; }

Status read_strings(const json* v, std::vector<std::string>& out, std::string_view path) {
  EXTENDER_TRY(expect_array(v, path));
  if (!v) return {};
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& item = (*v)[i];
    if (!item.is_string()) return Error{at(path, i) + ": expected a string"};
    out.push_back(item.get<std::string>());
  }
  return {};
}

}  // namespace extender::wire::detail
