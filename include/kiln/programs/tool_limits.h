// Limits for every run of one of LLVM's command-line tools (clang, opt,
// llvm-link ...) that kiln starts: a deadline and an address-space limit.
#pragma once

#include <chrono>
#include <cstdint>

namespace kiln::programs {

struct ToolLimits {
  std::chrono::milliseconds timeout{120'000};
  std::uint64_t memoryBytes = std::uint64_t{4} << 30;
  // Run under the compiler confinement of common/security/file_confinement.h:
  // read system directories, write only the working directory (for tools
  // that read what a client sent, e.g. the Runtime linker on a client's
  // object).
  bool confined = false;
};

}  // namespace kiln::programs
