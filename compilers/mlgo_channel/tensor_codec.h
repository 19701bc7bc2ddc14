// Raw tensor bytes <-> kiln::Value. Observations arrive as the little-endian
// bytes of each feature tensor (element size x element count); advice goes back
// the same way. Integer types are widened to Int64Tensor on the way in.
#pragma once

#include <string>
#include <string_view>

#include <kiln/status.h>
#include <kiln/value.h>
#include "compilers/mlgo_channel/channel_header.h"

namespace kiln::mlgo_channel {

// `bytes` must be exactly spec.byteSize long. Integer types become an
// Int64Tensor (uint64 values above INT64_MAX wrap), float a FloatTensor,
// double a DoubleTensor; the tensor keeps the spec's shape.
Result<Value> decodeTensor(const FeatureSpec& spec, std::string_view bytes);

// The wire bytes of `value` for `spec`. Accepts a tensor of the matching family
// (Int64Tensor for integer types, FloatTensor/DoubleTensor for floating ones)
// with exactly spec.elementCount values, or a plain int64/double when the spec
// holds a single element. Values that do not fit the element type are an
// invalid-argument status, never silently truncated.
Result<std::string> encodeTensor(const FeatureSpec& spec, const Value& value);

}  // namespace kiln::mlgo_channel
