#include "compilers/mlgo_channel/channel_header.h"

#include <gtest/gtest.h>

#include "tests/mlgo_channel/test_support.h"

namespace kiln::mlgo_channel {
namespace {

using testing::specJson;

std::string withAdvice(const std::string& features) {
  return "{\"features\":[" + features + "],\"advice\":" + specJson("d", "int64_t", {1}) + "}";
}

void expectInvalid(const std::string& line, const std::string& fragment,
                   const HeaderLimits& limits = {}) {
  Result<ChannelHeader> header = parseHeader(line, limits);
  ASSERT_FALSE(header.ok()) << line;
  EXPECT_EQ(header.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(header.status().message().find(fragment), std::string::npos)
      << "message: " << header.status().message();
}

TEST(ChannelHeaderTest, ParsesFeaturesScoreAndAdvice) {
  std::string line = "{\"features\":[" + specJson("mask", "int64_t", {1, 33}) + "," +
                     specJson("progress", "float", {1}) + "," + specJson("s", "double", {}) +
                     "],\"score\":" + specJson("reward", "float", {1}) +
                     ",\"advice\":" + specJson("index_to_evict", "int64_t", {1}) + "}";
  Result<ChannelHeader> header = parseHeader(line);
  ASSERT_TRUE(header.ok()) << header.status().toString();
  ASSERT_EQ(header->features.size(), 3u);
  EXPECT_EQ(header->features[0].name, "mask");
  EXPECT_EQ(header->features[0].type, ElementType::kInt64);
  EXPECT_EQ(header->features[0].shape, (std::vector<std::int64_t>{1, 33}));
  EXPECT_EQ(header->features[0].elementCount, 33u);
  EXPECT_EQ(header->features[0].byteSize, 33u * 8);
  EXPECT_EQ(header->features[1].type, ElementType::kFloat);
  EXPECT_EQ(header->features[1].byteSize, 4u);
  EXPECT_EQ(header->features[2].elementCount, 1u);  // empty shape = scalar
  EXPECT_EQ(header->features[2].byteSize, 8u);
  ASSERT_TRUE(header->score.has_value());
  EXPECT_EQ(header->score->name, "reward");
  EXPECT_EQ(header->advice.name, "index_to_evict");
  EXPECT_EQ(header->observationBytes(), 33u * 8 + 4 + 8);
  EXPECT_EQ(header->featureIndex("progress"), 1u);
  EXPECT_FALSE(header->featureIndex("nope").has_value());
}

TEST(ChannelHeaderTest, KnowsEveryLlvmElementType) {
  for (const char* name : {"float", "double", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t",
                           "uint32_t", "int64_t", "uint64_t"}) {
    std::optional<ElementType> type = elementTypeFromName(name);
    ASSERT_TRUE(type.has_value()) << name;
    EXPECT_EQ(elementTypeName(*type), name);
  }
  EXPECT_EQ(elementTypeSize(ElementType::kInt16), 2u);
  EXPECT_FALSE(elementTypeFromName("bool").has_value());
}

TEST(ChannelHeaderTest, RejectsMalformedJson) {
  expectInvalid("{\"features\":[", "not valid JSON");
  expectInvalid("hello", "not valid JSON");
  expectInvalid("[1,2]", "not a JSON object");
}

TEST(ChannelHeaderTest, RejectsMissingFields) {
  expectInvalid("{\"advice\":" + specJson("d", "int64_t", {1}) + "}", "\"features\"");
  expectInvalid("{\"features\":[]}", "\"advice\"");
  expectInvalid(withAdvice("{\"type\":\"float\",\"shape\":[1]}"), "\"name\"");
  expectInvalid(withAdvice("{\"name\":\"x\",\"shape\":[1]}"), "\"type\"");
  expectInvalid(withAdvice("{\"name\":\"x\",\"type\":\"float\"}"), "\"shape\"");
  expectInvalid(withAdvice("7"), "not a JSON object");
}

TEST(ChannelHeaderTest, RejectsUnknownTypesAndBadShapes) {
  expectInvalid(withAdvice(specJson("x", "bfloat16", {1})), "unknown element type \"bfloat16\"");
  expectInvalid(withAdvice(specJson("x", "int64_t", {1, -3})), "negative dimension -3");
  expectInvalid(withAdvice("{\"name\":\"x\",\"type\":\"float\",\"shape\":[1.5]}"),
                "non-integer dimension");
  // Each dimension is fine alone; the product overflows size_t.
  expectInvalid(withAdvice(specJson("x", "int64_t", {1LL << 40, 1LL << 40})), "larger than");
  expectInvalid(withAdvice(specJson("x", "int8_t", {1, 1, 1, 1, 1, 1, 1, 1, 1})), "rank 9");
  HeaderLimits small;
  small.maxTensorBytes = 64;
  expectInvalid(withAdvice(specJson("x", "int64_t", {9})), "larger than the limit of 64", small);
  expectInvalid(withAdvice(specJson("x", "int64_t", {1}) + "," + specJson("x", "float", {1})),
                "twice");
  expectInvalid("{\"features\":[],\"advice\":" + specJson("d", "int64_t", {0}) + "}",
                "no elements");
}

TEST(ChannelHeaderTest, BoundsTheWholeObservationAndLine) {
  HeaderLimits limits;
  limits.maxTensorBytes = 100;
  limits.maxObservationBytes = 150;
  expectInvalid(withAdvice(specJson("x", "int64_t", {10}) + "," + specJson("y", "int64_t", {10})),
                "exceed the limit of 150", limits);
  limits.maxHeaderBytes = 10;
  expectInvalid(withAdvice(""), "exceeds the limit of 10", limits);
  limits = {};
  limits.maxFeatures = 1;
  expectInvalid(withAdvice(specJson("x", "int64_t", {1}) + "," + specJson("y", "int64_t", {1})),
                "2 features", limits);
}

}  // namespace
}  // namespace kiln::mlgo_channel
