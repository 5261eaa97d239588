#include "extender/common/quantity.h"

#include <gtest/gtest.h>

#include <limits>

namespace extender {
namespace {

struct Case {
  const char* text;
  std::int64_t units;
  std::int64_t milli;
};

TEST(Quantity, ParsesTheKubernetesGrammar) {
  const Case cases[] = {
      {"0", 0, 0},
      {"1", 1, 1000},
      {"8", 8, 8000},
      {"95500m", 96, 95500},
      {"100m", 1, 100},
      {"0.5", 1, 500},
      {".5", 1, 500},
      {"1.", 1, 1000},
      {"+3", 3, 3000},
      {"1e3", 1000, 1'000'000},
      {"1E3", 1000, 1'000'000},
      {"1e-3", 1, 1},
      {"32Gi", 34359738368, 34359738368000},
      {"1175126712Ki", 1203329753088, 1203329753088000},
      {"1771063824739", 1771063824739, 1771063824739000},
      {"1k", 1000, 1'000'000},
      {"1M", 1'000'000, 1'000'000'000},
      {"2G", 2'000'000'000, 2'000'000'000'000},
      {"1T", 1'000'000'000'000, 1'000'000'000'000'000},
      {"1Mi", 1 << 20, (std::int64_t{1} << 20) * 1000},
      {"1.5Gi", 1610612736, 1610612736000},
      {"500Mi", 524288000, 524288000000},
      {"1n", 1, 1},
      {"1u", 1, 1},
      {"0.000000001", 1, 1},
      {"0.0000000001", 1, 1},  // below nano precision: rounds up, as Kubernetes does
      {"7Ei", 8070450532247928832, std::numeric_limits<std::int64_t>::max()},
      {"-1", -1, -1000},
      {"0.100000000000000000000000000000000000000000000", 1, 100},
  };
  for (const auto& c : cases) {
    auto q = Quantity::parse(c.text);
    ASSERT_TRUE(q) << c.text << ": " << q.message();
    EXPECT_EQ(q->units_ceil(), c.units) << c.text;
    EXPECT_EQ(q->milli_ceil(), c.milli) << c.text;
  }
}

TEST(Quantity, RejectsGarbageAndOverflow) {
  const char* bad[] = {
      "",
      "abc",
      "1x",
      "1Ki2",
      "1.2.3",
      "--1",
      "+",
      ".",
      "e3",
      "1e",
      "1ee3",
      "1e3.5",
      "1 Gi",
      " 1",
      "1 ",
      "1KiB",
      "1mi",
      "0x10",
      "1,5",
      "8Ei",
      "9223372036854775808",
      "1e19",
      "1e99999",
      "1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
      "1P1",
      "NaN",
      "Inf",
  };
  for (const char* text : bad) {
    EXPECT_FALSE(Quantity::parse(text)) << "accepted \"" << text << "\"";
  }
  std::string digits400(400, '7');
  EXPECT_FALSE(Quantity::parse(digits400));
}

TEST(Quantity, ComparesExactly) {
  EXPECT_EQ(*Quantity::parse("1Gi"), *Quantity::parse("1073741824"));
  EXPECT_EQ(*Quantity::parse("1000m"), *Quantity::parse("1"));
  EXPECT_LT(*Quantity::parse("999m"), *Quantity::parse("1"));
  EXPECT_EQ(*Quantity::parse("1e3"), *Quantity::parse("1k"));
}

TEST(ParseCount, RejectsNegativeAndNamesTheField) {
  auto r = parse_count("-2", "requests nvidia.com/gpu");
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("requests nvidia.com/gpu"), std::string::npos);
  auto garbage = parse_count("lots", "limits nvidia.com/gpu");
  ASSERT_FALSE(garbage);
  EXPECT_NE(garbage.message().find("\"lots\""), std::string::npos);
  EXPECT_EQ(*parse_count("2", "x"), 2);
}

TEST(SaturatingAdd, ClampsInsteadOfOverflowing) {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(saturating_add(kMax, 1), kMax);
  EXPECT_EQ(saturating_add(kMax - 1, 1), kMax);
  EXPECT_EQ(saturating_add(2, 3), 5);
}

}  // namespace
}  // namespace extender
