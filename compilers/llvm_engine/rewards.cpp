#include "compilers/llvm_engine/rewards.h"

#include <algorithm>

namespace kiln::llvm_engine {
namespace {

double delta(std::int64_t previous, std::int64_t current) {
  return static_cast<double>(previous - current);
}

// CompilerGym's BaselineImprovementNormalizedReward: never divide by less
// than 1, even when the baseline made things worse.
double ozNorm(std::int64_t o0, std::int64_t oz) {
  return static_cast<double>(std::max<std::int64_t>(o0 - oz, 1));
}

}  // namespace

double irInstructionCountReward(std::int64_t previous, std::int64_t current) {
  return delta(previous, current);
}

double irInstructionCountOzReward(std::int64_t previous, std::int64_t current,
                                  const Baselines& baselines) {
  return delta(previous, current) / ozNorm(baselines.instCountO0, baselines.instCountOz);
}

double objectTextSizeReward(std::int64_t previous, std::int64_t current) {
  return delta(previous, current);
}

double objectTextSizeOzReward(std::int64_t previous, std::int64_t current,
                              const Baselines& baselines) {
  return delta(previous, current) / ozNorm(baselines.textSizeO0, baselines.textSizeOz);
}

}  // namespace kiln::llvm_engine
