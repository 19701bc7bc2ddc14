// Text from outside (hostnames, endpoints, experiment names) may be any
// bytes, but JSON (RFC 8259) and Prometheus label values must be UTF-8: a
// strict reader refuses the whole document over one bad byte. The writers of
// those formats keep valid sequences and replace each byte that does not
// start one with U+FFFD.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kiln {

// The length (1 to 4) of the well-formed UTF-8 sequence `text` starts with
// (Unicode's table 3-7), or 0: a stray continuation byte, an overlong form,
// a surrogate, a code point above U+10FFFF, or a sequence cut short.
std::size_t utf8SequenceLength(std::string_view text);

// U+FFFD REPLACEMENT CHARACTER, as UTF-8.
inline constexpr std::string_view kUtf8Replacement = "\xEF\xBF\xBD";

// Appends the sequence `text` starts with, or U+FFFD for a byte that starts
// none; returns how many bytes of `text` it used (at least 1; `text` non-empty).
std::size_t appendUtf8Sequence(std::string& out, std::string_view text);

}  // namespace kiln
