#include "extender/http/body_budget.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace extender::http {
namespace {

TEST(BodyBudget, APeerSpendsItsOwnShareAndTheTotalBoundsEveryone) {
  BodyBudget budget(100, 60);
  std::size_t a1 = 0, a2 = 0, b1 = 0, c1 = 0;
  struct Step {
    const char* name;
    std::string peer;
    std::size_t* held;
    std::size_t bytes;
    BodyBudget::Fit fit;
    std::size_t used;
  };
  using Fit = BodyBudget::Fit;
  const std::vector<Step> steps = {
      {"a takes 40", "a", &a1, 40, Fit::kFits, 40},
      {"a's second holder may not pass a's share", "a", &a2, 30, Fit::kOverShare, 40},
      {"a's second holder within the share", "a", &a2, 20, Fit::kFits, 60},
      {"b within its share but not the total", "b", &b1, 50, Fit::kOverTotal, 60},
      {"b within both", "b", &b1, 40, Fit::kFits, 100},
      {"shrinking always fits", "a", &a1, 10, Fit::kFits, 70},
      {"c takes what a gave back", "c", &c1, 30, Fit::kFits, 100},
      {"a holder growing in place counts once", "c", &c1, 30, Fit::kFits, 100},
  };
  for (const Step& s : steps) {
    EXPECT_EQ(budget.set(s.peer, *s.held, s.bytes), s.fit) << s.name;
    EXPECT_EQ(budget.used(), s.used) << s.name;
  }
  EXPECT_EQ(budget.used_by("a"), 30u);
  budget.force("b", b1, 0);
  budget.force("a", a1, 0);
  budget.force("a", a2, 0);
  budget.force("c", c1, 0);
  EXPECT_EQ(budget.used(), 0u);
  EXPECT_EQ(budget.used_by("a"), 0u);
}

TEST(BodyBudget, ChargesAndSharesFollowTheLimits) {
  struct Row {
    std::size_t total, max_body, bytes, charge, share;
  };
  const std::vector<Row> rows = {
      {1000, 100, 10, 25, 500},     // a body and its decoded structures: 2.5 times
      {1000, 100, 900, 1000, 500},  // at most the whole budget
      {1000, 300, 0, 0, 750},       // a share fits one request of max_body_bytes
      {1000, 600, SIZE_MAX, 1000, 1000},
  };
  for (const Row& r : rows) {
    BodyBudget b(r.total, BodyBudget::share_for(r.total, r.max_body));
    EXPECT_EQ(b.charge_for(r.bytes), r.charge) << r.bytes;
    EXPECT_EQ(BodyBudget::share_for(r.total, r.max_body), r.share) << r.total << " " << r.max_body;
  }
}

}  // namespace
}  // namespace extender::http
