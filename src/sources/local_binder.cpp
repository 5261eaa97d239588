#include "extender/sources/local_binder.h"

namespace extender::sources {

std::string LocalBinder::bind(const wire::BindingArgs& args, engine::Deadline) {
  auto claim = state_.claim_of(args.pod_uid);
  if (!claim || claim->node != args.node) {
    return "pod " + args.pod_namespace + "/" + args.pod_name + " holds no reservation on node " + args.node;
  }
  if (claim->kind == state::Claim::Kind::kPlaced) return {};
  claim->expires = {};
  state_.place(args.pod_uid, std::move(*claim));
  return {};
}

}  // namespace extender::sources
