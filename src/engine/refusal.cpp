#include "extender/engine/refusal.h"

namespace extender::engine {

const char* refusal_name(Refusal r) {
  switch (r) {
    case Refusal::kNone: return "none";
    case Refusal::kUnknownPod: return "unknown_pod";
    case Refusal::kBound: return "already_bound";
    case Refusal::kTerminating: return "terminating";
    case Refusal::kOtherScheduler: return "other_scheduler";
    case Refusal::kNothingManaged: return "nothing_managed";
    case Refusal::kNameMismatch: return "name_mismatch";
    case Refusal::kNodeIneligible: return "node_ineligible";
    case Refusal::kNotFiltered: return "not_filtered";
    case Refusal::kCount: break;
  }
  return "?";
}

}  // namespace extender::engine
