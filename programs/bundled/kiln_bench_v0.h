// The kiln-bench-v0 suite: small, deterministic C programs (programs/bundled/kiln-bench-v0/*.c)
// compiled at build time to unoptimized LLVM bitcode and embedded here, so a worker can
// serve benchmark://kiln-bench-v0/<name> with no files on disk.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace kiln::bundled {

struct EmbeddedBenchmark {
  std::string_view name;                  // "crc32"
  std::string_view description;           // the one-line comment atop the source
  std::span<const std::uint8_t> bitcode;  // clang-19 -O2 -Xclang -disable-llvm-passes output
};

// Every program, sorted by name. Constant data: safe from any thread at any time.
std::span<const EmbeddedBenchmark> kilnBenchV0();

// The program called `name`, or nullptr.
const EmbeddedBenchmark* findKilnBenchV0(std::string_view name);

}  // namespace kiln::bundled
