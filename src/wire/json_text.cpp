#include "extender/wire/json_text.h"

#include <simdjson.h>

#include <array>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace extender::wire {

namespace {

// Length of the valid UTF-8 sequence at the start of `s`, or 0 when it is not valid.
size_t utf8_sequence_length(std::string_view s) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k) { return k < s.size() && (b(k) & 0xc0) == 0x80; };
  unsigned char c = b(0);
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xe0 && b(1) < 0xa0) return 0;  // overlong
    if (c == 0xed && b(1) > 0x9f) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xf0 && b(1) < 0x90) return 0;
    if (c == 0xf4 && b(1) > 0x8f) return 0;
    return 4;
  }
  return 0;
}

// Printable ASCII that Go's encoding/json writes as is (it escapes <, > and & for HTML).
constexpr bool needs_no_escape(unsigned char c) {
  return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&';
}

constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> t{};
  for (unsigned c = 0; c < 256; ++c) t[c] = needs_no_escape(static_cast<unsigned char>(c));
  return t;
}();

// The bytes at the start of `s` that need no escaping: sixteen at a time where SSE2 is there
// (a signed compare below 0x20 flags control bytes and every byte at or above 0x80), then eight at
// a time (a word with such a byte or one of "\<>& is flagged; the flag may be set for the bytes
// after such a byte too, never for a word without one), then byte by byte.
size_t plain_prefix(std::string_view s) {
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i space = _mm_set1_epi8(0x20);
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i lt = _mm_set1_epi8('<');
  const __m128i gt = _mm_set1_epi8('>');
  const __m128i amp = _mm_set1_epi8('&');
  auto flagged_at = [&](size_t at) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + at));
    __m128i flagged = _mm_cmplt_epi8(v, space);
    flagged = _mm_or_si128(flagged, _mm_cmpeq_epi8(v, quote));
    flagged = _mm_or_si128(flagged, _mm_cmpeq_epi8(v, backslash));
    flagged = _mm_or_si128(flagged, _mm_cmpeq_epi8(v, lt));
    flagged = _mm_or_si128(flagged, _mm_cmpeq_epi8(v, gt));
    flagged = _mm_or_si128(flagged, _mm_cmpeq_epi8(v, amp));
    return static_cast<unsigned>(_mm_movemask_epi8(flagged));
  };
  for (; i + 16 <= s.size(); i += 16) {
    if (const unsigned mask = flagged_at(i)) return i + static_cast<size_t>(__builtin_ctz(mask));
  }
  if (i < s.size() && s.size() >= 16) {
    // The last 16 bytes, overlapping the block before: bytes already seen are left out of the mask.
    const size_t last = s.size() - 16;
    const unsigned mask = flagged_at(last) >> (i - last);
    return mask ? i + static_cast<size_t>(__builtin_ctz(mask)) : s.size();
  }
#endif
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
  auto has_zero = [](std::uint64_t x) { return (x - kOnes) & ~x & kHighs; };
  auto has_byte = [&](std::uint64_t x, unsigned char c) { return has_zero(x ^ (kOnes * c)); };
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t v;
    std::memcpy(&v, s.data() + i, 8);
    const std::uint64_t flagged = (v & kHighs) | ((v - kOnes * 0x20) & ~v & kHighs) | has_byte(v, '"') |
                                  has_byte(v, '\\') | has_byte(v, '<') | has_byte(v, '>') | has_byte(v, '&');
    if (flagged) break;
  }
  while (i < s.size() && kPlain[static_cast<unsigned char>(s[i])]) ++i;
  return i;
}

// Appends an ASCII byte as Go's encoding/json writes it: the short escapes, \u00XX for the other
// control characters and for <, > and &.
void append_ascii(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (c) {
    case '"': out += "\\\""; return;
    case '\\': out += "\\\\"; return;
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    case '\b': out += "\\b"; return;
    case '\f': out += "\\f"; return;
    case '<':
    case '>':
    case '&': break;
    default:
      if (c >= 0x20) {
        out.push_back(static_cast<char>(c));
        return;
      }
  }
  out += "\\u00";
  out.push_back(kHex[c >> 4]);
  out.push_back(kHex[c & 0xf]);
}

// Appends the UTF-8 sequence `s` starts with (U+2028 and U+2029 escaped, an invalid byte as
// U+FFFD, as Go writes invalid UTF-8); returns the bytes it took.
size_t append_sequence(std::string& out, std::string_view s) {
  size_t len = utf8_sequence_length(s);
  if (len == 0) {
    out += "\\ufffd";
    return 1;
  }
  std::string_view seq = s.substr(0, len);
  if (seq == "\xe2\x80\xa8") {
    out += "\\u2028";
  } else if (seq == "\xe2\x80\xa9") {
    out += "\\u2029";
  } else {
    out += seq;
  }
  return len;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  if (plain_prefix(s) == s.size()) {
    const size_t at = out.size();
    out.resize(at + s.size() + 2);
    char* p = out.data() + at;
    p[0] = '"';
    if (!s.empty()) std::memcpy(p + 1, s.data(), s.size());
    p[s.size() + 1] = '"';
    return;
  }
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const size_t plain = i + plain_prefix(s.substr(i));
    if (plain > i) {
      out.append(s.data() + i, plain - i);
      i = plain;
      if (i == s.size()) break;
    }
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      append_ascii(out, c);
    } else {
      i += append_sequence(out, s.substr(i)) - 1;
    }
  }
  out.push_back('"');
}

bool key_matches(std::string_view key, std::string_view field) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  size_t i = 0;
  for (char f : field) {
    if (i >= key.size()) return false;
    char lf = lower(f);
    if (lower(key[i]) == lf) {
      ++i;
      continue;
    }
    // Go folds U+017F (long s) to 's' and U+212A (Kelvin sign) to 'k'.
    if (lf == 's' && key.substr(i, 2) == "\xc5\xbf") {
      i += 2;
    } else if (lf == 'k' && key.substr(i, 3) == "\xe2\x84\xaa") {
      i += 3;
    } else {
      return false;
    }
  }
  return i == key.size();
}

bool nesting_within(std::string_view json, std::size_t limit) {
  std::size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

bool valid_utf8(std::string_view s) { return simdjson::validate_utf8(s.data(), s.size()); }

}  // namespace extender::wire
