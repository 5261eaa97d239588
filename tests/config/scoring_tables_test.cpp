// The packing strategies and the scorers are named once, in their policy tables: the config, the
// chart's values schema and the error messages follow the tables.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "extender/config/config.h"
#include "extender/policy/packing.h"
#include "extender/policy/score.h"

namespace extender::config {
namespace {

nlohmann::json chart_scoring_schema() {
  std::ifstream in(std::string(EXTENDER_SOURCE_DIR) + "/charts/scheduler-extender/values.schema.json");
  EXPECT_TRUE(in) << "values.schema.json not found";
  const nlohmann::json schema = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json::json_pointer scoring("/properties/config/properties/scoring/properties");
  if (!schema.is_object() || !schema.contains(scoring)) return nlohmann::json::object();
  return schema.at(scoring);
}

TEST(ScoringTables, TheChartSchemaOffersExactlyThePackingTablesNames) {
  std::vector<std::string> names;
  for (const auto& p : policy::packing_policies()) names.push_back(p.name);
  const nlohmann::json schema = chart_scoring_schema();
  ASSERT_TRUE(schema.contains("gpu_packing"));
  EXPECT_EQ(schema["gpu_packing"].value("enum", nlohmann::json::array()).get<std::vector<std::string>>(), names);
}

TEST(ScoringTables, TheChartSchemaHasEveryScorersWeightWithItsBounds) {
  const nlohmann::json schema = chart_scoring_schema();
  for (const policy::Scorer& scorer : policy::scorers()) {
    ASSERT_TRUE(schema.contains(scorer.weight_key)) << scorer.weight_key;
    EXPECT_EQ(schema[scorer.weight_key].value("minimum", -1), 0) << scorer.weight_key;
    EXPECT_EQ(schema[scorer.weight_key].value("maximum", -1), policy::kMaxScorerWeight) << scorer.weight_key;
  }
}

TEST(ScoringTables, EveryScorersWeightIsReadFromItsKeyAndBounded) {
  for (const policy::Scorer& scorer : policy::scorers()) {
    const std::string key = scorer.weight_key;
    auto c = parse_config("scoring:\n  " + key + ": 7\n", "test");
    ASSERT_TRUE(c) << key << ": " << c.message();
    EXPECT_EQ(c->scoring.*scorer.weight, 7) << key;
    auto over = parse_config("scoring:\n  " + key + ": 1000001\n", "test");
    ASSERT_FALSE(over) << key;
    EXPECT_NE(over.message().find("at most 1000000"), std::string::npos) << over.message();
  }
}

TEST(ScoringTables, EveryPackingNameParsesAndAnUnknownOneListsThemAll) {
  for (const auto& p : policy::packing_policies()) {
    auto c = parse_config(std::string("scoring:\n  gpu_packing: ") + p.name + "\n", "test");
    ASSERT_TRUE(c) << p.name << ": " << c.message();
    EXPECT_EQ(c->scoring.packing, p.strategy);
  }
  auto c = parse_config("scoring:\n  gpu_packing: tight\n", "test");
  ASSERT_FALSE(c);
  EXPECT_NE(c.message().find("expected " + policy::packing_names()), std::string::npos) << c.message();
  for (const auto& p : policy::packing_policies()) EXPECT_NE(c.message().find(p.name), std::string::npos) << p.name;
}

// The daemon configuration of the chart's default rendering (deploy/ is that rendering; the
// chart_deploy test holds it to the chart).
std::string chart_default_config() {
  for (const YAML::Node& doc :
       YAML::LoadAllFromFile(std::string(EXTENDER_SOURCE_DIR) + "/deploy/scheduler-extender.yaml")) {
    if (doc["kind"] && doc["kind"].as<std::string>() == "ConfigMap" && doc["data"]["config.yaml"]) {
      return doc["data"]["config.yaml"].as<std::string>();
    }
  }
  return "";
}

TEST(ScoringTables, TheChartShipsTheRecommendedPlacementSetup) {
  // docs/placement.md, "Which policy to run": fragmentation over a 600-pod mix weighted by size^2,
  // blended with best-fit at 0.05, bins of 4 GPUs where CPU is scarcer, with the every-pod entry.
  auto c = parse_config(chart_default_config(), "deploy/scheduler-extender.yaml");
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(c->scoring.packing, policy::PackingStrategy::kFragmentation);
  EXPECT_EQ(c->scoring.fragmentation_window, 600);
  EXPECT_DOUBLE_EQ(c->scoring.fragmentation_size_exponent, 2);
  EXPECT_DOUBLE_EQ(c->scoring.fragmentation_fit_weight, 0.05);
  EXPECT_DOUBLE_EQ(c->scoring.fragmentation_cpu_scarce_bin, 4);
}

}  // namespace
}  // namespace extender::config
