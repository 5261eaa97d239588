#pragma once
// The kinds of object the daemon watches in kubernetes mode, in one table, and the rights its
// role needs for them and for its writes. KubeCluster builds one reflector per row (the row's
// sink in kube_cluster.cpp decodes it into its store) and probes each optional group before
// watching it; /readyz names the rows by resource; the test API server serves every row; a test
// checks the RBAC of the chart and of deploy/ against rbac_rules(). Adding a watched kind is a
// row here and its sink. Constant data; the functions are pure.
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace extender::sources {

enum class Kind {
  kNodes,
  kPods,
  kClaims,
  kClasses,
  kResourceSlices,
  kResourceClaims,
  kDeviceClasses,
  kCsiDrivers,
  kCapacities,
  kVolumes,
  kAvailableCapacities,
  kCapacityReservations,
  kBaremetalVolumes,
  kPodGroups,
};

// Required kinds are watched from the start. The others only once a list of one object of the
// group's first row shows the API server serves them and the role may read them.
enum class KindGroup { kRequired, kDra, kCapacity, kLocalVolumes, kBaremetal, kPodGroups };

struct WatchedKind {
  Kind kind;
  KindGroup group;
  std::string_view api_group;  // "" for the core group
  std::string_view version;
  std::string_view resource;        // plural, as in URLs and RBAC
  std::string_view field_selector;  // URL-encoded; empty: every object
};

inline constexpr std::array<WatchedKind, 14> kWatchedKinds{{
    {Kind::kNodes, KindGroup::kRequired, "", "v1", "nodes", ""},
    // As kube-scheduler's own pod informer: finished pods hold nothing.
    {Kind::kPods, KindGroup::kRequired, "", "v1", "pods", "status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed"},
    {Kind::kClaims, KindGroup::kRequired, "", "v1", "persistentvolumeclaims", ""},
    {Kind::kClasses, KindGroup::kRequired, "storage.k8s.io", "v1", "storageclasses", ""},
    {Kind::kResourceSlices, KindGroup::kDra, "resource.k8s.io", "v1", "resourceslices", ""},
    {Kind::kResourceClaims, KindGroup::kDra, "resource.k8s.io", "v1", "resourceclaims", ""},
    {Kind::kDeviceClasses, KindGroup::kDra, "resource.k8s.io", "v1", "deviceclasses", ""},
    // The group's first row is probed: csistoragecapacities, which servers before v1.24 lack.
    {Kind::kCapacities, KindGroup::kCapacity, "storage.k8s.io", "v1", "csistoragecapacities", ""},
    {Kind::kCsiDrivers, KindGroup::kCapacity, "storage.k8s.io", "v1", "csidrivers", ""},
    {Kind::kVolumes, KindGroup::kLocalVolumes, "", "v1", "persistentvolumes", ""},
    // csi-baremetal's kinds (its CRDs), served where it is installed.
    {Kind::kAvailableCapacities, KindGroup::kBaremetal, "csi-baremetal.dell.com", "v1", "availablecapacities", ""},
    {Kind::kCapacityReservations, KindGroup::kBaremetal, "csi-baremetal.dell.com", "v1",
     "availablecapacityreservations", ""},
    {Kind::kBaremetalVolumes, KindGroup::kBaremetal, "csi-baremetal.dell.com", "v1", "volumes", ""},
    // Pod groups (KEP-4671; served with the GenericWorkload gate and scheduling.k8s.io/v1beta1 on).
    {Kind::kPodGroups, KindGroup::kPodGroups, "scheduling.k8s.io", "v1beta1", "podgroups", ""},
}};

// What an optional group is called in /readyz and in the log, and what its absence means.
struct OptionalGroup {
  KindGroup group;
  std::string_view name;
  std::string_view without_it;  // the consequence, logged when the server or the role lacks it
};

inline constexpr std::array<OptionalGroup, 5> kOptionalGroups{{
    {KindGroup::kDra, "resource.k8s.io/v1", "DRA ResourceSlices, ResourceClaims and DeviceClasses are not watched"},
    {KindGroup::kCapacity, "storage.k8s.io/v1 csistoragecapacities",
     "the capacity CSI drivers publish is not read: storage classes are managed by storage.classes only"},
    {KindGroup::kLocalVolumes, "persistentvolumes", "local PersistentVolumes are not read"},
    {KindGroup::kBaremetal, "csi-baremetal.dell.com/v1",
     "csi-baremetal's drives are not read: claims of its classes are left to its own extender"},
    {KindGroup::kPodGroups, "scheduling.k8s.io/v1beta1 podgroups",
     "pod groups are not read: the holds of a gang kube-scheduler gave up end when they settle unpublished"},
}};

const WatchedKind& watched(Kind kind);
const OptionalGroup& optional_group(KindGroup group);
// The rows of a group, in table order.
std::vector<WatchedKind> kinds_of(KindGroup group);
// The collection's URL path: /api/v1/nodes, /apis/storage.k8s.io/v1/csidrivers.
std::string collection_path(const WatchedKind& kind);
// "get, list and watch a, b and c": the rights a group's rows need, for log lines.
std::string rights_phrase(KindGroup group);

// One right: a verb on a resource of an API group, limited to one object's name or not.
struct RbacRule {
  std::string_view api_group;
  std::string_view resource;
  std::string_view verb;
  std::string_view resource_name;  // empty: any object
  auto operator<=>(const RbacRule&) const = default;
};

// Rights that are not watches: the Binding of each pod the daemon binds, the merge patches of
// the records (a GPU share pod's device, a claim's device of a local pool), and csi-baremetal's
// reservations /filter writes and deletes.
inline constexpr std::array<RbacRule, 6> kClusterWrites{{
    {"", "pods/binding", "create", ""},
    {"", "pods", "patch", ""},
    {"", "persistentvolumeclaims", "patch", ""},
    {"csi-baremetal.dell.com", "availablecapacityreservations", "create", ""},
    {"csi-baremetal.dell.com", "availablecapacityreservations", "update", ""},
    {"csi-baremetal.dell.com", "availablecapacityreservations", "delete", ""},
}};

// The ClusterRole's rights: get, list and watch of every row, then kClusterWrites.
std::vector<RbacRule> cluster_role_rules();
// The leader-election Role's rights in its namespace: the Lease by name (create cannot be limited
// to a name), and the pods that carry the leader label (listed, and merge-patched).
std::vector<RbacRule> leader_election_rules(std::string_view lease_name);

}  // namespace extender::sources
