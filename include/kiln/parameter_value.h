// Parsing of session and service parameter values, which arrive as text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <kiln/status.h>

namespace kiln {

// The whole of `value` as an unsigned integer, or invalid argument naming the
// parameter `key`, what it wants (e.g. "an unsigned integer") and what came.
Result<std::uint64_t> parseUnsignedParameter(const std::string& key, const std::string& value,
                                             std::string_view wanted);

// The refusal of a client's `value` for `key` above the operator's
// `ceiling` (both in `unit`); `setBy` names where the ceiling comes from
// (e.g. "the operator's --cache-bytes").
Status aboveCeiling(std::string_view key, std::uint64_t value, std::uint64_t ceiling,
                    std::string_view unit, std::string_view setBy);

}  // namespace kiln
