#include "extender/sources/watched_kinds.h"

#include <algorithm>

namespace extender::sources {

const WatchedKind& watched(Kind kind) {
  return *std::find_if(kWatchedKinds.begin(), kWatchedKinds.end(),
                       [kind](const WatchedKind& k) { return k.kind == kind; });
}

const OptionalGroup& optional_group(KindGroup group) {
  return *std::find_if(kOptionalGroups.begin(), kOptionalGroups.end(),
                       [group](const OptionalGroup& g) { return g.group == group; });
}

std::vector<WatchedKind> kinds_of(KindGroup group) {
  std::vector<WatchedKind> out;
  for (const WatchedKind& k : kWatchedKinds) {
    if (k.group == group) out.push_back(k);
  }
  return out;
}

std::string collection_path(const WatchedKind& kind) {
  std::string path = kind.api_group.empty() ? "/api/" : "/apis/" + std::string(kind.api_group) + "/";
  return path + std::string(kind.version) + "/" + std::string(kind.resource);
}

std::string rights_phrase(KindGroup group) {
  const std::vector<WatchedKind> kinds = kinds_of(group);
  std::string out = "get, list and watch ";
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) out += i + 1 == kinds.size() ? " and " : ", ";
    out += kinds[i].resource;
  }
  return out;
}

std::vector<RbacRule> cluster_role_rules() {
  std::vector<RbacRule> out;
  for (const WatchedKind& k : kWatchedKinds) {
    for (std::string_view verb : {"get", "list", "watch"}) out.push_back({k.api_group, k.resource, verb, ""});
  }
  out.insert(out.end(), kClusterWrites.begin(), kClusterWrites.end());
  return out;
}

std::vector<RbacRule> leader_election_rules(std::string_view lease_name) {
  return {
      {"coordination.k8s.io", "leases", "get", lease_name},
      {"coordination.k8s.io", "leases", "update", lease_name},
      {"coordination.k8s.io", "leases", "create", ""},
      {"", "pods", "get", ""},
      {"", "pods", "list", ""},
      {"", "pods", "patch", ""},
  };
}

}  // namespace extender::sources
