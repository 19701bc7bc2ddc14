// The request id of a message of which only the first bytes are at hand: a
// frame too large to take is dropped unread, and its refusal still has to
// reach the request that waits for it (worker/direct_channels.h,
// common/transport/router_io.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln {

// Enough bytes of a message for its envelope's root.
inline constexpr std::size_t kRequestIdPrefixBytes = 4096;

// 0 when `prefix` does not hold the envelope's root (its first segment's
// start, where a message builder puts it).
std::uint64_t requestIdFromPrefix(std::string_view prefix);

}  // namespace kiln
