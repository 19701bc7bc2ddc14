// Header parsing with llvm::json: LLVM writes the header with TensorSpec::toJSON,
// so reading it with the same library avoids a hand-written JSON subset.
#include "compilers/mlgo_channel/channel_header.h"

#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>

#include <array>
#include <limits>

namespace kiln::mlgo_channel {
namespace {

struct TypeInfo {
  ElementType type;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<TypeInfo, 10> kTypes = {{
    {ElementType::kFloat, "float", 4},
    {ElementType::kDouble, "double", 8},
    {ElementType::kInt8, "int8_t", 1},
    {ElementType::kUInt8, "uint8_t", 1},
    {ElementType::kInt16, "int16_t", 2},
    {ElementType::kUInt16, "uint16_t", 2},
    {ElementType::kInt32, "int32_t", 4},
    {ElementType::kUInt32, "uint32_t", 4},
    {ElementType::kInt64, "int64_t", 8},
    {ElementType::kUInt64, "uint64_t", 8},
}};

const TypeInfo& infoOf(ElementType type) {
  for (const auto& info : kTypes) {
    if (info.type == type) return info;
  }
  return kTypes.back();  // unreachable: the enum is closed
}

Result<FeatureSpec> parseSpec(const llvm::json::Value& value, const std::string& where,
                              const HeaderLimits& limits) {
  const llvm::json::Object* object = value.getAsObject();
  if (object == nullptr) return invalidArgument(where + " is not a JSON object");
  FeatureSpec spec;
  std::optional<llvm::StringRef> name = object->getString("name");
  if (!name) return invalidArgument(where + " has no string field \"name\"");
  spec.name = name->str();
  std::string named = where + " (\"" + spec.name + "\")";

  std::optional<llvm::StringRef> typeName = object->getString("type");
  if (!typeName) return invalidArgument(named + " has no string field \"type\"");
  std::optional<ElementType> type = elementTypeFromName(*typeName);
  if (!type) {
    return invalidArgument(named + " has unknown element type \"" + typeName->str() +
                           "\" (expected one of LLVM's TensorSpec types, e.g. int64_t, float)");
  }
  spec.type = *type;

  // LLVM always writes "port"; tolerate its absence since nothing here uses it.
  if (const llvm::json::Value* port = object->get("port")) {
    std::optional<std::int64_t> asInt = port->getAsInteger();
    if (!asInt || *asInt < 0 || *asInt > std::numeric_limits<int>::max()) {
      return invalidArgument(named + " has a \"port\" that is not a small non-negative integer");
    }
    spec.port = static_cast<int>(*asInt);
  }

  const llvm::json::Array* shape = object->getArray("shape");
  if (shape == nullptr) return invalidArgument(named + " has no array field \"shape\"");
  if (shape->size() > limits.maxRank) {
    return invalidArgument(named + " has rank " + std::to_string(shape->size()) +
                           ", more than the limit " + std::to_string(limits.maxRank));
  }
  for (const llvm::json::Value& dim : *shape) {
    std::optional<std::int64_t> asInt = dim.getAsInteger();
    if (!asInt) return invalidArgument(named + " has a non-integer dimension in \"shape\"");
    spec.shape.push_back(*asInt);
  }
  Status sizes = computeSizes(spec, limits);
  if (!sizes.ok()) return invalidArgument(where + ": " + sizes.message());
  return spec;
}

}  // namespace

std::string_view elementTypeName(ElementType type) { return infoOf(type).name; }

std::optional<ElementType> elementTypeFromName(std::string_view name) {
  for (const auto& info : kTypes) {
    if (info.name == name) return info.type;
  }
  return std::nullopt;
}

std::size_t elementTypeSize(ElementType type) { return infoOf(type).size; }

Status computeSizes(FeatureSpec& spec, const HeaderLimits& limits) {
  spec.elementSize = elementTypeSize(spec.type);
  std::size_t count = 1;
  for (std::int64_t dim : spec.shape) {
    if (dim < 0) {
      return invalidArgument("tensor \"" + spec.name + "\" has negative dimension " +
                             std::to_string(dim));
    }
    // Divide instead of multiplying so that overflow cannot happen on the way.
    auto udim = static_cast<std::size_t>(dim);
    if (udim != 0 && count > limits.maxTensorBytes / spec.elementSize / udim) {
      return invalidArgument("tensor \"" + spec.name + "\" is larger than the limit of " +
                             std::to_string(limits.maxTensorBytes) + " bytes");
    }
    count *= udim;
  }
  spec.elementCount = count;
  spec.byteSize = count * spec.elementSize;
  return okStatus();
}

std::optional<std::size_t> ChannelHeader::featureIndex(std::string_view name) const {
  for (std::size_t i = 0; i < features.size(); ++i) {
    if (features[i].name == name) return i;
  }
  return std::nullopt;
}

std::size_t ChannelHeader::observationBytes() const {
  std::size_t total = 0;
  for (const auto& feature : features) total += feature.byteSize;
  return total;
}

Result<ChannelHeader> parseHeader(std::string_view line, const HeaderLimits& limits) {
  if (line.size() > limits.maxHeaderBytes) {
    return invalidArgument("header line of " + std::to_string(line.size()) +
                           " bytes exceeds the limit of " + std::to_string(limits.maxHeaderBytes));
  }
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse(llvm::StringRef(line.data(), line.size()));
  if (!parsed) {
    return invalidArgument("header is not valid JSON: " + llvm::toString(parsed.takeError()));
  }
  const llvm::json::Object* root = parsed->getAsObject();
  if (root == nullptr) return invalidArgument("header is not a JSON object");

  ChannelHeader header;
  const llvm::json::Array* features = root->getArray("features");
  if (features == nullptr) return invalidArgument("header has no array field \"features\"");
  if (features->size() > limits.maxFeatures) {
    return invalidArgument("header lists " + std::to_string(features->size()) +
                           " features, more than the limit " + std::to_string(limits.maxFeatures));
  }
  std::size_t total = 0;
  for (std::size_t i = 0; i < features->size(); ++i) {
    KILN_ASSIGN_OR_RETURN(FeatureSpec spec,
                          parseSpec((*features)[i], "feature " + std::to_string(i), limits));
    if (header.featureIndex(spec.name)) {
      return invalidArgument("header lists feature \"" + spec.name + "\" twice");
    }
    total += spec.byteSize;  // each <= maxTensorBytes, so no overflow before the check
    if (total > limits.maxObservationBytes) {
      return invalidArgument("one observation would exceed the limit of " +
                             std::to_string(limits.maxObservationBytes) + " bytes");
    }
    header.features.push_back(std::move(spec));
  }

  if (const llvm::json::Value* score = root->get("score")) {
    KILN_ASSIGN_OR_RETURN(header.score, parseSpec(*score, "score", limits));
  }
  const llvm::json::Value* advice = root->get("advice");
  if (advice == nullptr) return invalidArgument("header has no field \"advice\"");
  KILN_ASSIGN_OR_RETURN(header.advice, parseSpec(*advice, "advice", limits));
  if (header.advice.byteSize == 0) {
    return invalidArgument("advice tensor \"" + header.advice.name + "\" has no elements");
  }
  return header;
}

}  // namespace kiln::mlgo_channel
