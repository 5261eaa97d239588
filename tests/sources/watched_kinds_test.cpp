#include "extender/sources/watched_kinds.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <set>

namespace extender::sources {
namespace {

TEST(WatchedKinds, EveryKindHasOneRowAndEveryOptionalGroupItsName) {
  std::set<Kind> seen;
  for (const WatchedKind& row : kWatchedKinds) {
    EXPECT_TRUE(seen.insert(row.kind).second) << row.resource << " has two rows";
    EXPECT_EQ(watched(row.kind).resource, row.resource);
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(Kind::kPodGroups) + 1);
  for (KindGroup group : {KindGroup::kDra, KindGroup::kCapacity, KindGroup::kLocalVolumes, KindGroup::kBaremetal,
                          KindGroup::kPodGroups}) {
    EXPECT_FALSE(kinds_of(group).empty());
    EXPECT_EQ(optional_group(group).group, group);
    EXPECT_FALSE(optional_group(group).name.empty());
  }
}

TEST(WatchedKinds, CollectionPathsAndRightsReadAsTheApiServerAndALogLineWant) {
  struct Row {
    Kind kind;
    std::string path;
  };
  for (const Row& row : std::vector<Row>{
           {Kind::kNodes, "/api/v1/nodes"},
           {Kind::kClasses, "/apis/storage.k8s.io/v1/storageclasses"},
           {Kind::kResourceSlices, "/apis/resource.k8s.io/v1/resourceslices"},
           {Kind::kVolumes, "/api/v1/persistentvolumes"},
           {Kind::kPodGroups, "/apis/scheduling.k8s.io/v1beta1/podgroups"},
           {Kind::kCapacityReservations, "/apis/csi-baremetal.dell.com/v1/availablecapacityreservations"}}) {
    EXPECT_EQ(collection_path(watched(row.kind)), row.path);
  }
  EXPECT_EQ(rights_phrase(KindGroup::kDra), "get, list and watch resourceslices, resourceclaims and deviceclasses");
  EXPECT_EQ(rights_phrase(KindGroup::kCapacity), "get, list and watch csistoragecapacities and csidrivers");
  EXPECT_EQ(rights_phrase(KindGroup::kLocalVolumes), "get, list and watch persistentvolumes");
  EXPECT_EQ(rights_phrase(KindGroup::kPodGroups), "get, list and watch podgroups");
}

// An RBAC rule's expansion: one right per (apiGroup, resource, verb, resourceName).
using Right = std::tuple<std::string, std::string, std::string, std::string>;

std::set<Right> rights_of(const YAML::Node& rules) {
  std::set<Right> out;
  for (const auto& rule : rules) {
    std::vector<std::string> names;
    if (rule["resourceNames"]) names = rule["resourceNames"].as<std::vector<std::string>>();
    if (names.empty()) names.push_back("");
    for (const auto& group : rule["apiGroups"]) {
      for (const auto& resource : rule["resources"]) {
        for (const auto& verb : rule["verbs"]) {
          for (const auto& name : names) {
            out.emplace(group.as<std::string>(), resource.as<std::string>(), verb.as<std::string>(), name);
          }
        }
      }
    }
  }
  return out;
}

std::set<Right> rights_of(const std::vector<RbacRule>& rules) {
  std::set<Right> out;
  for (const RbacRule& r : rules) {
    out.emplace(std::string(r.api_group), std::string(r.resource), std::string(r.verb), std::string(r.resource_name));
  }
  return out;
}

YAML::Node manifest(const std::string& kind, const std::string& name) {
  for (const YAML::Node& doc :
       YAML::LoadAllFromFile(std::string(EXTENDER_SOURCE_DIR) + "/deploy/scheduler-extender.yaml")) {
    if (doc["kind"] && doc["kind"].as<std::string>() == kind && doc["metadata"]["name"].as<std::string>() == name)
      return doc;
  }
  return {};
}

// deploy/ is the chart rendered with its defaults (the chart tests check they agree), so this
// holds the chart's RBAC to the table too.
TEST(WatchedKinds, TheManifestsGrantWhatTheTableNeedsAndNoMore) {
  const YAML::Node role = manifest("ClusterRole", "scheduler-extender");
  ASSERT_TRUE(role) << "deploy/scheduler-extender.yaml has no ClusterRole scheduler-extender";
  EXPECT_EQ(rights_of(role["rules"]), rights_of(cluster_role_rules()));

  const YAML::Node leader = manifest("Role", "scheduler-extender-leader-election");
  ASSERT_TRUE(leader) << "deploy/scheduler-extender.yaml has no leader-election Role";
  EXPECT_EQ(rights_of(leader["rules"]), rights_of(leader_election_rules("scheduler-extender")));
}

}  // namespace
}  // namespace extender::sources
