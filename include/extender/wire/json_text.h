#pragma once
// JSON text helpers shared by the encoders and decoders: strings escaped exactly as Go's
// encoding/json writes them, case-insensitive key matching as Go reads them, and a nesting check
// that runs before any recursive parser sees hostile input. Pure functions; thread-safe.
#include <cstddef>
#include <string>
#include <string_view>

namespace extender::wire {

// Appends `s` as a quoted JSON string: escapes `"` `\` and control characters, and, as Go does,
// `<` `>` `&` U+2028 U+2029 as \u escapes; invalid UTF-8 becomes \ufffd, as in Go.
void append_json_string(std::string& out, std::string_view s);

// Go's encoding/json field matching for an ASCII field name: equal under case folding, where Go
// also folds U+017F to 's' and U+212A to 'k'.
bool key_matches(std::string_view key, std::string_view field);

// True when no array/object in `json` nests deeper than `limit` (strings are skipped).
bool nesting_within(std::string_view json, std::size_t limit);

// True when `s` is valid UTF-8.
bool valid_utf8(std::string_view s);

}  // namespace extender::wire
