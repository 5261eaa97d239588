#pragma once
// DraStore (private to sources): the ResourceSlices, ResourceClaims and DeviceClasses the DRA
// reflectors deliver, decoded (objects that cannot be read are logged and dropped), and the
// inventory built from them, rebuilt only after a change. Thread-safe: the sinks write from the
// reflector threads while lookups read from any thread.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "extender/kube/reflector.h"
#include "extender/model/dra.h"
#include "extender/model/dra_inventory.h"

namespace extender::sources {

class DraStore {
 public:
  explicit DraStore(model::DraRules rules) : rules_(std::move(rules)) {}

  std::unique_ptr<kube::ReflectorSink> slice_sink();
  std::unique_ptr<kube::ReflectorSink> claim_sink();
  std::unique_ptr<kube::ReflectorSink> class_sink();

  std::shared_ptr<const model::DraInventory> inventory() const;
  std::vector<model::DeviceClass> classes() const;

  // Replaces, updates or erases objects of one kind under the store's lock.
  template <class T>
  void replace(std::map<std::string, T> DraStore::*objects, std::map<std::string, T> listed);
  template <class T>
  void upsert(std::map<std::string, T> DraStore::*objects, const std::string& key, std::optional<T> object);

 private:
  model::DraRules rules_;
  mutable std::mutex mu_;
  std::map<std::string, model::ResourceSlice> slices_;  // by name
  std::map<std::string, model::ResourceClaim> claims_;  // by namespace/name
  std::map<std::string, model::DeviceClass> classes_;   // by name
  std::uint64_t version_ = 0;
  mutable std::uint64_t built_version_ = UINT64_MAX;
  mutable std::shared_ptr<const model::DraInventory> built_;
};

}  // namespace extender::sources
