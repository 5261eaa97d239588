#pragma once
// Quantity: a Kubernetes resource quantity ("95500m", "32Gi", "1e3", "0.5"), held exactly
// to the nano-unit as Kubernetes itself does (finer digits round up, like resource.ParseQuantity).
// Values whose magnitude exceeds 2^63-1 units are rejected as overflow. A value type; thread-safe.
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "extender/common/result.h"

namespace extender {

class Quantity {
 public:
  Quantity() = default;

  // Parses the Kubernetes quantity grammar: sign, digits with an optional fraction, then one
  // suffix: binary (Ki Mi Gi Ti Pi Ei), decimal (n u m k M G T P E) or exponent (e3, E-2).
  static Result<Quantity> parse(std::string_view text);

  // The value rounded up to a whole unit (resource.Quantity.Value()).
  std::int64_t units_ceil() const;
  // The value rounded up to a thousandth (resource.Quantity.MilliValue()); saturates.
  std::int64_t milli_ceil() const;
  bool is_negative() const { return nanos_ < 0; }
  // The exact value in nano-units, as the two halves of a 128-bit integer (for hashing).
  std::uint64_t nanos_high() const { return static_cast<std::uint64_t>(static_cast<unsigned __int128>(nanos_) >> 64); }
  std::uint64_t nanos_low() const { return static_cast<std::uint64_t>(nanos_); }

  auto operator<=>(const Quantity&) const = default;

 private:
  explicit Quantity(__int128 nanos) : nanos_(nanos) {}
  __int128 nanos_ = 0;
};

// Parses a quantity that must be a whole, non-negative count (GPUs, bytes); `what` names the
// field in the error message.
Result<std::int64_t> parse_count(std::string_view text, std::string_view what);

// a + b, clamped to the int64 range (hostile inputs may ask for absurd amounts).
std::int64_t saturating_add(std::int64_t a, std::int64_t b);

}  // namespace extender
