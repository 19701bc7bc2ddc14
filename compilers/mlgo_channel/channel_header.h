// The first line LLVM's interactive model runner writes on BASE.out: one JSON
// object {"features":[spec...], "score":spec?, "advice":spec} where each spec is
// a TensorSpec {"name","port","type","shape"}. Parsed and bounded here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>

namespace kiln::mlgo_channel {

// The element types LLVM's TensorSpec supports (SUPPORTED_TENSOR_TYPES).
enum class ElementType : std::uint8_t {
  kFloat,
  kDouble,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
};

// LLVM's spelling on the wire: "float", "int64_t", ...
std::string_view elementTypeName(ElementType type);
std::optional<ElementType> elementTypeFromName(std::string_view name);
std::size_t elementTypeSize(ElementType type);

struct FeatureSpec {
  std::string name;
  ElementType type = ElementType::kInt64;
  int port = 0;
  std::vector<std::int64_t> shape;  // empty = scalar
  std::size_t elementCount = 1;     // product of shape
  std::size_t elementSize = 0;      // bytes per element
  std::size_t byteSize = 0;         // elementCount * elementSize: bytes on the wire

  bool operator==(const FeatureSpec&) const = default;
};

struct ChannelHeader {
  std::vector<FeatureSpec> features;  // in wire order
  std::optional<FeatureSpec> score;
  FeatureSpec advice;

  // Index of the feature called `name`, if any.
  std::optional<std::size_t> featureIndex(std::string_view name) const;
  // Bytes of tensor data in one observation record (without the trailing '\n').
  std::size_t observationBytes() const;
};

// Bounds that keep a confused or hostile peer from making us allocate without
// limit. The defaults are far above what opt-19 (39 x 8 bytes) or llc-19
// (~2.6 KiB) send.
struct HeaderLimits {
  std::size_t maxHeaderBytes = 1 << 20;
  std::size_t maxFeatures = 4096;
  std::size_t maxRank = 8;
  std::size_t maxTensorBytes = 16 << 20;
  std::size_t maxObservationBytes = 64 << 20;
};

// Parses one header line (without its '\n'). Any malformed JSON, missing or
// mistyped field, unknown element type or absurd shape is an invalid-argument
// status naming the offending field.
Result<ChannelHeader> parseHeader(std::string_view line, const HeaderLimits& limits = {});

// Validates a shape and fills elementCount / elementSize / byteSize of `spec`.
Status computeSizes(FeatureSpec& spec, const HeaderLimits& limits = {});

}  // namespace kiln::mlgo_channel
