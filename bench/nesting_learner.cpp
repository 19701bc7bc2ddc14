#include "bench/nesting_learner.h"

#include <algorithm>
#include <chrono>

namespace kiln::bench {
namespace {

// The demo's policy: Autophase's 56 counts and the episode's progress in,
// 142 passes out.
constexpr unsigned kInputs = 57, kHidden = 64, kActions = 142;

}  // namespace

LearnerUpdate::LearnerUpdate(std::uint64_t seed, unsigned batchRows)
    : random_(seed),
      network_({kInputs, kHidden, kHidden, kActions}, random_, 0.01f),
      optimizer_(network_.parameters().size(), 3e-4f),
      rows_(std::max(batchRows, 1u)),
      batch_(static_cast<std::size_t>(rows_) * kInputs),
      outputGradient_(static_cast<std::size_t>(rows_) * kActions),
      gradient_(network_.parameters().size()) {
  std::normal_distribution<float> normal;
  for (float& x : batch_) x = normal(random_);
  for (float& g : outputGradient_) g = normal(random_) / static_cast<float>(rows_);
}

void LearnerUpdate::run(unsigned epochs) {
  for (unsigned e = 0; e < epochs; ++e) {
    network_.forward(batch_, rows_, activations_);
    std::fill(gradient_.begin(), gradient_.end(), 0.0f);
    network_.backward(activations_, outputGradient_, gradient_);
    learn::clipGradientNorm(gradient_, 0.5f);
    optimizer_.step(network_.parameters(), gradient_);
  }
}

double secondsPerEpoch(unsigned batchRows) {
  LearnerUpdate update(1, batchRows);
  update.run(2);  // warm: the first pass allocates the activations
  std::vector<double> seconds;
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    update.run(4);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 4);
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

}  // namespace kiln::bench
