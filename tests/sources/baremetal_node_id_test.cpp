// A node's csi-baremetal id, as csi-baremetal's node controller and extender resolve it: the
// annotation its chart's default writes when the node carries it, else the node's UID; an
// annotation configured overrides both; a node outside the node selector has none.
#include <gtest/gtest.h>

#include "extender/sources/baremetal_node_id.h"

namespace extender::sources {
namespace {

struct Case {
  const char* name;
  model::StringMap annotations;
  model::StringMap labels;
  std::string override_key;
  model::StringMap selector;
  std::string id;
  std::string source;
};

TEST(BaremetalNodeId, ResolvedAsCsiBaremetalDoes) {
  const Case cases[] = {
      {"annotated by csi-baremetal's node controller",
       {{kNodeUuidAnnotation, "5b1e-uuid"}},
       {},
       "",
       {},
       "5b1e-uuid",
       "annotation nodes.csi-baremetal.dell.com/uuid"},
      {"not annotated: its UID", {}, {}, "", {}, "uid-1", "UID"},
      {"the annotation empty: its UID", {{kNodeUuidAnnotation, ""}}, {}, "", {}, "uid-1", "UID"},
      {"an older key is not csi-baremetal's", {{"csi-baremetal.dell.com/uuid", "x"}}, {}, "", {}, "uid-1", "UID"},
      {"the override wins over the default annotation",
       {{kNodeUuidAnnotation, "5b1e-uuid"}, {"example.com/id", "ext-7"}},
       {},
       "example.com/id",
       {},
       "ext-7",
       "annotation example.com/id"},
      {"the override's annotation missing: none, not the UID",
       {{kNodeUuidAnnotation, "5b1e-uuid"}},
       {},
       "example.com/id",
       {},
       "",
       "none: no annotation example.com/id (storage.baremetal.node_id_annotation)"},
      {"inside the node selector",
       {{kNodeUuidAnnotation, "u"}},
       {{"disks", "yes"}},
       "",
       {{"disks", "yes"}},
       "u",
       "annotation nodes.csi-baremetal.dell.com/uuid"},
      {"outside the node selector",
       {{kNodeUuidAnnotation, "u"}},
       {{"disks", "no"}},
       "",
       {{"disks", "yes"}},
       "",
       "none: outside storage.baremetal.node_selector"},
  };
  for (const Case& c : cases) {
    model::Node node;
    node.name = "n1";
    node.uid = "uid-1";
    node.annotations = c.annotations;
    node.labels = c.labels;
    BaremetalOptions options;
    options.node_id_annotation = c.override_key;
    options.node_selector = c.selector;
    const BaremetalNodeId got = baremetal_node_id(node, options);
    EXPECT_EQ(got.id, c.id) << c.name;
    EXPECT_EQ(got.source, c.source) << c.name;
  }
}

}  // namespace
}  // namespace extender::sources
