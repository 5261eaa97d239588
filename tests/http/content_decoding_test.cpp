#include "extender/http/content_decoding.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "extender/http/body_pool.h"
#include "support/gzip.h"

namespace extender::http {
namespace {

using extender::testing::gzip;

// The zlib format, as a client sending `Content-Encoding: deflate` does.
std::string zlib_deflate(const std::string& data) {
  uLongf size = compressBound(data.size());
  std::string out(size, '\0');
  compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(data.data()), data.size(), 9);
  out.resize(size);
  return out;
}

// A gzip body whose size field says `isize` whatever it holds.
std::string with_size_field(std::string zipped, std::uint32_t isize) {
  for (int i = 0; i < 4; ++i) zipped[zipped.size() - 4 + i] = static_cast<char>((isize >> (8 * i)) & 0xff);
  return zipped;
}

struct Case {
  const char* name;
  std::string coding;
  std::string wire;
  int status;
  std::string body;  // the decoded body (200), else a part of the error
};

TEST(ContentDecoding, EachBodyDecodesOrIsRefusedWithItsStatus) {
  constexpr std::size_t kLimit = 1000;
  const std::string json = R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["a","b"]})";
  const std::string zipped = gzip(json);
  std::string corrupt = zipped;
  corrupt[12] = static_cast<char>(corrupt[12] ^ 0x55);
  const std::vector<Case> cases = {
      {"gzip", "gzip", zipped, 200, json},
      {"deflate (zlib format)", "deflate", zlib_deflate(json), 200, json},
      {"gzip of nothing", "gzip", gzip(""), 200, ""},
      {"exactly the limit", "gzip", gzip(std::string(kLimit, 'x')), 200, std::string(kLimit, 'x')},
      {"gzip one byte over the limit", "gzip", gzip(std::string(kLimit + 1, 'x')), 413, "max_body_bytes"},
      {"deflate over the limit", "deflate", zlib_deflate(std::string(kLimit + 1, 'x')), 413, "max_body_bytes"},
      {"a size field smaller than the content", "gzip", with_size_field(zipped, 10), 400, "more than its size field"},
      {"a size field larger than the content", "gzip", with_size_field(zipped, 500), 400, "cannot be decompressed"},
      {"truncated", "deflate", zlib_deflate(json).substr(0, 20), 400, "ends early"},
      {"corrupt", "gzip", corrupt, 400, "cannot be decompressed"},
      {"data after the stream", "gzip", with_size_field(zipped + "tail", 500), 400, "follows the end"},
      {"not compressed at all", "gzip", json, 400, "cannot be decompressed"},
      {"empty", "deflate", "", 400, "ends early"},
  };
  BodyPool pool;
  for (const Case& c : cases) {
    for (BodyBuffers* buffers : {static_cast<BodyBuffers*>(nullptr), static_cast<BodyBuffers*>(&pool)}) {
      const DecodedBody d = decode_body(c.coding, c.wire, kLimit, buffers);
      EXPECT_EQ(d.status, c.status) << c.name << ": " << d.error << " (" << (buffers ? "pool" : "plain") << ")";
      if (c.status == 200) {
        EXPECT_EQ(d.body, c.body) << c.name;
        EXPECT_GE(d.body.capacity(), d.body.size() + kBodyPadding) << c.name;
      } else {
        EXPECT_NE(d.error.find(c.body), std::string::npos) << c.name << ": " << d.error;
        EXPECT_TRUE(d.body.empty()) << c.name;
      }
    }
  }
}

TEST(ContentDecoding, OnlyAGzipSizeFieldOverTheLimitIsRefusedBeforeInflating) {
  const std::string zipped = gzip(std::string(300, 'a'));
  struct Row {
    const char* name;
    std::string coding, wire;
    bool over;
  };
  const std::vector<Row> rows = {
      {"gzip: its size field within the limit", "gzip", zipped, false},
      {"gzip: a size field over the limit", "gzip", with_size_field(zipped, 5000), true},
      {"gzip too short to have a size field", "gzip", "abc", false},
      {"not gzip (no magic bytes)", "gzip", std::string(5, 'q') + zipped.substr(5), false},
      {"deflate has no size field", "deflate", std::string(20, 'z'), false},
  };
  for (const Row& r : rows) EXPECT_EQ(size_field_over(r.coding, r.wire, 1000), r.over) << r.name;
}

