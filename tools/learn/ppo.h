// Proximal policy optimization (Schulman et al. 2017) for a discrete action
// space: an actor and a critic (tools/learn/mlp.h), generalized advantage
// estimation, and the clipped surrogate update over minibatches. The
// learner owns its networks, optimizers and random generator, so one seed
// fixes every decision and update (the demo relies on that to compare
// layouts on the same learning curve). No I/O: the caller collects rollouts.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "tools/learn/mlp.h"

namespace kiln::learn {

struct PpoConfig {
  unsigned hidden = 64;  // units per hidden layer
  unsigned hiddenLayers = 2;
  float learningRate = 3e-4f;
  unsigned epochs = 4;  // passes over a rollout per update
  unsigned minibatch = 64;
  float clip = 0.2f;
  float valueCoefficient = 0.5f;
  float entropyCoefficient = 0.01f;
  float gamma = 0.99f;
  float lambda = 0.95f;  // GAE
  float maxGradientNorm = 0.5f;
};

// A rollout of `steps` steps of `envs` environments, row (t * envs + e).
struct Rollout {
  unsigned envs = 0;
  unsigned steps = 0;
  std::vector<float> features;  // rows of the learner's feature count
  std::vector<unsigned> actions;
  std::vector<float> logProbabilities;  // of the actions, when taken
  std::vector<float> values;            // the critic's, when taken
  std::vector<float> rewards;
  std::vector<std::uint8_t> episodeEnded;  // after this step
  std::vector<float> lastValues;           // per env: the critic on the state after the last step
  void clear();
};

// GAE(gamma, lambda) advantages per row; an ended episode cuts the sum.
std::vector<float> generalizedAdvantages(const Rollout& rollout, float gamma, float lambda);

struct UpdateStats {
  float policyLoss = 0, valueLoss = 0, entropy = 0, approxKl = 0, clipFraction = 0;
};

class PpoLearner {
 public:
  PpoLearner(unsigned features, unsigned actions, const PpoConfig& config, std::uint64_t seed);

  struct Decision {
    unsigned action = 0;
    float logProbability = 0;
    float value = 0;
  };
  // One decision per row of `features`: sampled, or the most likely action.
  std::vector<Decision> act(std::span<const float> features, unsigned rows, bool greedy = false);
  std::vector<float> values(std::span<const float> features, unsigned rows);
  UpdateStats update(const Rollout& rollout);

  unsigned featureCount() const { return actor_.inputs(); }
  unsigned actionCount() const { return actor_.outputs(); }

 private:
  PpoConfig config_;
  std::mt19937_64 random_;
  Mlp actor_, critic_;
  Adam actorOptimizer_, criticOptimizer_;
  Mlp::Activations actorActivations_, criticActivations_;
};

// log softmax of each row of `logits` (rows of `width`), in place.
void logSoftmaxRows(std::span<float> logits, unsigned width);

}  // namespace kiln::learn
