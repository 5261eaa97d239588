#include "extender/wire/results.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "extender/wire/json_text.h"

namespace extender::wire {
namespace {

TEST(EncodeFilterResult, NodeNamesFormMatchesGo) {
  FilterResult r;
  r.node_names = std::vector<std::string_view>{"gpu-node-a"};
  r.failed.add("gpu-node-b", "nvidia.com/gpu: pod needs 2, node has 1 free of 4");
  EXPECT_EQ(
      encode_filter_result(r),
      R"({"Nodes":null,"NodeNames":["gpu-node-a"],"FailedNodes":{"gpu-node-b":"nvidia.com/gpu: pod needs 2, node has 1 free of 4"},"FailedAndUnresolvableNodes":{},"Error":""})");
}

TEST(EncodeFilterResult, NodesFormEchoesRawBytes) {
  FilterResult r;
  r.node_objects =
      std::vector<std::string_view>{R"({"metadata":{"name":"a"},"x": [1, 2]})", R"({"metadata":{"name":"b"}})"};
  r.failed_unresolvable.add("c", "pool local: pod needs 1 GiB, node has no such pool");
  r.failed.add("b2", "x");
  r.failed.add("a2", "y");
  EXPECT_EQ(
      encode_filter_result(r),
      R"({"Nodes":{"metadata":{},"items":[{"metadata":{"name":"a"},"x": [1, 2]},{"metadata":{"name":"b"}}]},"NodeNames":null,)"
      R"("FailedNodes":{"a2":"y","b2":"x"},"FailedAndUnresolvableNodes":{"c":"pool local: pod needs 1 GiB, node has no such pool"},"Error":""})");
}

TEST(FailedNodes, NameOrderLastReasonWinsAndARepeatedReasonIsKeptOnce) {
  FailedNodes f;
  const std::uint32_t no_gpu = f.add("n-c", "no GPU");
  f.add_again("n-a", no_gpu);
  f.add("n-b", "too small");
  f.add("n-a", "too small");  // recorded again: the last reason wins
  f.add_again("n-d", no_gpu);
  EXPECT_THROW(f.add_again("n-e", 7), std::out_of_range);
  EXPECT_EQ(f.size(), 5u);
  EXPECT_EQ(f.at("n-a"), "too small");
  EXPECT_EQ(f.at("n-c"), "no GPU");
  EXPECT_EQ(f.count("n-e"), 0u);
  EXPECT_THROW((void)f.at("n-e"), std::out_of_range);
  std::vector<std::pair<std::string, std::string>> got;
  for (const auto& [name, why] : f.sorted()) got.emplace_back(name, *why);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"n-a", "too small"}, {"n-b", "too small"}, {"n-c", "no GPU"}, {"n-d", "no GPU"}};
  EXPECT_EQ(got, want);
  // Reasons recorded one after the other share their text.
  EXPECT_EQ(f.find("n-a"), f.find("n-b"));
  FailedNodes copy = f;
  EXPECT_EQ(copy.at("n-d"), "no GPU");
}

// Nodes recorded with their place in name order come out as name order would put them, the last
// reason of a name winning; one node without a place puts them in order by name.
TEST(FailedNodes, OrderGivenByTheCallerSortsAsTheNames) {
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) names.push_back("gke-prod-gpu-a100-pool-" + std::to_string((i * 7919) % 1000));
  std::vector<std::string> sorted_names = names;
  std::sort(sorted_names.begin(), sorted_names.end());
  sorted_names.erase(std::unique(sorted_names.begin(), sorted_names.end()), sorted_names.end());
  auto place = [&](const std::string& n) {
    return static_cast<std::uint32_t>(std::lower_bound(sorted_names.begin(), sorted_names.end(), n) -
                                      sorted_names.begin());
  };
  for (bool one_unordered : {false, true}) {
    FailedNodes by_place;
    FailedNodes by_name;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string reason = "reason " + std::to_string(i % 3);
      const std::uint32_t order = one_unordered && i == 150 ? FailedNodes::kUnordered : place(names[i]);
      by_place.add(names[i], reason, {order, false});
      by_name.add(names[i], reason);
    }
    by_place.add(names[10], "last word", {place(names[10]), false});
    by_name.add(names[10], "last word");
    std::vector<std::pair<std::string, std::string>> got, want;
    for (const auto& [n, why] : by_place.sorted()) got.emplace_back(n, *why);
    for (const auto& [n, why] : by_name.sorted()) want.emplace_back(n, *why);
    ASSERT_EQ(want.size(), sorted_names.size());
    EXPECT_TRUE(std::is_sorted(want.begin(), want.end()));
    EXPECT_EQ(got, want) << (one_unordered ? "one node without a place" : "every node placed");
    EXPECT_EQ(by_place.at(names[10]), "last word");
    FilterResult a, b;
    a.failed = by_place;
    b.failed = by_name;
    EXPECT_EQ(encode_filter_result(a), encode_filter_result(b));
  }
}

