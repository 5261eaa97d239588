#pragma once
// Field access on nlohmann::json objects the way Go's encoding/json reads them (private to wire).
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/result.h"
#include "extender/model/pod.h"

namespace extender::wire::detail {

using nlohmann::json;

// The value of `key` in `obj` (case-insensitive, last match wins); nullptr when absent or null.
const json* field(const json& obj, std::string_view key);

// Each reader leaves `out` untouched when the value is absent and fails when its type is wrong.
Status read_string(const json* v, std::string& out, std::string_view path);
Status read_bool(const json* v, bool& out, std::string_view path);
Status read_int(const json* v, std::int64_t& out, std::string_view path);
// An object of strings (labels, annotations); resource lists also take numbers, as Quantity does.
Status read_string_map(const json* v, model::StringMap& out, std::string_view path, bool numbers_allowed = false);
// An object (or absent); fails for any other type.
Status expect_object(const json* v, std::string_view path);
Status expect_array(const json* v, std::string_view path);
// An array of strings, appended to out.
Status read_strings(const json* v, std::vector<std::string>& out, std::string_view path);
// "path[i]".
std::string at(std::string_view path, std::size_t i);
// metadata.name, and metadata.namespace when `ns` is given, of an object of `kind`.
Status read_name(const json& object, std::string_view kind, std::string& name, std::string* ns);

}  // namespace extender::wire::detail
