#include "tools/learn/mlp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace kiln::learn {
namespace {

// loss = sum over the batch of (output . weights), so d(loss)/d(output) = weights.
double weightedOutput(const Mlp& mlp, const std::vector<float>& input, unsigned rows,
                      const std::vector<float>& weights) {
  Mlp::Activations a;
  mlp.forward(input, rows, a);
  double loss = 0;
  for (std::size_t i = 0; i < a.output().size(); ++i) loss += a.output()[i] * weights[i];
  return loss;
}

TEST(MlpTest, BackwardMatchesFiniteDifferences) {
  std::mt19937_64 random(7);
  Mlp mlp({5, 7, 6, 3}, random, 0.5f);
  const unsigned rows = 4;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> input(rows * 5), weights(rows * 3);
  for (float& x : input) x = normal(random);
  for (float& w : weights) w = normal(random);
  // Biases start at 0; move them so that their gradients are exercised at a general point.
  for (float& p : mlp.parameters()) p += 0.1f * normal(random);

  Mlp::Activations a;
  mlp.forward(input, rows, a);
  std::vector<float> gradient(mlp.parameters().size(), 0.0f);
  mlp.backward(a, weights, gradient);

  const float h = 1e-2f;
  double worst = 0;
  for (std::size_t p = 0; p < mlp.parameters().size(); ++p) {
    const float kept = mlp.parameters()[p];
    mlp.parameters()[p] = kept + h;
    const double up = weightedOutput(mlp, input, rows, weights);
    mlp.parameters()[p] = kept - h;
    const double down = weightedOutput(mlp, input, rows, weights);
    mlp.parameters()[p] = kept;
    const double numeric = (up - down) / (2 * h);
    worst = std::max(worst, std::abs(numeric - gradient[p]) / std::max(1.0, std::abs(numeric)));
  }
  EXPECT_LT(worst, 2e-3) << "analytic and numeric gradients disagree";
}

TEST(MlpTest, BackwardAccumulatesIntoTheGradient) {
  std::mt19937_64 random(1);
  Mlp mlp({3, 4, 2}, random);
  std::vector<float> input{1, 2, 3}, outputGradient{1, -1};
  Mlp::Activations a;
  mlp.forward(input, 1, a);
  std::vector<float> once(mlp.parameters().size(), 0.0f), twice(mlp.parameters().size(), 0.0f);
  mlp.backward(a, outputGradient, once);
  mlp.backward(a, outputGradient, twice);
  mlp.backward(a, outputGradient, twice);
  for (std::size_t i = 0; i < once.size(); ++i) EXPECT_FLOAT_EQ(twice[i], 2 * once[i]);
}

TEST(MlpTest, AdamFitsALinearFunction) {
  std::mt19937_64 random(3);
  Mlp mlp({2, 16, 1}, random);
  Adam adam(mlp.parameters().size(), 1e-2f);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> input(64 * 2), target(64);
  for (unsigned r = 0; r < 64; ++r) {
    input[2 * r] = uniform(random);
    input[2 * r + 1] = uniform(random);
    target[r] = 0.5f * input[2 * r] - 0.3f * input[2 * r + 1];
  }
  auto meanSquaredError = [&](std::vector<float>* outputGradient) {
    Mlp::Activations a;
    mlp.forward(input, 64, a);
    double loss = 0;
    if (outputGradient) outputGradient->assign(64, 0.0f);
    for (unsigned r = 0; r < 64; ++r) {
      const float error = a.output()[r] - target[r];
      loss += error * error / 64;
      if (outputGradient) (*outputGradient)[r] = 2 * error / 64;
    }
    if (outputGradient) {
      std::vector<float> gradient(mlp.parameters().size(), 0.0f);
      mlp.backward(a, *outputGradient, gradient);
      adam.step(mlp.parameters(), gradient);
    }
    return loss;
  };
  const double before = meanSquaredError(nullptr);
  std::vector<float> outputGradient;
  for (int i = 0; i < 300; ++i) meanSquaredError(&outputGradient);
  const double after = meanSquaredError(nullptr);
  EXPECT_LT(after, before / 50) << before << " -> " << after;
}

TEST(MlpTest, GradientNormIsClipped) {
  std::vector<float> gradient{3, 4};
  EXPECT_FLOAT_EQ(clipGradientNorm(gradient, 1.0f), 5.0f);
  EXPECT_NEAR(std::hypot(gradient[0], gradient[1]), 1.0f, 1e-6);
  EXPECT_FLOAT_EQ(gradient[0] / gradient[1], 0.75f);
  std::vector<float> small{0.3f, 0.4f};
  clipGradientNorm(small, 1.0f);
  EXPECT_FLOAT_EQ(small[0], 0.3f);
}

TEST(MlpTest, ASizeOfZeroIsRefused) {
  std::mt19937_64 random(1);
  EXPECT_THROW(Mlp({3, 0, 2}, random), std::invalid_argument);
  EXPECT_THROW(Mlp({3}, random), std::invalid_argument);
}

}  // namespace
}  // namespace kiln::learn
