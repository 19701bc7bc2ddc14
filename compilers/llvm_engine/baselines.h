// Per-benchmark reference points computed once (cache them with the
// benchmark): instruction count and object .text size with no passes (O0),
// after `default<O3>` and after `default<Oz>`, each on a clone of the state.
#pragma once

#include <cstdint>

#include <kiln/status.h>

namespace kiln::llvm_engine {

class ModuleState;

struct Baselines {
  std::int64_t instCountO0 = 0;
  std::int64_t instCountO3 = 0;
  std::int64_t instCountOz = 0;
  // Platform dependent (host codegen), like ObjectTextSizeBytes.
  std::int64_t textSizeO0 = 0;
  std::int64_t textSizeO3 = 0;
  std::int64_t textSizeOz = 0;
};

// `state` itself is not changed. Costs two clones, the O3 and Oz pipelines
// and three in-process codegens (tens of milliseconds for small programs).
Result<Baselines> computeBaselines(const ModuleState& state);

}  // namespace kiln::llvm_engine
