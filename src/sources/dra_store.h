#pragma once
// DraStore (private to sources): the ResourceSlices, ResourceClaims and DeviceClasses the DRA
// reflectors deliver, decoded (objects that cannot be read are logged and dropped); the inventory
// of the slices and claims (model::LiveDraInventory):
// - a change of a claim's allocation is applied as it arrives: only the nodes of the devices it
//   allocates or releases are copied, the next inventory shares every other node; a claim event
//   that changes no allocation (an unallocated claim updated) changes nothing;
// - a slice event or a new list of claims makes it rebuilt whole, on the first read after (one
//   rebuild at a time; reads meanwhile take the previous inventory; the claims changed during the
//   rebuild are applied to it before it is published);
// the classes compiled (policy::DraClasses) as each DeviceClass list or event arrives. Both are
// immutable shared snapshots. Thread-safe: the sinks write from the reflector threads while
// lookups read from any thread.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "extender/kube/reflector.h"
#include "extender/model/dra.h"
#include "extender/model/dra_inventory.h"
#include "extender/model/live_dra_inventory.h"
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
  // Called with mu_ held after the claim of `key` changed its allocation.
  void claim_moved(const std::string& key);
  bool live_current() const { return live_ && live_version_ == version_; }

  std::uint64_t version_ = 0;    // bumped when the inventory must be rebuilt whole
  mutable std::mutex build_mu_;  // held by the one rebuild at a time, taken before mu_
  mutable std::unique_ptr<model::LiveDraInventory> live_;
  mutable std::uint64_t live_version_ = 0;
  mutable std::shared_ptr<const model::DraInventory> published_;  // what reads take; null before the first build
  mutable std::set<std::string> pending_;  // claims moved while live_ was not current, since the last rebuild began
};

}  // namespace extender::sources
