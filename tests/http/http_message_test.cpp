#include "extender/http/http_message.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace extender::http {
namespace {

TEST(ErrorResponse, IsOneJsonStringUnderErrorWhateverTheMessageHolds) {
  struct Case {
    const char* name;
    std::string message;
    std::string body;
  };
  const std::vector<Case> cases = {
      {"plain text", "request body too large", R"({"error":"request body too large"})"},
      {"empty", "", R"({"error":""})"},
      {"quotes and backslashes escaped", R"(coding "x\y")", R"({"error":"coding \"x\\y\""})"},
      {"control characters as \\u escapes", "a\nb\x7f", R"({"error":"a\u000ab\u007f"})"},
      {"invalid UTF-8 replaced", "bad \xff\xfe", R"({"error":"bad \ufffd\ufffd"})"},
      {"valid UTF-8 kept", "caf\xc3\xa9", "{\"error\":\"caf\xc3\xa9\"}"},
  };
  for (const auto& c : cases) {
    const HttpResponse res = error_response(413, c.message);
    EXPECT_EQ(res.status, 413) << c.name;
    EXPECT_EQ(res.content_type, "application/json") << c.name;
    EXPECT_EQ(res.body, c.body) << c.name;
    EXPECT_FALSE(res.close) << c.name;
  }
}

}  // namespace
}  // namespace extender::http
