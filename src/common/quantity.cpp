#include "extender/common/quantity.h"

#include <cctype>
#include <limits>
#include <optional>

namespace extender {
namespace {

constexpr __int128 kNanosPerUnit = 1'000'000'000;
constexpr __int128 kMaxUnits = std::numeric_limits<std::int64_t>::max();
constexpr __int128 kMaxNanos = kMaxUnits * kNanosPerUnit;
// Fraction digits kept exactly; beyond them only "is anything non-zero" matters (round up).
constexpr int kMaxFractionDigits = 30;
constexpr int kMaxMantissaDigits = 36;

struct Suffix {
  int decimal_exponent = 0;
  int binary_exponent = 0;
};

bool parse_suffix(std::string_view s, Suffix& out) {
  if (s.empty()) return true;
  if (s.size() == 2 && s[1] == 'i') {
    static constexpr std::string_view kBinary = "KMGTPE";
    auto pos = kBinary.find(s[0]);
    if (pos == std::string_view::npos) return false;
    out.binary_exponent = 10 * static_cast<int>(pos + 1);
    return true;
  }
  if (s.size() == 1) {
    switch (s[0]) {
      case 'n': out.decimal_exponent = -9; return true;
      case 'u': out.decimal_exponent = -6; return true;
      case 'm': out.decimal_exponent = -3; return true;
      case 'k': out.decimal_exponent = 3; return true;
      case 'M': out.decimal_exponent = 6; return true;
      case 'G': out.decimal_exponent = 9; return true;
      case 'T': out.decimal_exponent = 12; return true;
      case 'P': out.decimal_exponent = 15; return true;
      case 'E': out.decimal_exponent = 18; return true;
      default: return false;
    }
  }
  if (s[0] != 'e' && s[0] != 'E') return false;
  std::string_view exp = s.substr(1);
  bool negative = false;
  if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
    negative = exp[0] == '-';
    exp.remove_prefix(1);
  }
  if (exp.empty() || exp.size() > 4) return false;
  int value = 0;
  for (char c : exp) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    value = value * 10 + (c - '0');
  }
  out.decimal_exponent = negative ? -value : value;
  return true;
}

Error invalid(std::string_view text, std::string_view why) {
  return Error{"invalid quantity \"" + std::string(text.substr(0, 64)) + "\": " + std::string(why)};
}

// A quantity's digits as an integer and the count of its fraction digits.
struct Mantissa {
  __int128 value = 0;
  int digits = 0;
  int fraction_digits = 0;
  bool any_digit = false;
  bool sticky = false;  // non-zero digits were dropped: round up

  // The integer part from s[i] on; false when it has too many digits.
  bool read_integer(std::string_view s, size_t& i) {
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
      any_digit = true;
      if (value == 0 && s[i] == '0') continue;
      if (++digits > kMaxMantissaDigits) return false;
      value = value * 10 + (s[i] - '0');
    }
    return true;
  }

  // The fraction from s[i] on (after the '.'): its digits up to the last non-zero one, exactly
  // as far as they fit.
  void read_fraction(std::string_view s, size_t& i) {
    size_t start = i;
    size_t last_nonzero = start;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
      if (s[i] != '0') last_nonzero = i + 1;
    }
    if (i > start) any_digit = true;
    for (size_t k = start; k < last_nonzero; ++k) {
      if (fraction_digits == kMaxFractionDigits) {
        sticky = true;
        break;
      }
      if (value == 0 && s[k] == '0') {
        ++fraction_digits;
        continue;
      }
      if (++digits > kMaxMantissaDigits) {
        sticky = true;
        break;
      }
      value = value * 10 + (s[k] - '0');
      ++fraction_digits;
    }
  }

  // The value with `suffix` in nanounits, rounded up; nullopt when it overflows.
  std::optional<__int128> nanos(const Suffix& suffix) {
    int exponent = suffix.decimal_exponent - fraction_digits + 9;
    __int128 nanos = value;
    if (nanos != 0) {
      for (int b = 0; b < suffix.binary_exponent; ++b) {
        nanos *= 2;
        if (nanos > kMaxNanos) return std::nullopt;
      }
      for (; exponent > 0; --exponent) {
        nanos *= 10;
        if (nanos > kMaxNanos) return std::nullopt;
      }
      for (; exponent < 0; ++exponent) {
        if (nanos % 10 != 0) sticky = true;
        nanos /= 10;
        if (nanos == 0) break;
      }
    }
    if (sticky) nanos += 1;
    if (nanos > kMaxNanos) return std::nullopt;
    return nanos;
  }
};

}  // namespace

Result<Quantity> Quantity::parse(std::string_view text) {
  std::string_view s = text;
  if (s.empty()) return invalid(text, "empty");
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  Mantissa m;
  size_t i = 0;
  if (!m.read_integer(s, i)) return invalid(text, "overflows");
  if (i < s.size() && s[i] == '.') m.read_fraction(s, ++i);
  if (!m.any_digit) return invalid(text, "no digits");
  Suffix suffix;
  if (!parse_suffix(s.substr(i), suffix)) return invalid(text, "unknown suffix");
  auto nanos = m.nanos(suffix);
  if (!nanos) return invalid(text, "overflows");
  return Quantity(negative ? -*nanos : *nanos);
}

std::int64_t Quantity::units_ceil() const {
  __int128 q = nanos_ / kNanosPerUnit;
  if (nanos_ % kNanosPerUnit > 0) ++q;
  return static_cast<std::int64_t>(q);
}

std::int64_t Quantity::milli_ceil() const {
  constexpr __int128 kNanosPerMilli = 1'000'000;
  __int128 q = nanos_ / kNanosPerMilli;
  if (nanos_ % kNanosPerMilli > 0) ++q;
  if (q > std::numeric_limits<std::int64_t>::max()) return std::numeric_limits<std::int64_t>::max();
  if (q < std::numeric_limits<std::int64_t>::min()) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(q);
}

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) {
    return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  }
  return out;
}

Result<std::int64_t> parse_count(std::string_view text, std::string_view what) {
  auto q = Quantity::parse(text);
  if (!q) return Error{std::string(what) + ": " + q.message()};
  if (q->is_negative()) {
    return Error{std::string(what) + ": negative quantity \"" + std::string(text.substr(0, 64)) + "\""};
  }
  return q->units_ceil();
}

}  // namespace extender
