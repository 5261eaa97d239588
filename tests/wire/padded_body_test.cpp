#include "extender/wire/padded_body.h"

#include <gtest/gtest.h>

#include <string>

namespace extender::wire {
namespace {

TEST(PaddedBody, ViewsABodyWhoseCapacityLeavesThePadding) {
  std::string body = R"({"Pod":{}})";
  body.reserve(body.size() + kBodyPadding);
  const auto padded = PaddedBody::of(body);
  EXPECT_FALSE(padded.owns_copy());
  EXPECT_EQ(padded.bytes().data(), body.data());
  EXPECT_EQ(padded.bytes(), body);
}

TEST(PaddedBody, CopiesABodyWithoutRoomAndZeroesThePadding) {
  const std::string body(100, 'x');
  ASSERT_LT(body.capacity(), body.size() + kBodyPadding);
  const auto padded = PaddedBody::of(body);
  ASSERT_TRUE(padded.owns_copy());
  EXPECT_NE(padded.bytes().data(), body.data());
  EXPECT_EQ(padded.bytes(), body);
  for (std::size_t i = 0; i < kBodyPadding; ++i) EXPECT_EQ(padded.bytes().data()[body.size() + i], '\0') << i;
}

TEST(PaddedBody, CopiesShareTheBytes) {
  const PaddedBody first(std::string_view("[1,2,3]"));
  const PaddedBody second = first;
  EXPECT_EQ(first.bytes().data(), second.bytes().data());
  EXPECT_EQ(PaddedBody().size(), 0u);
}

}  // namespace
}  // namespace extender::wire
