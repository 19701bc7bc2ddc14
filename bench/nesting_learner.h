// A learner's update, the training lull of `kiln bench nesting`: Adam steps
// of a policy network of the demo PPO's shape (Autophase in, two hidden
// layers, a logit per pass) over a batch as large as the steps the
// experiment just collected. Real computation on the learner's thread, as a
// trainer's update is, not a sleep: it takes CPU, and where the learners run
// (outside the workers' budget, as on a cluster) matters. Seeded: the same
// work in every layout.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "tools/learn/mlp.h"

namespace kiln::bench {

class LearnerUpdate {
 public:
  LearnerUpdate(std::uint64_t seed, unsigned batchRows);
  // `epochs` passes over the batch (forward, backward, an Adam step each).
  void run(unsigned epochs);

 private:
  std::mt19937_64 random_;
  learn::Mlp network_;
  learn::Adam optimizer_;
  unsigned rows_;
  std::vector<float> batch_, outputGradient_, gradient_;
  learn::Mlp::Activations activations_;
};

// Seconds one epoch of an update of `batchRows` rows takes on this thread,
// the median of a few (for the calibration of the lull).
double secondsPerEpoch(unsigned batchRows);

}  // namespace kiln::bench
