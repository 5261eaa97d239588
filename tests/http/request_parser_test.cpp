#include "extender/http/request_parser.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "support/gzip.h"

namespace extender::http {
namespace {

using extender::testing::gzip;

// What a parser made of one request: its state, status, head and body, and the bytes it left.
struct Outcome {
  RequestParser::State state = RequestParser::State::kHead;
  int status = 0;
  std::string method, target, body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::size_t consumed = 0;

  bool operator==(const Outcome&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "state " << static_cast<int>(o.state) << " status " << o.status << " " << o.method << " " << o.target
            << " body " << o.body.size() << " bytes, consumed " << o.consumed;
}

ParseLimits small_limits() {
  ParseLimits limits;
  limits.max_head_bytes = 256;
  limits.max_header_count = 8;
  limits.max_body_bytes = 64;
  return limits;
}

// Feeds `wire` in the pieces `cuts` makes of it (each cut an offset), as a connection would:
// stops feeding once the request is complete or failed.
Outcome parse_in_pieces(const std::string& wire, std::vector<std::size_t> cuts) {
  RequestParser parser(small_limits());
  Outcome out;
  cuts.push_back(wire.size());
  std::size_t at = 0;
  for (std::size_t cut : cuts) {
    if (cut <= at) continue;
    std::string_view piece(wire.data() + at, cut - at);
    while (!piece.empty()) {
      const std::size_t used = parser.feed(piece);
      out.consumed += used;
      piece.remove_prefix(used);
      const auto state = parser.state();
      if (state == RequestParser::State::kComplete || state == RequestParser::State::kFailed) {
        out.state = state;
        out.status = parser.error_status();
        if (state == RequestParser::State::kFailed) out.consumed = 0;  // the connection closes
        if (state == RequestParser::State::kComplete) {
          out.method = parser.head().method;
          out.target = parser.head().target;
          out.headers = parser.head().headers;
          out.body = parser.take_body();
        }
        return out;
      }
      if (used == 0) break;
    }
    at = cut;
  }
  out.state = parser.state();
  return out;
}

struct Case {
  const char* what;
  std::string wire;
  RequestParser::State state;
  int status;        // when failed
  std::string body;  // when complete
};

std::vector<Case> cases() {
  using S = RequestParser::State;
  const std::string zipped = gzip("{\"a\":1}");
  const std::string bomb = gzip(std::string(65, ' '));
  return {
      {"content-length body", "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\n{\"a\":1}", S::kComplete, 0,
       "{\"a\":1}"},
      {"bare LF line endings", "POST /f HTTP/1.1\nContent-Length: 2\n\nab", S::kComplete, 0, "ab"},
      {"the head ends at the first empty line (bare LF) though CRLF CRLF follows",
       "POST /f HTTP/1.1\r\nContent-Length: 2\n\nab\r\n\r\n", S::kComplete, 0, "ab"},
      {"an empty line of CR LF after a bare LF", "POST /f HTTP/1.1\nContent-Length: 1\n\r\nz", S::kComplete, 0, "z"},
      {"chunked", "POST /f HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
       S::kComplete, 0, "abcde"},
      {"a gzip body is kept as sent",
       "POST /f HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: " + std::to_string(zipped.size()) + "\r\n\r\n" +
           zipped,
       S::kComplete, 0, zipped},
      {"a gzip body whose size field is over the limit",
       "POST /f HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: " + std::to_string(bomb.size()) + "\r\n\r\n" +
           bomb,
       S::kFailed, 413, ""},
      {"leading empty lines are skipped", "\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n", S::kComplete, 0, ""},
      {"empty Transfer-Encoding beside a Content-Length",
       "POST /f HTTP/1.1\r\nTransfer-Encoding: \r\nContent-Length: 2\r\n\r\nab", S::kFailed, 400, ""},
      {"Transfer-Encoding of commas only", "POST /f HTTP/1.1\r\nTransfer-Encoding: , ,\r\n\r\n", S::kFailed, 400, ""},
      {"unknown Transfer-Encoding", "POST /f HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", S::kFailed, 501, ""},
      {"Transfer-Encoding and Content-Length",
       "POST /f HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", S::kFailed, 400, ""},
      {"conflicting Content-Length", "POST /f HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", S::kFailed,
       400, ""},
      {"declared body over the limit", "POST /f HTTP/1.1\r\nContent-Length: 65\r\n\r\n", S::kFailed, 413, ""},
      {"chunked body over the limit",
       "POST /f HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" + std::string(64, 'a') +
           "\r\n1\r\nb\r\n0\r\n\r\n",
       S::kFailed, 413, ""},
      {"a GET with a body", "GET /f HTTP/1.1\r\nContent-Length: 1\r\n\r\nx", S::kFailed, 400, ""},
      {"too many header lines",
       "GET / HTTP/1.1\r\n" + std::string("a: b\r\n") +
           "a: b\r\na: b\r\na: b\r\na: b\r\na: b\r\na: b\r\na: b\r\na: b\r\n\r\n",
       S::kFailed, 431, ""},
      {"a head over the limit", "GET / HTTP/1.1\r\nx: " + std::string(300, 'a') + "\r\n\r\n", S::kFailed, 431, ""},
      {"a head of exactly the limit, then its empty line",
       "GET / HTTP/1.1\r\nx: " + std::string(256 - 19, 'a') + "\r\n\r\n", S::kComplete, 0, ""},
      {"a head one byte over the limit, then its empty line",
       "GET / HTTP/1.1\r\nx: " + std::string(256 - 18, 'a') + "\r\n\r\n", S::kFailed, 431, ""},
      {"HTTP/2 request line", "GET / HTTP/2.0\r\n\r\n", S::kFailed, 505, ""},
      {"control character in a header", std::string("GET / HTTP/1.1\r\nx: a\x01") + "b\r\n\r\n", S::kFailed, 400, ""},
  };
}

TEST(RequestParser, EachCaseEndsAsExpected) {
  for (const Case& c : cases()) {
    const Outcome whole = parse_in_pieces(c.wire, {});
    EXPECT_EQ(whole.state, c.state) << c.what;
    if (c.state == RequestParser::State::kFailed) {
      EXPECT_EQ(whole.status, c.status) << c.what;
    } else if (c.state == RequestParser::State::kComplete) {
      EXPECT_EQ(whole.body, c.body) << c.what;
    }
  }
}

TEST(RequestParser, ByteByByteGivesWhatOneSegmentGives) {
  for (const Case& c : cases()) {
    std::vector<std::size_t> every_byte;
    for (std::size_t i = 1; i < c.wire.size(); ++i) every_byte.push_back(i);
    EXPECT_EQ(parse_in_pieces(c.wire, every_byte), parse_in_pieces(c.wire, {})) << c.what;
  }
}

TEST(RequestParser, RandomSplitsGiveWhatOneSegmentGives) {
  std::mt19937 rng(20261201);
  for (const Case& c : cases()) {
    const Outcome whole = parse_in_pieces(c.wire, {});
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<std::size_t> cuts;
      std::uniform_int_distribution<std::size_t> at(1, c.wire.size());
      const int n = static_cast<int>(rng() % 6);
      for (int k = 0; k < n; ++k) cuts.push_back(at(rng));
      std::sort(cuts.begin(), cuts.end());
      ASSERT_EQ(parse_in_pieces(c.wire, cuts), whole) << c.what << ", trial " << trial;
    }
  }
}

TEST(RequestParser, WhatFollowsARequestIsLeftForTheNext) {
  const std::string first = "POST /a HTTP/1.1\r\nContent-Length: 2\r\n\r\nab";
  const std::string second = "GET /b HTTP/1.1\r\n\r\n";
  const Outcome o = parse_in_pieces(first + second, {});
  EXPECT_EQ(o.state, RequestParser::State::kComplete);
  EXPECT_EQ(o.consumed, first.size());
  EXPECT_EQ(o.body, "ab");
}

}  // namespace
}  // namespace extender::http

