#include "extender/server/content_decoding.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <vector>

#include "extender/server/body_pool.h"
#include "support/gzip.h"

namespace extender::server {
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
      {"a size field smaller than the content", "gzip", with_size_field(zipped, 10), 400, "size field"},
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

TEST(ContentDecoding, TheBoundIsTheSizeFieldForGzipAndTheLargestRatioOtherwise) {
  const std::string zipped = gzip(std::string(300, 'a'));
  struct Row {
    const char* name;
    std::string coding, wire;
    std::size_t limit, bound;
  };
  const std::vector<Row> rows = {
      {"gzip: its size field", "gzip", zipped, 1000, 300},
      {"gzip: a size field over the limit stands for over", "gzip", with_size_field(zipped, 5000), 1000, 1001},
      {"gzip too short to have a size field: the ratio", "gzip", "abc", 10000, 3 * 1032},
      {"not gzip (no magic bytes): the ratio", "gzip", std::string(5, 'q') + zipped.substr(5), 100000,
       zipped.size() * 1032},
      {"deflate: 1032 per byte", "deflate", std::string(2, 'z'), 10000, 2064},
      {"deflate: at most the limit and one", "deflate", std::string(20, 'z'), 10000, 10001},
      {"deflate: no overflow on a huge limit", "deflate", std::string(8, 'z'), SIZE_MAX - 1, 8 * 1032},
  };
  for (const Row& r : rows) EXPECT_EQ(decoded_size_bound(r.coding, r.wire, r.limit), r.bound) << r.name;
}

}  // namespace
}  // namespace extender::server
