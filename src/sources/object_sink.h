#pragma once
// ObjectSink (private to sources): a reflector sink for one kind of object whose store wants the
// objects decoded: each one decoded (one that cannot be read, or has no key, is logged and
// skipped), a full list handed over whole, an event as its key and the object (nullopt: deleted).
// A DELETED event whose object cannot be decoded still drops the object by the key its metadata
// gives (`metadata_key`), so an unreadable last state never keeps the one before alive.
// Called from its reflector's thread only.
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/result.h"
#include "extender/kube/reflector.h"

namespace extender::sources {

// A list and watch of one kind of object: each decoded, listed as a whole, changed by key.
template <class Object>
class ObjectSink : public kube::ReflectorSink {
 public:
  struct Hooks {
    const char* resource;
    Result<Object> (*decode)(const nlohmann::json&);
    std::string (*key)(const Object&);  // empty: the object cannot be told apart
    std::function<void(std::vector<Object>)> listed;
    std::function<void(const std::string&, std::optional<Object>)> changed;
    // The key from the object's metadata alone: "name", or "namespace/name" for namespaced keys.
    bool namespaced_key = false;
  };
  explicit ObjectSink(Hooks hooks) : hooks_(std::move(hooks)) {}
  void begin_list() override { listed_.clear(); }
  void list_item(const nlohmann::json& object) override {
    if (auto o = decode(object)) listed_.push_back(std::move(*o));
  }
  void end_list() override {
    spdlog::info("{}: {} listed", hooks_.resource, listed_.size());
    hooks_.listed(std::move(listed_));
    listed_.clear();
  }
  void event(std::string_view type, const nlohmann::json& object) override {
    auto o = decode(object);
    if (!o) {
      if (type != "DELETED") return;
      if (std::string key = metadata_key(object); !key.empty()) hooks_.changed(key, std::nullopt);
      return;
    }
    const std::string key = hooks_.key(*o);
    hooks_.changed(key, type == "DELETED" ? std::nullopt : std::move(o));
  }

 private:
  std::optional<Object> decode(const nlohmann::json& object) const {
    auto o = hooks_.decode(object);
    if (!o || hooks_.key(*o).empty()) {
      spdlog::warn("{}: skipping an object that cannot be read: {}", hooks_.resource, o ? "no name" : o.message());
      return std::nullopt;
    }
    return std::move(*o);
  }
  std::string metadata_key(const nlohmann::json& object) const {
    const auto meta = object.find("metadata");
    if (meta == object.end() || !meta->is_object()) return {};
    auto text = [&](const char* field) {
      const auto it = meta->find(field);
      return it != meta->end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string name = text("name");
    if (name.empty() || !hooks_.namespaced_key) return name;
    const std::string ns = text("namespace");
    return ns.empty() ? std::string() : ns + "/" + name;
  }
  Hooks hooks_;
  std::vector<Object> listed_;
};

}  // namespace extender::sources
