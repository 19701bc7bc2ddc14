#include "tools/learn/ppo.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace kiln::learn {
namespace {

std::vector<unsigned> layerSizes(unsigned inputs, const PpoConfig& c, unsigned outputs) {
  std::vector<unsigned> sizes{inputs};
  for (unsigned l = 0; l < c.hiddenLayers; ++l) sizes.push_back(c.hidden);
  sizes.push_back(outputs);
  return sizes;
}

void normalize(std::vector<float>& values) {
  if (values.size() < 2) return;
  double mean = std::accumulate(values.begin(), values.end(), 0.0) / values.size();
  double squares = 0;
  for (float v : values) squares += (v - mean) * (v - mean);
  const double deviation = std::sqrt(squares / (values.size() - 1));
  for (float& v : values) v = static_cast<float>((v - mean) / (deviation + 1e-8));
}

}  // namespace

void Rollout::clear() {
  steps = 0;
  features.clear();
  actions.clear();
  logProbabilities.clear();
  values.clear();
  rewards.clear();
  episodeEnded.clear();
  lastValues.clear();
}

std::vector<float> generalizedAdvantages(const Rollout& r, float gamma, float lambda) {
  const std::size_t rows = static_cast<std::size_t>(r.steps) * r.envs;
  assert(r.rewards.size() == rows && r.values.size() == rows && r.lastValues.size() == r.envs);
  std::vector<float> advantages(rows, 0.0f);
  for (unsigned e = 0; e < r.envs; ++e) {
    float running = 0.0f;
    for (unsigned t = r.steps; t-- > 0;) {
      const std::size_t row = static_cast<std::size_t>(t) * r.envs + e;
      const float next = t + 1 == r.steps ? r.lastValues[e] : r.values[row + r.envs];
      const float continues = r.episodeEnded[row] != 0 ? 0.0f : 1.0f;
      const float delta = r.rewards[row] + gamma * next * continues - r.values[row];
      running = delta + gamma * lambda * continues * running;
      advantages[row] = running;
    }
  }
  return advantages;
}

void logSoftmaxRows(std::span<float> logits, unsigned width) {
  for (std::size_t start = 0; start < logits.size(); start += width) {
    float* row = logits.data() + start;
    const float top = *std::max_element(row, row + width);
    double sum = 0;
    for (unsigned a = 0; a < width; ++a) sum += std::exp(row[a] - top);
    // Shift first: top + log(sum) would lose the small part to rounding
    // when the logits are large.
    const auto logSum = static_cast<float>(std::log(sum));
    for (unsigned a = 0; a < width; ++a) row[a] = (row[a] - top) - logSum;
  }
}

PpoLearner::PpoLearner(unsigned features, unsigned actions, const PpoConfig& config,
                       std::uint64_t seed)
    : config_(config),
      random_(seed),
      actor_(layerSizes(features, config, actions), random_, 0.01f),
      critic_(layerSizes(features, config, 1), random_, 1.0f),
      actorOptimizer_(actor_.parameters().size(), config.learningRate),
      criticOptimizer_(critic_.parameters().size(), config.learningRate) {}

std::vector<PpoLearner::Decision> PpoLearner::act(std::span<const float> features, unsigned rows,
                                                  bool greedy) {
  actor_.forward(features, rows, actorActivations_);
  std::vector<float> logProbabilities(actorActivations_.output().begin(),
                                      actorActivations_.output().end());
  const unsigned width = actor_.outputs();
  logSoftmaxRows(logProbabilities, width);
  std::vector<float> critic = values(features, rows);
  std::vector<Decision> decisions(rows);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (unsigned r = 0; r < rows; ++r) {
    const float* row = logProbabilities.data() + static_cast<std::size_t>(r) * width;
    unsigned chosen = 0;
    if (greedy) {
      chosen = static_cast<unsigned>(std::max_element(row, row + width) - row);
    } else {
      double u = uniform(random_), cumulative = 0;
      chosen = width - 1;
      for (unsigned a = 0; a < width; ++a) {
        cumulative += std::exp(row[a]);
        if (u < cumulative) {
          chosen = a;
          break;
        }
      }
    }
    decisions[r] = {chosen, row[chosen], critic[r]};
  }
  return decisions;
}

std::vector<float> PpoLearner::values(std::span<const float> features, unsigned rows) {
  critic_.forward(features, rows, criticActivations_);
  return {criticActivations_.output().begin(), criticActivations_.output().end()};
}