// Names their producer vouches for are written as they are, without a scan: the same answer for
// names that need no escaping.
TEST(EncodeFilterResult, VouchedPlainNamesAreWrittenAsTheScanWouldWriteThem) {
  FilterResult scanned, vouched;
  for (auto* r : {&scanned, &vouched}) {
    r->node_names = std::vector<std::string_view>{"gpu-a.example", "gpu-b"};
    r->node_names_plain = r == &vouched;
    r->failed.add("gpu-c", "no <room>", {2, r == &vouched});
    r->failed_unresolvable.add("cpu-a", "no GPU", {0, r == &vouched});
  }
  EXPECT_TRUE(vouched.failed.names_plain());
  EXPECT_FALSE(scanned.failed.names_plain());
  EXPECT_EQ(encode_filter_result(vouched), encode_filter_result(scanned));
  EXPECT_EQ(encode_filter_result(vouched),
            R"({"Nodes":null,"NodeNames":["gpu-a.example","gpu-b"],"FailedNodes":{"gpu-c":"no \u003croom\u003e"},)"
            R"("FailedAndUnresolvableNodes":{"cpu-a":"no GPU"},"Error":""})");
  FailedNodes mixed;
  mixed.add("a", "x", {0, true});
  mixed.add("b<", "x", {1, false});
  EXPECT_FALSE(mixed.names_plain()) << "one name not vouched for: every name is scanned";
}

TEST(EncodeFilterResult, WholeCallError) {
  FilterResult r;
  r.error = "not ready";
  EXPECT_EQ(encode_filter_result(r),
            R"({"Nodes":null,"NodeNames":null,"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":"not ready"})");
}

TEST(EncodeHostPriorityList, BareArray) {
  EXPECT_EQ(encode_host_priority_list({{"gpu-node-a", 8}, {"gpu-node-b", 3}}),
            R"([{"Host":"gpu-node-a","Score":8},{"Host":"gpu-node-b","Score":3}])");
  EXPECT_EQ(encode_host_priority_list({}), "[]");
  EXPECT_EQ(encode_host_priority_list({{"a<b", -3}, {"", 10}}),
            R"([{"Host":"a\u003cb","Score":-3},{"Host":"","Score":10}])");
}

TEST(AboveLowest, ListsWhatRanksAboveTheLowestByHowMuch) {
  struct Row {
    const char* name;
    std::vector<HostScore> scores;
    std::vector<HostScore> want;
  };
  const Row rows[] = {
      {"none", {}, {}},
      {"all equal: nothing ranks above", {{"a", 10}, {"b", 10}, {"c", 10}}, {}},
      {"lowest already 0", {{"a", 0}, {"b", 7}, {"c", 0}, {"d", 10}}, {{"b", 7}, {"d", 10}}},
      {"lowest above 0: every gap kept", {{"a", 4}, {"b", 9}, {"c", 5}, {"d", 4}}, {{"b", 5}, {"c", 1}}},
      {"order kept", {{"z", 3}, {"y", 1}, {"x", 2}}, {{"z", 2}, {"x", 1}}},
  };
  for (const auto& row : rows) {
    const auto got = above_lowest(row.scores);
    ASSERT_EQ(got.size(), row.want.size()) << row.name;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].host, row.want[i].host) << row.name;
      EXPECT_EQ(got[i].score, row.want[i].score) << row.name;
    }
    // What kube-scheduler adds to each candidate (0 for a host left out) differs from the full
    // answer by one amount for every host, so every ranking stays as it was.
    if (row.scores.empty()) continue;
    std::optional<std::int64_t> shift;
    for (const auto& s : row.scores) {
      std::int64_t added = 0;
      for (const auto& g : got) {
        if (g.host == s.host) added = g.score;
      }
      if (!shift) shift = s.score - added;
      EXPECT_EQ(s.score - added, *shift) << row.name << ": " << s.host;
    }
  }
}

