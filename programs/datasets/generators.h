// Generated benchmarks: generator://csmith-v0/<seed> (csmith, then clang to
// bitcode) and generator://llvm-stress-v0/<seed> (textual IR). Deterministic per
// seed. Each call works in its own fresh scratch directory, removed afterwards,
// so concurrent calls share no files.
#pragma once

#include <cstdint>
#include <string_view>

#include <kiln/status.h>
#include "programs/datasets/dataset_types.h"

namespace kiln::datasets {

inline constexpr std::string_view kCsmithDataset = "csmith-v0";
inline constexpr std::string_view kLlvmStressDataset = "llvm-stress-v0";

// A canonical decimal seed in [0, 2^32): digits only, no sign, no leading zeros.
Result<std::uint32_t> parseSeed(std::string_view text);

// compile-error naming the seed and the tool's stderr tail when csmith or clang
// fail; timeout when either overruns its deadline.
Result<BenchmarkBytes> generateCsmith(const DatasetConfig& config, std::uint32_t seed);
Result<BenchmarkBytes> generateLlvmStress(const DatasetConfig& config, std::uint32_t seed);

}  // namespace kiln::datasets
