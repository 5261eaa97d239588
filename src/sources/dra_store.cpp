#include "dra_store.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <type_traits>

#include "extender/common/logging.h"
#include "extender/wire/dra_objects.h"

namespace extender::sources {
namespace {

using nlohmann::json;

// "namespace/name" or "name", from the object's metadata; empty when it has no name.
std::string key_of(const json& object) {
  if (!object.is_object()) return {};
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  auto name = meta->find("name");
  if (name == meta->end() || !name->is_string()) return {};
  auto ns = meta->find("namespace");
  if (ns != meta->end() && ns->is_string() && !ns->get_ref<const std::string&>().empty()) {
    return ns->get<std::string>() + "/" + name->get<std::string>();
  }
  return name->get<std::string>();
}

template <class T>
class DraSink : public kube::ReflectorSink {
 public:
  using Decode = Result<T> (*)(const json&, const wire::DraLimits&);
  DraSink(DraStore& store, std::map<std::string, T> DraStore::*objects, Decode decode, const char* kind)
      : store_(store), objects_(objects), decode_(decode), kind_(kind) {}

  void begin_list() override { listed_.clear(); }
  void list_item(const json& object) override {
    const std::string key = key_of(object);
    if (auto decoded = read(object, key)) listed_[key] = std::move(*decoded);
  }
  void end_list() override {
    spdlog::info("{}: {} listed", kind_, listed_.size());
    store_.replace(objects_, std::move(listed_));
    listed_.clear();
  }
  void event(std::string_view type, const json& object) override {
    const std::string key = key_of(object);
    if (key.empty()) return;
    store_.upsert(objects_, key, type == "DELETED" ? std::nullopt : read(object, key));
  }

 private:
  std::optional<T> read(const json& object, const std::string& key) const {
    auto decoded = decode_(object, wire::DraLimits{});
    if (!decoded || key.empty()) {
      spdlog::warn("{}: skipping an object that cannot be read: {}", kind_,
                   printable(decoded ? std::string("no name") : key + ": " + decoded.message()));
      return std::nullopt;
    }
    return std::move(*decoded);
  }

  DraStore& store_;
  std::map<std::string, T> DraStore::*objects_;
  Decode decode_;
  const char* kind_;
  std::map<std::string, T> listed_;
};

// Whether two versions of a claim (null: absent) allocate the same devices: the inventory reads
// nothing else of a claim, so an event that changes neither is no change to it.
bool same_allocation(const model::ResourceClaim* a, const model::ResourceClaim* b) {
  static const std::vector<model::DeviceResult> kNone;
  const auto& x = a && a->allocated ? a->results : kNone;
  const auto& y = b && b->allocated ? b->results : kNone;
  return x == y && (a && a->allocated) == (b && b->allocated);
}

}  // namespace

template <class T>
void DraStore::changed() {
  if constexpr (std::is_same_v<T, model::DeviceClass>) {
    std::vector<model::DeviceClass> classes;
    classes.reserve(classes_.size());
    for (const auto& [name, c] : classes_) classes.push_back(c);
    compiled_ = std::make_shared<const policy::DraClasses>(classes);
  } else {
    ++version_;
  }
}

template <class T>
void DraStore::replace(std::map<std::string, T> DraStore::*objects, std::map<std::string, T> listed) {
  std::lock_guard lock(mu_);
  this->*objects = std::move(listed);
  changed<T>();
}

template <class T>
void DraStore::upsert(std::map<std::string, T> DraStore::*objects, const std::string& key, std::optional<T> object) {
  std::lock_guard lock(mu_);
  auto& map = this->*objects;
  bool moved = true;
  if constexpr (std::is_same_v<T, model::ResourceClaim>) {
    auto it = map.find(key);
    moved = !same_allocation(it == map.end() ? nullptr : &it->second, object ? &*object : nullptr);
  }
  if (object) {
    map[key] = std::move(*object);
  } else {
    map.erase(key);
  }
  if constexpr (std::is_same_v<T, model::ResourceClaim>) {
    if (moved) claim_moved(key);
  } else {
    changed<T>();
  }
}

void DraStore::claim_moved(const std::string& key) {
  if (!live_current()) {
    pending_.insert(key);
    return;
  }
  auto it = claims_.find(key);
  live_->set_claim(key, it == claims_.end() ? nullptr : &it->second);
  published_ = live_->inventory();
}

std::unique_ptr<kube::ReflectorSink> DraStore::slice_sink() {
  return std::make_unique<DraSink<model::ResourceSlice>>(*this, &DraStore::slices_, &wire::decode_resource_slice,
                                                         "resourceslices");
}
std::unique_ptr<kube::ReflectorSink> DraStore::claim_sink() {
  return std::make_unique<DraSink<model::ResourceClaim>>(*this, &DraStore::claims_, &wire::decode_resource_claim,
                                                         "resourceclaims");
}
std::unique_ptr<kube::ReflectorSink> DraStore::class_sink() {
  return std::make_unique<DraSink<model::DeviceClass>>(*this, &DraStore::classes_, &wire::decode_device_class,
                                                       "deviceclasses");
}

std::shared_ptr<const model::DraInventory> DraStore::inventory() const {
  std::unique_lock build(build_mu_, std::defer_lock);
  {
    std::lock_guard lock(mu_);
    if (published_ && (live_current() || !build.try_lock())) return published_;
  }
  if (!build.owns_lock()) build.lock();
  std::vector<model::ResourceSlice> slices;
  std::map<std::string, model::ResourceClaim> claims;
  std::uint64_t version = 0;
  {
    std::lock_guard lock(mu_);
    if (published_ && live_current()) return published_;
    version = version_;
    for (const auto& [key, s] : slices_) slices.push_back(s);
    claims = claims_;
    pending_.clear();
  }
  auto live = std::make_unique<model::LiveDraInventory>(slices, claims, rules_);
  std::lock_guard lock(mu_);
  for (const std::string& key : pending_) {
    auto it = claims_.find(key);
    live->set_claim(key, it == claims_.end() ? nullptr : &it->second);
  }
  pending_.clear();
  live_ = std::move(live);
  live_version_ = version;
  published_ = live_->inventory();
  return published_;
}

std::shared_ptr<const policy::DraClasses> DraStore::compiled_classes() const {
  std::lock_guard lock(mu_);
  return compiled_;
}

std::vector<model::DeviceClass> DraStore::classes() const {
  std::lock_guard lock(mu_);
  std::vector<model::DeviceClass> out;
  for (const auto& [name, c] : classes_) out.push_back(c);
  return out;
}

}  // namespace extender::sources