UpdateStats PpoLearner::update(const Rollout& rollout) {
  const unsigned rows = rollout.steps * rollout.envs;
  const unsigned featureCount = actor_.inputs(), width = actor_.outputs();
  assert(rollout.features.size() == static_cast<std::size_t>(rows) * featureCount);
  std::vector<float> advantages = generalizedAdvantages(rollout, config_.gamma, config_.lambda);
  std::vector<float> returns(rows);
  for (unsigned i = 0; i < rows; ++i) returns[i] = advantages[i] + rollout.values[i];
  normalize(advantages);

  UpdateStats stats;
  unsigned batches = 0;
  std::vector<unsigned> order(rows);
  std::iota(order.begin(), order.end(), 0u);
  std::vector<float> x, logitGradient, valueGradient, probabilities(width);
  std::vector<float> actorGradient(actor_.parameters().size());
  std::vector<float> criticGradient(critic_.parameters().size());
  const unsigned minibatch = std::max(1u, std::min(config_.minibatch, rows));
  for (unsigned epoch = 0; epoch < config_.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), random_);
    for (unsigned start = 0; start < rows; start += minibatch) {
      const unsigned m = std::min(minibatch, rows - start);
      x.resize(static_cast<std::size_t>(m) * featureCount);
      for (unsigned i = 0; i < m; ++i) {
        std::copy_n(
            rollout.features.data() + static_cast<std::size_t>(order[start + i]) * featureCount,
            featureCount, x.data() + static_cast<std::size_t>(i) * featureCount);
      }
      actor_.forward(x, m, actorActivations_);
      critic_.forward(x, m, criticActivations_);
      std::vector<float> logProbabilities(actorActivations_.output().begin(),
                                          actorActivations_.output().end());
      logSoftmaxRows(logProbabilities, width);
      logitGradient.assign(static_cast<std::size_t>(m) * width, 0.0f);
      valueGradient.assign(m, 0.0f);
      float policyLoss = 0, valueLoss = 0, entropySum = 0, kl = 0, clipped = 0;
      for (unsigned i = 0; i < m; ++i) {
        const unsigned row = order[start + i];
        const float* logP = logProbabilities.data() + static_cast<std::size_t>(i) * width;
        float* dLogits = logitGradient.data() + static_cast<std::size_t>(i) * width;
        const unsigned action = rollout.actions[row];
        const float advantage = advantages[row];
        const float logRatio = logP[action] - rollout.logProbabilities[row];
        const float ratio = std::exp(logRatio);
        const float clippedRatio = std::clamp(ratio, 1.0f - config_.clip, 1.0f + config_.clip);
        policyLoss += -std::min(ratio * advantage, clippedRatio * advantage);
        kl += (ratio - 1.0f) - logRatio;
        // The clipped term's gradient is zero once the ratio leaves the trust
        // region in the advantage's direction.
        const bool outside = (advantage > 0 && ratio > 1.0f + config_.clip) ||
                             (advantage < 0 && ratio < 1.0f - config_.clip);
        if (outside) clipped += 1.0f;
        const float dLogP = outside ? 0.0f : -ratio * advantage / static_cast<float>(m);
        float entropy = 0;
        for (unsigned a = 0; a < width; ++a) {
          probabilities[a] = std::exp(logP[a]);
          entropy -= probabilities[a] * logP[a];
        }
        entropySum += entropy;
        for (unsigned a = 0; a < width; ++a) {
          const float p = probabilities[a];
          // d log p_action / d z_a = [a == action] - p_a;
          // d(-c * entropy) / d z_a = c * p_a * (log p_a + entropy).
          dLogits[a] = dLogP * ((a == action ? 1.0f : 0.0f) - p) +
                       config_.entropyCoefficient / static_cast<float>(m) * p * (logP[a] + entropy);
        }
        const float error = criticActivations_.output()[i] - returns[row];
        valueLoss += error * error;
        valueGradient[i] = 2.0f * config_.valueCoefficient * error / static_cast<float>(m);
      }
      std::fill(actorGradient.begin(), actorGradient.end(), 0.0f);
      std::fill(criticGradient.begin(), criticGradient.end(), 0.0f);
      actor_.backward(actorActivations_, logitGradient, actorGradient);
      critic_.backward(criticActivations_, valueGradient, criticGradient);
      clipGradientNorm(actorGradient, config_.maxGradientNorm);
      clipGradientNorm(criticGradient, config_.maxGradientNorm);
      actorOptimizer_.step(actor_.parameters(), actorGradient);
      criticOptimizer_.step(critic_.parameters(), criticGradient);
      stats.policyLoss += policyLoss / m;
      stats.valueLoss += valueLoss / m;
      stats.entropy += entropySum / m;
      stats.approxKl += kl / m;
      stats.clipFraction += clipped / m;
      ++batches;
    }
  }
  if (batches > 0) {
    for (float* f : {&stats.policyLoss, &stats.valueLoss, &stats.entropy, &stats.approxKl,
                     &stats.clipFraction}) {
      *f /= static_cast<float>(batches);
    }
  }
  return stats;
}

}  // namespace kiln::learn