TEST(EncodeBindingResult, ErrorField) {
  EXPECT_EQ(encode_binding_result(""), R"({"Error":""})");
  EXPECT_EQ(encode_binding_result("pod \"a\" gone"), R"({"Error":"pod \"a\" gone"})");
}

TEST(EncodePreemptionResult, MetaVictimsSortedByNode) {
  std::map<std::string, MetaVictims> m;
  m["gpu-node-b"] = {{"c41e8b2d-7f3a-4a9c-b6e5-2d8f0a1c3e77"}, 0};
  EXPECT_EQ(
      encode_preemption_result(m),
      R"({"NodeNameToMetaVictims":{"gpu-node-b":{"Pods":[{"UID":"c41e8b2d-7f3a-4a9c-b6e5-2d8f0a1c3e77"}],"NumPDBViolations":0}}})");
  m["a"] = {{"u2", "u1"}, 3};
  EXPECT_EQ(encode_preemption_result(m),
            R"({"NodeNameToMetaVictims":{"a":{"Pods":[{"UID":"u2"},{"UID":"u1"}],"NumPDBViolations":3},)"
            R"("gpu-node-b":{"Pods":[{"UID":"c41e8b2d-7f3a-4a9c-b6e5-2d8f0a1c3e77"}],"NumPDBViolations":0}}})");
  EXPECT_EQ(encode_preemption_result({}), R"({"NodeNameToMetaVictims":{}})");
}

TEST(AppendJsonString, EscapesAsGoDoes) {
  struct Case {
    std::string in;
    std::string out;
  };
  const Case cases[] = {
      {"plain", R"("plain")"},
      {"a<b>&c", R"("a\u003cb\u003e\u0026c")"},
      {"q\"b\\", R"("q\"b\\")"},
      {"\n\r\t\b\f", R"("\n\r\t\b\f")"},
      {std::string("\x01\x1f", 2), R"("\u0001\u001f")"},
      {"\xc3\xa9", "\"\xc3\xa9\""},
      {"\xe2\x80\xa8\xe2\x80\xa9", R"("\u2028\u2029")"},
      {"bad \xff byte", R"("bad \ufffd byte")"},
      {"cut \xe2\x80", R"("cut \ufffd\ufffd")"},
      {"", R"("")"},
      {"gke-prod-gpu-a100-pool-940be3d4-83b8", R"("gke-prod-gpu-a100-pool-940be3d4-83b8")"},
      {"long plain run then <", R"("long plain run then \u003c")"},
  };
  for (const auto& c : cases) {
    std::string out;
    append_json_string(out, c.in);
    EXPECT_EQ(out, c.out);
    std::string after = "[1,";
    append_json_string(after, c.in);
    std::string expected = "[1,";
    expected += c.out;
    EXPECT_EQ(after, expected) << "appends, keeping what the buffer holds";
  }
}

// Every byte value at every offset of plain runs of the lengths the block, overlapping-tail, word and
// byte scans each see: the byte is escaped (or written as is) exactly as a lone byte is, and the run
// around it is untouched.
TEST(AppendJsonString, EachByteInsideLongPlainRuns) {
  for (int c = 0; c < 256; ++c) {
    std::string alone;
    append_json_string(alone, std::string(1, static_cast<char>(c)));
    const std::string escaped = alone.substr(1, alone.size() - 2);
    for (std::size_t size : {7, 16, 17, 31, 40}) {
      for (std::size_t at = 0; at < size; ++at) {
        std::string in(size, 'a');
        in[at] = static_cast<char>(c);
        std::string out;
        append_json_string(out, in);
        std::string expected(1, '"');
        expected.append(at, 'a').append(escaped).append(size - 1 - at, 'a').push_back('"');
        ASSERT_EQ(out, expected) << "byte " << c << " at " << at << " of " << size;
      }
    }
  }
}

TEST(KeyMatches, GoFolding) {
  EXPECT_TRUE(key_matches("Pod", "Pod"));
  EXPECT_TRUE(key_matches("pod", "Pod"));
  EXPECT_TRUE(key_matches("PoD", "Pod"));
  EXPECT_FALSE(key_matches("Pods", "Pod"));
  EXPECT_FALSE(key_matches("Po", "Pod"));
  EXPECT_TRUE(
      key_matches("\xe2\x84\xaa"
                  "ey",
                  "key"));                            // Kelvin sign folds to k
  EXPECT_TRUE(key_matches("Node\xc5\xbf", "Nodes"));  // long s folds to s
  EXPECT_FALSE(key_matches("N\xc5\xbf", "No"));
}

}  // namespace
}  // namespace extender::wire
