#include "extender/http/body_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "extender/http/request_parser.h"

namespace extender::http {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

std::string buffer_of(std::size_t capacity) {
  std::string s;
  s.reserve(capacity);
  s = "leftover";
  return s;
}

TEST(BodyPool, HandsBackTheSmallestKeptBufferThatFitsEmptied) {
  BodyPool pool;
  std::string two = buffer_of(2 * kMiB);
  std::string four = buffer_of(4 * kMiB);
  const char* two_at = two.data();
  const char* four_at = four.data();
  pool.release(std::move(two));
  pool.release(std::move(four));
  EXPECT_EQ(pool.kept(), 2u);

  std::string got = pool.acquire(3 * kMiB, 64);
  EXPECT_EQ(got.data(), four_at);
  EXPECT_TRUE(got.empty());
  got = pool.acquire(kMiB, 64);
  EXPECT_EQ(got.data(), two_at);
  EXPECT_EQ(pool.kept(), 0u);
  const std::string fresh = pool.acquire(8 * kMiB, 100);
  EXPECT_GE(fresh.capacity(), 100u);
  EXPECT_LT(fresh.capacity(), kMiB);  // a fresh buffer gets `fresh`, not what was wanted
}

TEST(BodyPool, KeepsNoMoreThanItsBoundsAndNoSmallBuffers) {
  BodyPool pool(2, 5 * kMiB);
  pool.release(buffer_of(1000));
  EXPECT_EQ(pool.kept(), 0u);
  pool.release(buffer_of(2 * kMiB));
  pool.release(buffer_of(2 * kMiB));
  pool.release(buffer_of(2 * kMiB));  // past the count
  EXPECT_EQ(pool.kept(), 2u);
  EXPECT_LE(pool.kept_bytes(), 5 * kMiB);
  std::string a = pool.acquire(kMiB, 64);
  pool.release(buffer_of(4 * kMiB));  // past the bytes
  EXPECT_EQ(pool.kept(), 1u);
  EXPECT_LE(pool.kept_bytes(), 5 * kMiB);
}

TEST(BodyPool, TrimsOnItsOwnThreadWhenAsked) {
  BodyPool pool;
  EXPECT_EQ(pool.trims(), 0u);
  pool.trim_soon();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (pool.trims() == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GE(pool.trims(), 1u);
}

ParseLimits limits() {
  ParseLimits l;
  l.max_body_bytes = 256 * kMiB;
  return l;
}

TEST(RequestParserWithBodyPool, ALargeBodyLandsInAKeptBufferAndADroppedOneGoesBack) {
  BodyPool pool;
  std::string kept = buffer_of(3 * kMiB);
  const char* kept_at = kept.data();
  pool.release(std::move(kept));

  RequestParser parser(limits(), &pool);
  const std::string body(2 * kMiB, 'x');
  const std::string head = "POST /f HTTP/1.1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  EXPECT_EQ(parser.feed(head), head.size());
  EXPECT_EQ(pool.kept(), 0u);
  EXPECT_EQ(parser.feed(body), body.size());
  ASSERT_EQ(parser.state(), RequestParser::State::kComplete);
  std::string taken = parser.take_body();
  EXPECT_EQ(taken.data(), kept_at);
  EXPECT_EQ(taken, body);
  pool.release(std::move(taken));
  EXPECT_EQ(pool.kept(), 1u);

  parser.reset();
  parser.feed(head + body.substr(0, kMiB));  // the peer goes away mid-body
  EXPECT_EQ(pool.kept(), 0u);
  parser.reset();
  EXPECT_EQ(pool.kept(), 1u);
}

struct RecordingBuffers : BodyBuffers {
  std::string acquire(std::size_t w, std::size_t f) override {
    wanted.push_back(w);
    fresh.push_back(f);
    std::string s;
    s.reserve(f);
    return s;
  }
  void release(std::string&& b) override { released += b.capacity() > 0 ? 1 : 0; }
  std::vector<std::size_t> wanted, fresh;
  int released = 0;
};

TEST(RequestParserWithBodyPool, ADeclaredLengthIsNotTrustedWithAFreshReservationAndSmallBodiesSkipThePool) {
  RecordingBuffers buffers;
  RequestParser parser(limits(), &buffers);
  parser.feed("POST /f HTTP/1.1\r\nContent-Length: 100\r\n\r\n");
  EXPECT_TRUE(buffers.wanted.empty());
  parser.reset();
  parser.feed("POST /f HTTP/1.1\r\nContent-Length: 134217728\r\n\r\n");
  ASSERT_EQ(buffers.wanted.size(), 1u);
  EXPECT_EQ(buffers.wanted[0], 134217728u + kBodyPadding);
  EXPECT_EQ(buffers.fresh[0], kMiB + kBodyPadding);
}

}  // namespace
}  // namespace extender::http
