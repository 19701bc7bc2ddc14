#include "tools/learn/mlp.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

namespace kiln::learn {

Mlp::Mlp(std::vector<unsigned> sizes, std::mt19937_64& random, float outputScale)
    : sizes_(std::move(sizes)) {
  if (sizes_.size() < 2 || std::find(sizes_.begin(), sizes_.end(), 0u) != sizes_.end()) {
    throw std::invalid_argument("an Mlp needs an input and an output size, none of them 0");
  }
  std::size_t total = 0;
  for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
    offsets_.push_back(total);
    total += static_cast<std::size_t>(sizes_[l]) * sizes_[l + 1] + sizes_[l + 1];
  }
  parameters_.assign(total, 0.0f);
  for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
    const unsigned in = sizes_[l], out = sizes_[l + 1];
    const bool last = l + 2 == sizes_.size();
    std::normal_distribution<float> normal(
        0.0f, (last ? outputScale : 1.0f) / std::sqrt(static_cast<float>(in)));
    float* weights = parameters_.data() + offsets_[l];
    for (std::size_t i = 0; i < static_cast<std::size_t>(in) * out; ++i)
      weights[i] = normal(random);
  }
}

void Mlp::forward(std::span<const float> input, unsigned rows, Activations& a) const {
  assert(input.size() == static_cast<std::size_t>(rows) * inputs());
  a.rows = rows;
  a.layers.resize(sizes_.size());
  a.layers[0].assign(input.begin(), input.end());
  for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
    const unsigned in = sizes_[l], out = sizes_[l + 1];
    const float* weights = parameters_.data() + offsets_[l];
    const float* bias = weights + static_cast<std::size_t>(in) * out;
    const bool hidden = l + 2 < sizes_.size();
    const std::vector<float>& x = a.layers[l];
    std::vector<float>& y = a.layers[l + 1];
    y.resize(static_cast<std::size_t>(rows) * out);
    for (unsigned r = 0; r < rows; ++r) {
      const float* xr = x.data() + static_cast<std::size_t>(r) * in;
      float* yr = y.data() + static_cast<std::size_t>(r) * out;
      for (unsigned o = 0; o < out; ++o) {
        const float* w = weights + static_cast<std::size_t>(o) * in;
        float sum = 0.0f;
        for (unsigned i = 0; i < in; ++i) sum += w[i] * xr[i];
        sum += bias[o];
        yr[o] = hidden ? std::tanh(sum) : sum;
      }
    }
  }
}

void Mlp::backward(const Activations& a, std::span<const float> outputGradient,
                   std::span<float> gradient) const {
  assert(gradient.size() == parameters_.size());
  assert(outputGradient.size() == static_cast<std::size_t>(a.rows) * outputs());
  std::vector<float> upper(outputGradient.begin(), outputGradient.end()), lower;
  for (std::size_t l = sizes_.size() - 1; l-- > 0;) {
    const unsigned in = sizes_[l], out = sizes_[l + 1];
    const float* weights = parameters_.data() + offsets_[l];
    float* dWeights = gradient.data() + offsets_[l];
    float* dBias = dWeights + static_cast<std::size_t>(in) * out;
    const std::vector<float>& x = a.layers[l];
    const bool needLower = l > 0;
    if (needLower) lower.assign(static_cast<std::size_t>(a.rows) * in, 0.0f);
    for (unsigned r = 0; r < a.rows; ++r) {
      const float* xr = x.data() + static_cast<std::size_t>(r) * in;
      const float* gr = upper.data() + static_cast<std::size_t>(r) * out;
      float* lr = needLower ? lower.data() + static_cast<std::size_t>(r) * in : nullptr;
      for (unsigned o = 0; o < out; ++o) {
        const float g = gr[o];
        if (g == 0.0f) continue;
        float* dw = dWeights + static_cast<std::size_t>(o) * in;
        for (unsigned i = 0; i < in; ++i) dw[i] += g * xr[i];
        dBias[o] += g;
        if (lr != nullptr) {
          const float* w = weights + static_cast<std::size_t>(o) * in;
          for (unsigned i = 0; i < in; ++i) lr[i] += g * w[i];
        }
      }
    }
    if (!needLower) break;
    // Through the tanh of layer l's output (x = tanh(pre)): d/dpre = d/dx * (1 - x^2).
    for (std::size_t k = 0; k < lower.size(); ++k) lower[k] *= 1.0f - x[k] * x[k];
    upper.swap(lower);
  }
}

Adam::Adam(std::size_t parameters, float learningRate, float beta1, float beta2, float epsilon)
    : learningRate_(learningRate),
      beta1_(beta1),
      beta2_(beta2),
      epsilon_(epsilon),
      first_(parameters, 0.0f),
      second_(parameters, 0.0f) {}

void Adam::step(std::span<float> parameters, std::span<const float> gradient) {
  assert(parameters.size() == first_.size() && gradient.size() == first_.size());
  ++steps_;
  const float correct1 = 1.0f - std::pow(beta1_, static_cast<float>(steps_));
  const float correct2 = 1.0f - std::pow(beta2_, static_cast<float>(steps_));
  const float rate = learningRate_ * std::sqrt(correct2) / correct1;
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    first_[i] = beta1_ * first_[i] + (1.0f - beta1_) * gradient[i];
    second_[i] = beta2_ * second_[i] + (1.0f - beta2_) * gradient[i] * gradient[i];
    parameters[i] -= rate * first_[i] / (std::sqrt(second_[i]) + epsilon_);
  }
}

float clipGradientNorm(std::span<float> gradient, float maxNorm) {
  double squares = 0;
  for (float g : gradient) squares += static_cast<double>(g) * g;
  const float norm = static_cast<float>(std::sqrt(squares));
  if (norm > maxNorm && norm > 0.0f) {
    const float scale = maxNorm / norm;
    for (float& g : gradient) g *= scale;
  }
  return norm;
}

}  // namespace kiln::learn
