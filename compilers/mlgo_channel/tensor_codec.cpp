// Tensor bytes are copied with memcpy: the stream gives no alignment guarantee.
#include "compilers/mlgo_channel/tensor_codec.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

namespace kiln::mlgo_channel {
namespace {

// LLVM writes host-endian bytes; kiln only runs compilers on the same host.
static_assert(std::endian::native == std::endian::little,
              "the MLGO channel carries host-endian tensors; kiln assumes little endian");

template <class Wire, class Out>
std::vector<Out> readElements(std::string_view bytes, std::size_t count) {
  std::vector<Out> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    Wire element;
    std::memcpy(&element, bytes.data() + i * sizeof(Wire), sizeof(Wire));
    out[i] = static_cast<Out>(element);
  }
  return out;
}

template <class Wire, class In>
Result<std::string> writeElements(const FeatureSpec& spec, std::span<const In> values) {
  std::string bytes(spec.byteSize, '\0');
  for (std::size_t i = 0; i < values.size(); ++i) {
    In v = values[i];
    if constexpr (std::is_integral_v<Wire> && std::is_integral_v<In>) {
      if (!std::in_range<Wire>(v)) {
        return invalidArgument("advice value " + std::to_string(v) + " does not fit " +
                               std::string(elementTypeName(spec.type)) + " of \"" + spec.name +
                               "\"");
      }
    }
    auto element = static_cast<Wire>(v);
    std::memcpy(bytes.data() + i * sizeof(Wire), &element, sizeof(Wire));
  }
  return bytes;
}

// A span so that a scalar advice is encoded without building a vector for it.
template <class In>
Result<std::string> encodeValues(const FeatureSpec& spec, std::span<const In> values) {
  switch (spec.type) {
    case ElementType::kFloat:
      return writeElements<float>(spec, values);
    case ElementType::kDouble:
      return writeElements<double>(spec, values);
    case ElementType::kInt8:
      return writeElements<std::int8_t>(spec, values);
    case ElementType::kUInt8:
      return writeElements<std::uint8_t>(spec, values);
    case ElementType::kInt16:
      return writeElements<std::int16_t>(spec, values);
    case ElementType::kUInt16:
      return writeElements<std::uint16_t>(spec, values);
    case ElementType::kInt32:
      return writeElements<std::int32_t>(spec, values);
    case ElementType::kUInt32:
      return writeElements<std::uint32_t>(spec, values);
    case ElementType::kInt64:
      return writeElements<std::int64_t>(spec, values);
    case ElementType::kUInt64:
      return writeElements<std::uint64_t>(spec, values);
  }
  return internalError("unknown element type");
}

bool isFloating(ElementType type) {
  return type == ElementType::kFloat || type == ElementType::kDouble;
}

}  // namespace

Result<Value> decodeTensor(const FeatureSpec& spec, std::string_view bytes) {
  if (bytes.size() != spec.byteSize) {
    return invalidArgument("tensor \"" + spec.name + "\" needs " + std::to_string(spec.byteSize) +
                           " bytes, got " + std::to_string(bytes.size()));
  }
  const std::size_t n = spec.elementCount;
  switch (spec.type) {
    case ElementType::kFloat:
      return Value(FloatTensor{spec.shape, readElements<float, float>(bytes, n)});
    case ElementType::kDouble:
      return Value(DoubleTensor{spec.shape, readElements<double, double>(bytes, n)});
    case ElementType::kInt8:
      return Value(Int64Tensor{spec.shape, readElements<std::int8_t, std::int64_t>(bytes, n)});
    case ElementType::kUInt8:
      return Value(Int64Tensor{spec.shape, readElements<std::uint8_t, std::int64_t>(bytes, n)});
    case ElementType::kInt16:
      return Value(Int64Tensor{spec.shape, readElements<std::int16_t, std::int64_t>(bytes, n)});
    case ElementType::kUInt16:
      return Value(Int64Tensor{spec.shape, readElements<std::uint16_t, std::int64_t>(bytes, n)});
    case ElementType::kInt32:
      return Value(Int64Tensor{spec.shape, readElements<std::int32_t, std::int64_t>(bytes, n)});
    case ElementType::kUInt32:
      return Value(Int64Tensor{spec.shape, readElements<std::uint32_t, std::int64_t>(bytes, n)});
    case ElementType::kInt64:
      return Value(Int64Tensor{spec.shape, readElements<std::int64_t, std::int64_t>(bytes, n)});
    case ElementType::kUInt64:
      return Value(Int64Tensor{spec.shape, readElements<std::uint64_t, std::int64_t>(bytes, n)});
  }
  return internalError("unknown element type");
}

Result<std::string> encodeTensor(const FeatureSpec& spec, const Value& value) {
  auto wrongCount = [&spec](std::size_t got) {
    return invalidArgument("advice \"" + spec.name + "\" needs " +
                           std::to_string(spec.elementCount) + " element(s), got " +
                           std::to_string(got));
  };
  auto wrongFamily = [&spec, &value]() {
    return invalidArgument("advice \"" + spec.name + "\" of type " +
                           std::string(elementTypeName(spec.type)) + " cannot be made from " +
                           value.describe());
  };
  const bool floating = isFloating(spec.type);
  if (const auto* t = value.getIf<Int64Tensor>()) {
    if (floating) return wrongFamily();
    if (t->values.size() != spec.elementCount) return wrongCount(t->values.size());
    return encodeValues(spec, std::span<const std::int64_t>(t->values));
  }
  if (const auto* t = value.getIf<FloatTensor>()) {
    if (!floating) return wrongFamily();
    if (t->values.size() != spec.elementCount) return wrongCount(t->values.size());
    return encodeValues(spec, std::span<const float>(t->values));
  }
  if (const auto* t = value.getIf<DoubleTensor>()) {
    if (!floating) return wrongFamily();
    if (t->values.size() != spec.elementCount) return wrongCount(t->values.size());
    return encodeValues(spec, std::span<const double>(t->values));
  }
  if (const auto* i = value.getIf<std::int64_t>()) {
    if (floating) return wrongFamily();
    if (spec.elementCount != 1) return wrongCount(1);
    return encodeValues(spec, std::span<const std::int64_t>(i, 1));
  }
  if (const auto* d = value.getIf<double>()) {
    if (!floating) return wrongFamily();
    if (spec.elementCount != 1) return wrongCount(1);
    return encodeValues(spec, std::span<const double>(d, 1));
  }
  return wrongFamily();
}

}  // namespace kiln::mlgo_channel
