// Reward helpers as CompilerGym defines them: a cost-function reward is the
// drop in cost since the previous step; the "Oz" variants divide it by the
// improvement -Oz achieves over the unoptimized benchmark (at least 1), so
// an episode that reaches -Oz's cost has a return of 1.
//
// Where to compute the costs cheaply: the instruction count is a walk over
// the module on the worker right after the step (microseconds; skip it when
// PassOutcome::changed is false and reuse the previous count). The .text
// size needs an in-process codegen (milliseconds): compute it only when that
// reward is requested, also only when the IR changed (ModuleState caches it),
// and take the O0/Oz denominators from Baselines computed once per benchmark.
#pragma once

#include <cstdint>

#include "compilers/llvm_engine/baselines.h"

namespace kiln::llvm_engine {

// IrInstructionCount: previous - current.
double irInstructionCountReward(std::int64_t previous, std::int64_t current);

// IrInstructionCountOz: (previous - current) / max(O0 - Oz, 1).
double irInstructionCountOzReward(std::int64_t previous, std::int64_t current,
                                  const Baselines& baselines);

// ObjectTextSizeBytes: previous - current.
double objectTextSizeReward(std::int64_t previous, std::int64_t current);

// ObjectTextSizeOz: (previous - current) / max(textO0 - textOz, 1).
double objectTextSizeOzReward(std::int64_t previous, std::int64_t current,
                              const Baselines& baselines);

}  // namespace kiln::llvm_engine
