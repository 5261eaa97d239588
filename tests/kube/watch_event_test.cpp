// parse_watch_event: the type and object of a watch line, and the refusals (not JSON, not an
// object, nested too deep) that must happen before any recursive parse.
#include "extender/kube/watch_event.h"

#include <gtest/gtest.h>

namespace extender::kube {
namespace {

using nlohmann::json;

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(WatchEvent, DecodesTypeAndObject) {
  struct Case {
    std::string line;
    std::string type;
    json object;
  };
  const std::vector<Case> cases = {
      {R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"5"}}})", "ADDED",
       json{{"metadata", {{"name", "a"}, {"resourceVersion", "5"}}}}},
      {R"({"object":{"kind":"Status","code":410},"type":"ERROR"})", "ERROR", json{{"kind", "Status"}, {"code", 410}}},
      {R"({"type":"BOOKMARK"})", "BOOKMARK", nullptr},
      {R"({"type":7,"object":[1]})", "", json::array({1})},
      {"{}", "", nullptr},
      {"{\"type\":\"ADDED\",\"object\":" + nested(kMaxJsonNesting - 1) + "}", "ADDED",
       json::parse(nested(kMaxJsonNesting - 1))},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.line.substr(0, 80));
    auto ev = parse_watch_event(c.line);
    ASSERT_TRUE(ev) << ev.message();
    EXPECT_EQ(ev->type, c.type);
    EXPECT_EQ(ev->object, c.object);
  }
}

TEST(WatchEvent, RefusesWhatIsNotAnEventOrNestsTooDeep) {
  struct Case {
    std::string line;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"this is not json", "not a JSON event"},
      {"[1,2,3]", "not a JSON event"},
      {"\"ADDED\"", "not a JSON event"},
      {"{\"type\":\"ADDED\",", "not a JSON event"},
      {"{\"type\":\"ADDED\",\"object\":" + nested(kMaxJsonNesting) + "}", "nested deeper than 128 levels"},
      {"{\"type\":\"ADDED\",\"object\":" + nested(50'000) + "}", "nested deeper than 128 levels"},
      // Unclosed: refused before the parser would build (and tear down) 50,000 levels.
      {"{\"type\":\"ADDED\",\"object\":" + std::string(50'000, '{'), "nested deeper than 128 levels"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.line.substr(0, 80));
    auto ev = parse_watch_event(c.line);
    ASSERT_FALSE(ev);
    EXPECT_NE(ev.message().find(c.error), std::string::npos) << ev.message();
  }
}

TEST(WatchEvent, ParseBoundedDiscardsDeepOrMalformedText) {
  EXPECT_EQ(parse_bounded(R"({"code":410})"), (json{{"code", 410}}));
  EXPECT_TRUE(parse_bounded("{\"code\":410,\"details\":" + nested(50'000) + "}").is_discarded());
  EXPECT_TRUE(parse_bounded("not json").is_discarded());
}

}  // namespace
}  // namespace extender::kube