TEST(ContentDecoding, TheWorkOfDecodingIsBoundedByTheSizeFieldItEnforcesOrDeflatesLargestRatio) {
  const std::string zipped = gzip(std::string(300, 'a'));
  struct Row {
    const char* name;
    std::string coding, wire;
    std::size_t limit, work;
  };
  const std::vector<Row> rows = {
      {"gzip: its size field", "gzip", zipped, 1000, 300},
      {"gzip: at most the limit", "gzip", with_size_field(zipped, 5000), 1000, 1000},
      {"deflate: 1032 per byte", "deflate", std::string(2, 'z'), 10000, 2064},
      {"deflate: at most the limit", "deflate", std::string(20, 'z'), 10000, 10000},
      {"gzip without magic bytes: as deflate", "gzip", "abc", 10000, 3096},
      {"no overflow on a huge limit", "deflate", std::string(8, 'z'), SIZE_MAX - 1, 8 * 1032},
  };
  for (const Row& r : rows) EXPECT_EQ(decode_work_bound(r.coding, r.wire, r.limit), r.work) << r.name;
  // A bomb that claims little stops once it passes its claim: its claim bounds its work.
  std::size_t asked = 0;
  const DecodedBody d = decode_body("gzip", with_size_field(gzip(std::string(8 << 20, 'a')), 1000), 64 << 20, nullptr,
                                    [&](std::size_t bytes) {
                                      asked = std::max(asked, bytes);
                                      return true;
                                    });
  EXPECT_EQ(d.status, 400) << d.error;
  EXPECT_LE(asked, std::size_t{64} << 10);
}

// Records what a decoder asks of the pool.
struct RecordingBuffers final : BodyBuffers {
  std::size_t largest = 0;
  std::string acquire(std::size_t wanted, std::size_t fresh) override {
    largest = std::max(largest, wanted);
    std::string s;
    s.reserve(fresh);
    return s;
  }
  void release(std::string&&) override {}
};

TEST(ContentDecoding, NoBufferIsSizedFromASizeFieldAndEachGrowthIsAskedFirst) {
  constexpr std::size_t kLimit = std::size_t{64} << 20;
  const std::string liar = with_size_field(gzip("{}"), 51u << 20);
  const std::string deflate_junk = zlib_deflate(std::string(2, 'x')) + std::string(52 << 10, 'j');
  for (const auto& [name, coding, wire] :
       {std::tuple{"lying size field", "gzip", liar}, std::tuple{"deflate junk", "deflate", deflate_junk}}) {
    RecordingBuffers buffers;
    std::size_t asked = 0;
    const DecodedBody d = decode_body(coding, wire, kLimit, &buffers, [&](std::size_t bytes) {
      asked = std::max(asked, bytes);
      return true;
    });
    EXPECT_EQ(d.status, 400) << name << ": " << d.error;
    EXPECT_LE(buffers.largest, std::size_t{1} << 20) << name;
    EXPECT_LE(asked, std::size_t{1} << 20) << name;
  }
  const std::string big = gzip(std::string(std::size_t{4} << 20, 'a'));
  std::vector<std::size_t> steps;
  const DecodedBody grown = decode_body("gzip", big, kLimit, nullptr, [&](std::size_t bytes) {
    steps.push_back(bytes);
    return true;
  });
  ASSERT_EQ(grown.status, 200) << grown.error;
  EXPECT_EQ(grown.body.size(), std::size_t{4} << 20);
  ASSERT_GE(steps.size(), 2u);
  EXPECT_GE(steps.back(), std::size_t{4} << 20);
  EXPECT_LE(steps.back(), std::size_t{8} << 20);
  const DecodedBody refused =
      decode_body("gzip", big, kLimit, nullptr, [](std::size_t bytes) { return bytes <= (std::size_t{1} << 20); });
  EXPECT_EQ(refused.status, 503) << "growth refused by the budget: the server is out of room";
  EXPECT_TRUE(refused.body.empty());
  const DecodedBody capped = decode_body("gzip", big, std::size_t{3} << 20);
  EXPECT_EQ(capped.status, 413) << "inflating stops at the ceiling";
}

}  // namespace
}  // namespace extender::http
