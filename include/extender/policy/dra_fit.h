#pragma once
// DraFit: the fit of a pod on a node when some of its GPUs may come from Dynamic Resource
// Allocation. A resource the pod asks is DRA-served on a node when a DeviceClass backs it
// (policy/dra_demand.h: extendedResourceName, or "deviceclass.resource.kubernetes.io/<class>"),
// the inventory lists DRA GPUs for the node (or a pool of it not yet complete), and the node has
// no device-plugin allocatable of that resource (nor an unreadable value for it).
// - A DRA-served resource is judged by DraJudge alone: the node is refused (kUnresolvable,
//   FitReason::kDraTooFewDevices) only when it has fewer matching devices in total than the pod
//   asks. Usage is left to the scheduler's own DRA filter; a need the judge cannot evaluate passes.
// - Everything else the pod asks is decided by check_fit exactly as without DRA; the allocation
//   holds no device-plugin GPUs of a DRA-served resource (the scheduler's DRA PreBind allocated them).
// - Preemption on such a node: evicting victims frees no DRA device the daemon counts (usage is
//   the scheduler's); it makes room when the node has enough matching devices in total and the
//   rest of the pod fits once the victims are gone (policy/preemption.h).
// - Each resource is judged apart: two resources backed by one class are not summed.
// Pure: no I/O, no locks. Built for one request, and used by one thread at a time (it remembers
// what it computed for one node for the next).
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extender/model/demand.h"
#include "extender/model/dra.h"
#include "extender/model/dra_inventory.h"
#include "extender/model/supply.h"
#include "extender/model/usage.h"
#include "extender/policy/dra_demand.h"
#include "extender/policy/fit.h"

namespace extender::policy {

class DraFit {
 public:
  // Neither `inventory` nor `classes` may be null; DraFit keeps both alive.
  DraFit(const model::PodDemand& pod, std::shared_ptr<const model::DraInventory> inventory,
         std::shared_ptr<const DraClasses> classes);
  DraFit(const DraFit&) = delete;
  DraFit& operator=(const DraFit&) = delete;

  // Whether the pod asks any resource a DeviceClass backs (else check() is check_fit()).
  bool empty() const { return judges_.empty(); }
  // Whether `node` gives any of the pod's resources from DRA (else check() is check_fit()).
  bool serves(const model::NodeSupply& node) const;
  // The pod's resources `node` gets from DRA, in name order.
  std::vector<std::string> dra_resources(const model::NodeSupply& node) const;
  // Whether `node`'s DRA devices could serve the pod's DRA-served resources there (as check()
  // judges them: enough matching devices in total; a need it cannot evaluate counts as served);
  // nullopt when no resource of the pod is DRA-served on `node`.
  std::optional<bool> dra_can_serve(const model::NodeSupply& node) const;
  // check_fit with the DRA-served resources judged as above. `pod` is the demand DraFit was built for.
  Fit check(const model::PodDemand& pod, const model::NodeSupply& node, const model::NodeUsage& usage,
            const GpuPlacement& gpu = {}) const;
  // The node as the scoring policies read it when the pod's GPUs come from DRA there, so that DRA
  // nodes and device-plugin nodes rank on one scale: each DRA-served resource offered as the
  // node's DRA GPUs (allocatable: the GPUs of its complete pools; used: those allocated; memory per
  // GPU: the smallest device's, when every device gives one), and those GPUs as its devices, an
  // allocated one held whole. nullopt when no resource of the pod is DRA-served on `node`.
  struct ScoringView {
    model::NodeSupply supply;
    model::NodeUsage usage;
  };
  std::optional<ScoringView> scoring_view(const model::NodeSupply& node, const model::NodeUsage& usage) const;
  // scoring_view without copying the usage: the view's usage is `usage` moved from (left valid,
  // unspecified) when a view is returned; on nullopt `usage` is untouched.
  std::optional<ScoringView> take_scoring_view(const model::NodeSupply& node, model::NodeUsage& usage) const;
  // policy::eviction_makes_room with the DRA-served resources judged as check() judges them.
  bool eviction_makes_room(const model::PodDemand& pod, const model::NodeSupply& node, const model::NodeUsage& usage,
                           std::span<const model::Allocation> victims) const;

 private:
  // The pod's resources `node` gets from DRA (keys of judges_; valid until the next call), and the
  // node's DRA entry (set when the result is not empty).
  using Served = std::vector<const std::string*>;
  const Served& served_on(const model::NodeSupply& node, const model::NodeDra*& dra) const;
  // The refusal of a node with DRA entry `dra` for the DRA-served resources `served`, or nullopt.
  std::optional<Fit> refusal(const Served& served, const model::NodeDra& dra) const;

  // `pod` without the resources `served` (the last such demand is kept: nodes mostly agree).
  const model::PodDemand& rest_of(const model::PodDemand& pod, const Served& served) const;

  std::shared_ptr<const model::DraInventory> inventory_;
  mutable Served served_;
  mutable std::optional<model::PodDemand> rest_;
  mutable Served rest_served_;
  std::shared_ptr<const DraClasses> classes_;            // the judges point into it
  std::map<std::string, DraJudge, std::less<>> judges_;  // by the pod's resource
};

}  // namespace extender::policy
