// What the log formats make of untrusted text: printable() cuts on a character boundary; the text
// format shows controls, line separators and invalid UTF-8 as '?'; the JSON format always yields
// a valid JSON string that decodes to the same text where the text was valid and harmless.
#include "extender/common/logging.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace extender {
namespace {

struct Case {
  std::string name;
  std::string in;
  std::string text;  // log_text
  std::string json;  // log_json_string
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"plain", "pod team/a-1 bound", "pod team/a-1 bound", "pod team/a-1 bound"},
      {"quotes and backslash", "say \"hi\" \\ bye", "say \"hi\" \\ bye", "say \\\"hi\\\" \\\\ bye"},
      {"newline and CR", "a\nb\rc", "a?b?c", "a\\u000ab\\u000dc"},
      {"NUL and ESC", std::string("a\0b\x1b[31m", 8), "a?b?[31m", "a\\u0000b\\u001b[31m"},
      {"DEL",
       "a\x7f"
       "b",
       "a?b", "a\\u007fb"},
      {"C1 NEL U+0085",
       "a\xc2\x85"
       "b",
       "a?b", "a\\u0085b"},
      {"C1 first and last", "\xc2\x80\xc2\x9f", "??", "\\u0080\\u009f"},
      {"U+00A0 is not C1",
       "a\xc2\xa0"
       "b",
       "a\xc2\xa0"
       "b",
       "a\xc2\xa0"
       "b"},
      {"U+2028 and U+2029",
       "a\xe2\x80\xa8"
       "b\xe2\x80\xa9"
       "c",
       "a?b?c", "a\\u2028b\\u2029c"},
      {"other 3-byte text",
       "n\xc3\xb6"
       "de \xe8\x8a\x82\xe7\x82\xb9 \xe2\x82\xac",
       "n\xc3\xb6"
       "de \xe8\x8a\x82\xe7\x82\xb9 \xe2\x82\xac",
       "n\xc3\xb6"
       "de \xe8\x8a\x82\xe7\x82\xb9 \xe2\x82\xac"},
      {"4-byte text", "\xf0\x9f\x9a\x80", "\xf0\x9f\x9a\x80", "\xf0\x9f\x9a\x80"},
      {"lone continuation byte",
       "a\x80"
       "b",
       "a?b", "a\\ufffdb"},
      {"lone lead byte at the end", "a\xc3", "a?", "a\\ufffd"},
      {"truncated 3-byte sequence",
       "a\xe2\x80"
       "b",
       "a??b", "a\\ufffd\\ufffdb"},
      {"overlong slash", "\xc0\xaf", "??", "\\ufffd\\ufffd"},
      {"overlong NUL", "\xc0\x80", "??", "\\ufffd\\ufffd"},
      {"overlong 3-byte", "\xe0\x80\xaf", "???", "\\ufffd\\ufffd\\ufffd"},
      {"surrogate", "\xed\xa0\x80", "???", "\\ufffd\\ufffd\\ufffd"},
      {"past U+10FFFF", "\xf4\x90\x80\x80", "????", "\\ufffd\\ufffd\\ufffd\\ufffd"},
      {"0xFF and 0xFE", "\xff\xfe", "??", "\\ufffd\\ufffd"},
  };
  return all;
}

TEST(Logging, TextFormatShowsUnsafeCharactersAsQuestionMarks) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(log_text(c.in), c.text);
  }
}

TEST(Logging, JsonFormatEscapesUnsafeCharactersAndReplacesInvalidUtf8) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    const std::string escaped = log_json_string(c.in);
    EXPECT_EQ(escaped, c.json);
    // Always a valid JSON string (nlohmann refuses invalid UTF-8), without a raw line separator.
    const auto parsed = nlohmann::json::parse("\"" + escaped + "\"", nullptr, false);
    ASSERT_TRUE(parsed.is_string()) << escaped;
    EXPECT_EQ(escaped.find('\n'), std::string::npos);
    EXPECT_EQ(escaped.find("\xe2\x80\xa8"), std::string::npos);
  }
  // Valid text decodes to itself.
  const std::string text = "a \"b\" \\ c\n\xc2\x85\xe2\x80\xa8 \xf0\x9f\x9a\x80";
  EXPECT_EQ(nlohmann::json::parse("\"" + log_json_string(text) + "\"").get<std::string>(), text);
}

TEST(Logging, PrintableCutsOnACharacterBoundary) {
  struct Cut {
    std::string in;
    std::size_t max;
    std::string out;
  };
  const std::string euro = "\xe2\x82\xac";        // 3 bytes
  const std::string rocket = "\xf0\x9f\x9a\x80";  // 4 bytes
  const std::vector<Cut> cuts = {
      {"short", 10, "short"},
      {"exactly", 7, "exactly"},
      {"abcdef", 3, "abc..."},
      {"ab" + euro + "cd", 2, "ab..."},
      {"ab" + euro + "cd", 3, "ab..."},
      {"ab" + euro + "cd", 4, "ab..."},
      {"ab" + euro + "cd", 5, "ab" + euro + "..."},
      {"a" + rocket + "b", 2, "a..."},
      {"a" + rocket + "b", 4, "a..."},
      {"a" + rocket + "b", 5, "a" + rocket + "..."},
      {"\xc3\xa9\xc3\xa9", 3, "\xc3\xa9..."},
      {std::string(10, '\x80'), 5, std::string(2, '\x80') + "..."},  // not UTF-8 at all: cut short
  };
  for (const auto& c : cuts) {
    SCOPED_TRACE(c.in + " / " + std::to_string(c.max));
    EXPECT_EQ(printable(c.in, c.max), c.out);
  }
  // A cut never leaves a partial character for the formatters to turn into '?'.
  std::string names;
  for (int i = 0; i < 300; ++i) names += euro;
  for (std::size_t max = 1; max < 40; ++max) {
    const std::string p = printable(names, max);
    EXPECT_EQ(log_text(p), p) << max;
  }
}

}  // namespace
}  // namespace extender
