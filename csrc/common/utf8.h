#pragma once
// UTF-8: validity (the JSON writers replace what is not valid, the capture reader refuses it where
// the text reaches Python as str) and encoding a code point (the JSON readers' \u escapes).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace perfprof {

// Length of the valid UTF-8 sequence of two bytes or more starting at text[i], or 0 if there is
// none there.
size_t utf8_sequence_length(std::string_view text, size_t i);

// Whether `text` is valid UTF-8 throughout.
bool is_valid_utf8(std::string_view text);

// Appends code point `code` (at most U+10FFFF) to `out` as UTF-8.
void append_utf8(std::string& out, uint32_t code);

}  // namespace perfprof