namespace extender::http {
namespace {

// A gzip body whose size field says `isize` whatever it holds.
std::string lying_size(std::string zipped, std::uint32_t isize) {
  for (int i = 0; i < 4; ++i) zipped[zipped.size() - 4 + i] = static_cast<char>((isize >> (8 * i)) & 0xff);
  return zipped;
}

TEST(RequestParser, ACompleteCodedBodyHoldsItsWireBytesNotWhatItsSizeFieldClaims) {
  ParseLimits limits;
  limits.max_body_bytes = std::size_t{64} << 20;
  struct Row {
    const char* name;
    std::string coding, body;
  };
  const std::vector<Row> rows = {
      {"gzip claiming 51.2 MiB", "gzip", lying_size(gzip("{}"), 51u << 20 | 200u << 10)},
      {"deflate junk (1032 times its size if believed)", "deflate", std::string(52 << 10, 'j')},
      {"plain", "identity", std::string(100, 'x')},
  };
  for (const Row& r : rows) {
    const std::string head = "POST /f HTTP/1.1\r\nContent-Encoding: " + r.coding +
                             "\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\n\r\n";
    RequestParser p(limits);
    p.feed(head + r.body);
    ASSERT_EQ(p.state(), RequestParser::State::kComplete) << r.name << ": " << p.error();
    EXPECT_LE(p.held_bytes(), head.size() + r.body.size()) << r.name;
  }
}

}  // namespace
}  // namespace extender::http
