// A learner's update, the training lull of `kiln bench nesting`: Adam steps
// of a policy network of the demo PPO's shape (Autophase in, two hidden
// layers, a logit per pass) over a batch as large as the steps the
// experiment just collected. Real computation, as a trainer's update is, not
// a sleep. Each experiment's learner runs in a process of its own, which the
// bench gives its own CPU budget: a learner machine, as on a cluster where
// learners train elsewhere, so that an update takes as long in every layout
// whatever the other learners do. Seeded: the same work in every layout.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include <kiln/status.h>
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

// A LearnerUpdate in a child process (forked: it runs no thread of this
// one), asked for updates over a pipe.
class LearnerProcess {
 public:
  static Result<std::unique_ptr<LearnerProcess>> start(std::uint64_t seed, unsigned batchRows);
  // Stops and reaps the child.
  ~LearnerProcess();
  LearnerProcess(const LearnerProcess&) = delete;
  LearnerProcess& operator=(const LearnerProcess&) = delete;

  // Runs an update of `epochs` epochs in the child and waits for it.
  Status update(unsigned epochs);
  pid_t pid() const { return pid_; }

 private:
  LearnerProcess(pid_t pid, int requests, int replies)
      : pid_(pid), requests_(requests), replies_(replies) {}
  pid_t pid_;
  int requests_, replies_;
};

}  // namespace kiln::bench
