#pragma once
// Test helpers: read fixture files, and cut one JSON object out of a text by bracket counting
// (independent of the code under test).
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace extender::testing {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline std::string fixture(const std::string& relative) {
  return read_file(std::string(EXTENDER_FIXTURES_DIR) + "/" + relative);
}

// The complete JSON object that starts at the first occurrence of `start` in `text`.
inline std::string object_starting_with(const std::string& text, const std::string& start) {
  std::size_t begin = text.find(start);
  if (begin == std::string::npos) throw std::runtime_error("not found: " + start);
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = begin; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') {
      if (--depth == 0) return text.substr(begin, i - begin + 1);
    }
  }
  throw std::runtime_error("unbalanced object at " + start);
}

}  // namespace extender::testing
