// How large and how deeply nested a message kiln accepts (common/transport/frame.h
// decodes with these); a plain value, so that public headers such as
// include/kiln/client/client.h need no Cap'n Proto or ZeroMQ to name it.
#pragma once

#include <cstddef>

namespace kiln {

struct FrameLimits {
  std::size_t maxMessageBytes = 64u << 20;  // largest frame accepted (inline benchmarks)
  int nestingLimit = 32;                    // deepest value nesting accepted
};

}  // namespace kiln
