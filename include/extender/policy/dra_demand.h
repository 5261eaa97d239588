#pragma once
// What a pod asks of DRA, and the filter's one rule for it: refuse a DRA node only when it has
// fewer devices in total matching a need than the need asks (usage is left to the scheduler's
// own DRA filter, whose view is newer). A need comes from an extended resource a DeviceClass
// backs (its extendedResourceName, or the implicit "deviceclass.resource.kubernetes.io/<class>")
// or from a claim request (exactly, or firstAvailable alternatives: the need is met when any one
// is). Devices counted are the node's GPUs and partitions (model/dra_inventory.h); already
// allocated claims ask nothing more. Needs with the same single choice are summed (their devices
// must differ). A need passes unjudged, named in `unjudged`, when a selector is unsupported or
// errs on a device, its class is unknown, the node has an incomplete pool, or the choice matches
// no device of any node (its devices likely come from a driver the daemon does not watch).
// Pure. DraClasses is immutable once built and thread-safe to share. DraJudge remembers each
// choice's count per NodeDra::selector_key (nodes of the same hardware are evaluated once), so
// one thread at a time may use it: it is built for one request.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "extender/model/dra.h"
#include "extender/model/dra_inventory.h"
#include "extender/policy/device_selector.h"

namespace extender::policy {

struct CompiledClass {
  std::string name;
  std::vector<DeviceSelector> selectors;
  std::string extended_resource;
};

class DraClasses {
 public:
  DraClasses() = default;
  explicit DraClasses(const std::vector<model::DeviceClass>& classes);
  bool empty() const { return by_name_.empty(); }
  const CompiledClass* find(std::string_view name) const;
  // The class backing an extended resource: the explicit name wins (of several, the first by
  // class name), else "deviceclass.resource.kubernetes.io/<class>".
  const CompiledClass* for_extended_resource(std::string_view resource) const;

 private:
  std::map<std::string, CompiledClass, std::less<>> by_name_;
};

struct DraChoice {
  std::string device_class;
  std::vector<std::string> selectors;  // the request's own, on top of the class's
  std::int64_t count = 1;
  bool all = false;  // allocationMode All: at least one matching device
};

struct DraNeed {
  std::string label;               // e.g. "nvidia.com/gpu" or "ml/claim request gpus"
  std::vector<DraChoice> choices;  // any one suffices
};

// `count` devices of the class backing `resource`; nullopt when no class backs it.
std::optional<DraNeed> need_for_extended_resource(const DraClasses& classes, std::string_view resource,
                                                  std::int64_t count);
// The requests of a claim not yet allocated (an allocated claim asks nothing more).
std::vector<DraNeed> needs_for_claim(const model::ResourceClaim& claim);

struct DraVerdict {
  bool fits = true;
  std::string reason;                 // when it does not fit: "<label>: pod needs N, node has M matching devices"
  std::vector<std::string> unjudged;  // needs passed unjudged, with why
};

class DraJudge {
 public:
  DraJudge(const DraClasses& classes, const model::DraInventory& inventory, std::vector<DraNeed> needs);
  DraVerdict judge(const model::NodeDra& node) const;

 private:
  struct Count {
    std::optional<std::int64_t> matching;  // nullopt: cannot say
    std::string why;
  };
  struct Choice {
    DraChoice spec;
    const CompiledClass* cls = nullptr;
    std::vector<DeviceSelector> selectors;  // the request's own
    std::string unjudged;                   // set when it can never be judged
    mutable std::unordered_map<std::uint64_t, Count> by_selector_key;
  };
  struct Need {
    std::string label;
    std::vector<Choice> choices;
  };
  // Matching devices of the node for the choice; nullopt (and why) when it cannot say.
  std::optional<std::int64_t> matching(const Choice& c, const model::NodeDra& node, std::string& why) const;
  static std::optional<std::int64_t> evaluate(const Choice& c, const model::NodeDra& node, std::string& why);

  std::vector<Need> needs_;
};

}  // namespace extender::policy
