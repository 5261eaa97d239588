#pragma once
// DraStore (private to sources): the ResourceSlices, ResourceClaims and DeviceClasses the DRA
// reflectors deliver, decoded (objects that cannot be read are logged and dropped); the inventory
// built from the slices and claims, rebuilt on the first read after what it reads changed (a
// slice, or a claim's allocation: an event that changes neither, such as an unallocated claim
// updated, costs no rebuild; one rebuild at a time, reads meanwhile take the previous one); the
// classes compiled (policy::DraClasses) as each DeviceClass list or event arrives. Both are
// immutable shared snapshots. Thread-safe: the sinks write from the reflector threads while
// lookups read from any thread.
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
#include "extender/policy/dra_demand.h"

namespace extender::sources {

class DraStore {
 public:
  explicit DraStore(model::DraRules rules) : rules_(std::move(rules)) {}

  std::unique_ptr<kube::ReflectorSink> slice_sink();
  std::unique_ptr<kube::ReflectorSink> claim_sink();
  std::unique_ptr<kube::ReflectorSink> class_sink();

  std::shared_ptr<const model::DraInventory> inventory() const;
  std::vector<model::DeviceClass> classes() const;
  // classes() compiled; never null.
  std::shared_ptr<const policy::DraClasses> compiled_classes() const;

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
  std::shared_ptr<const policy::DraClasses> compiled_ = std::make_shared<const policy::DraClasses>();
  // Called with mu_ held after the objects of kind T changed.
  template <class T>
  void changed();
  std::uint64_t version_ = 0;  // of the slices and claims
  mutable std::uint64_t built_version_ = UINT64_MAX;
  mutable std::shared_ptr<const model::DraInventory> built_;
  mutable bool building_ = false;  // a verb is rebuilding built_; the others take built_ meanwhile
};

}  // namespace extender::sources
