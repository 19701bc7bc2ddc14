#include "tools/learn/ppo.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace kiln::learn {
namespace {

TEST(PpoTest, AdvantagesFollowGaeAndStopAtAnEpisodesEnd) {
  // One env, three steps; the episode ends after the second.
  Rollout r;
  r.envs = 1;
  r.steps = 3;
  r.rewards = {1, 2, 4};
  r.values = {0.5f, 0.25f, 1};
  r.episodeEnded = {0, 1, 0};
  r.lastValues = {2};
  const float g = 0.9f, l = 0.5f;
  auto advantages = generalizedAdvantages(r, g, l);
  const float d2 = 4 + g * 2 - 1;  // bootstraps from the last value
  const float d1 = 2 + 0 - 0.25f;  // the episode ended: no bootstrap
  const float d0 = 1 + g * 0.25f - 0.5f;
  EXPECT_FLOAT_EQ(advantages[2], d2);
  EXPECT_FLOAT_EQ(advantages[1], d1);  // nothing of step 2 flows back
  EXPECT_FLOAT_EQ(advantages[0], d0 + g * l * d1);
}

TEST(PpoTest, AdvantagesOfTwoEnvsStayApart) {
  Rollout r;
  r.envs = 2;
  r.steps = 2;
  r.rewards = {1, 10, 1, 10};  // rows t * envs + e
  r.values = {0, 0, 0, 0};
  r.episodeEnded = {0, 0, 0, 0};
  r.lastValues = {0, 0};
  auto advantages = generalizedAdvantages(r, 1.0f, 1.0f);
  EXPECT_FLOAT_EQ(advantages[0], 2);
  EXPECT_FLOAT_EQ(advantages[1], 20);
  EXPECT_FLOAT_EQ(advantages[2], 1);
  EXPECT_FLOAT_EQ(advantages[3], 10);
}

TEST(PpoTest, LogSoftmaxRowsSumToOneAndSurviveLargeLogits) {
  std::vector<float> logits{1, 2, 3, 1000, 1000, -1000};
  logSoftmaxRows(logits, 3);
  for (int row = 0; row < 2; ++row) {
    double sum = 0;
    for (int a = 0; a < 3; ++a) sum += std::exp(logits[row * 3 + a]);
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
  EXPECT_NEAR(logits[3], std::log(0.5), 1e-5);
}

// A contextual bandit: the observation is a one-hot context, the action
// that matches the context pays 1, every other pays 0. Episodes of one step.
struct Bandit {
  static constexpr unsigned kContexts = 4;
  std::mt19937_64 random{11};
  std::vector<unsigned> contexts;
  std::vector<float> observe(unsigned envs) {
    contexts.resize(envs);
    std::vector<float> features(envs * kContexts, 0.0f);
    for (unsigned e = 0; e < envs; ++e) {
      contexts[e] = static_cast<unsigned>(random() % kContexts);
      features[e * kContexts + contexts[e]] = 1;
    }
    return features;
  }
};

// Trains on the bandit and returns the greedy policy's accuracy.
double trainOnBandit(std::uint64_t seed, unsigned updates, std::vector<float>* firstDecisions) {
  PpoConfig config;
  config.hidden = 32;
  config.learningRate = 3e-3f;
  config.minibatch = 32;
  PpoLearner learner(Bandit::kContexts, Bandit::kContexts, config, seed);
  Bandit bandit;
  const unsigned envs = 8, steps = 8;
  for (unsigned u = 0; u < updates; ++u) {
    Rollout r;
    r.envs = envs;
    for (unsigned t = 0; t < steps; ++t) {
      auto features = bandit.observe(envs);
      auto decisions = learner.act(features, envs);
      r.features.insert(r.features.end(), features.begin(), features.end());
      for (unsigned e = 0; e < envs; ++e) {
        if (firstDecisions && u == 0) firstDecisions->push_back(decisions[e].logProbability);
        r.actions.push_back(decisions[e].action);
        r.logProbabilities.push_back(decisions[e].logProbability);
        r.values.push_back(decisions[e].value);
        r.rewards.push_back(decisions[e].action == bandit.contexts[e] ? 1.0f : 0.0f);
        r.episodeEnded.push_back(1);
      }
      ++r.steps;
    }
    r.lastValues.assign(envs, 0.0f);
    learner.update(r);
  }
  unsigned right = 0;
  const unsigned trials = 200;
  for (unsigned i = 0; i < trials; ++i) {
    auto features = bandit.observe(1);
    right += learner.act(features, 1, /*greedy=*/true).front().action == bandit.contexts[0];
  }
  return static_cast<double>(right) / trials;
}

TEST(PpoTest, LearnsAContextualBandit) {
  // Chance is 25%; an untrained policy is near it.
  EXPECT_LT(trainOnBandit(5, 0, nullptr), 0.6);
  EXPECT_GT(trainOnBandit(5, 40, nullptr), 0.95);
}

TEST(PpoTest, OneSeedGivesTheSameDecisions) {
  std::vector<float> a, b, c;
  trainOnBandit(9, 1, &a);
  trainOnBandit(9, 1, &b);
  trainOnBandit(10, 1, &c);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(PpoTest, TheFirstPolicyIsNearUniform) {
  PpoLearner learner(6, 100, PpoConfig{}, 3);
  std::vector<float> features(6, 1.0f);
  auto decision = learner.act(features, 1).front();
  EXPECT_NEAR(decision.logProbability, std::log(1.0 / 100), 0.1);
}

}  // namespace
}  // namespace kiln::learn
