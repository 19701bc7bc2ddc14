// A small dense network for the learners kiln runs itself (the demo's PPO):
// tanh hidden layers and a linear output, over batches of float rows, with
// the backward pass written out and an Adam optimizer. Pure computation on
// one thread: no I/O, no global state; randomness comes from the caller.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace kiln::learn {

class Mlp {
 public:
  // sizes = {inputs, hidden..., outputs}, at least two. Weights start
  // scaled normal (fan-in), the output layer's times `outputScale` (a small
  // scale keeps a policy's first logits near uniform); biases start at 0.
  Mlp(std::vector<unsigned> sizes, std::mt19937_64& random, float outputScale = 1.0f);

  unsigned inputs() const { return sizes_.front(); }
  unsigned outputs() const { return sizes_.back(); }
  // Every weight and bias, layer by layer (weights [out][in] row-major, then biases).
  std::span<float> parameters() { return parameters_; }
  std::span<const float> parameters() const { return parameters_; }

  // The layers' outputs for one batch, kept for the backward pass.
  struct Activations {
    unsigned rows = 0;
    std::vector<std::vector<float>> layers;  // [0] = the input, back() = the output
    std::span<const float> output() const { return layers.back(); }
  };
  // `input` holds `rows` rows of inputs() values.
  void forward(std::span<const float> input, unsigned rows, Activations& activations) const;
  // Adds d(loss)/d(parameters) to `gradient` (parameters()' layout), given
  // d(loss)/d(output) for the batch of the last forward().
  void backward(const Activations& activations, std::span<const float> outputGradient,
                std::span<float> gradient) const;

 private:
  std::vector<unsigned> sizes_;
  std::vector<float> parameters_;
  std::vector<std::size_t> offsets_;  // where each layer's weights start
};

// Adam (Kingma and Ba) over one flat parameter vector.
class Adam {
 public:
  Adam(std::size_t parameters, float learningRate, float beta1 = 0.9f, float beta2 = 0.999f,
       float epsilon = 1e-5f);
  void step(std::span<float> parameters, std::span<const float> gradient);
  float learningRate() const { return learningRate_; }

 private:
  float learningRate_, beta1_, beta2_, epsilon_;
  std::vector<float> first_, second_;
  std::uint64_t steps_ = 0;
};

// Scales `gradient` down so that its L2 norm is at most `maxNorm`; returns
// the norm it had.
float clipGradientNorm(std::span<float> gradient, float maxNorm);

}  // namespace kiln::learn
