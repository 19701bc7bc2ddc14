#include "compilers/mlgo_channel/tensor_codec.h"

#include <gtest/gtest.h>

#include "tests/mlgo_channel/test_support.h"

namespace kiln::mlgo_channel {
namespace {

using testing::bytesOf;

FeatureSpec spec(const std::string& name, ElementType type, std::vector<std::int64_t> shape) {
  FeatureSpec s{name, type, 0, std::move(shape)};
  EXPECT_TRUE(computeSizes(s).ok());
  return s;
}

TEST(TensorCodecTest, DecodesAndWidensIntegers) {
  FeatureSpec s = spec("small", ElementType::kInt32, {1, 2});
  Result<Value> v = decodeTensor(s, bytesOf(std::int32_t{-5}) + bytesOf(std::int32_t{9}));
  ASSERT_TRUE(v.ok()) << v.status().toString();
  EXPECT_EQ(*v, Value(Int64Tensor{{1, 2}, {-5, 9}}));
  FeatureSpec u = spec("u", ElementType::kUInt8, {2});
  EXPECT_EQ(*decodeTensor(u, std::string("\xff\x01", 2)), Value(Int64Tensor{{2}, {255, 1}}));
}

TEST(TensorCodecTest, DecodesFloatingTypes) {
  FeatureSpec f = spec("f", ElementType::kFloat, {2});
  EXPECT_EQ(*decodeTensor(f, bytesOf(1.5f) + bytesOf(-2.0f)),
            Value(FloatTensor{{2}, {1.5f, -2.0f}}));
  FeatureSpec d = spec("d", ElementType::kDouble, {});
  EXPECT_EQ(*decodeTensor(d, bytesOf(0.25)), Value(DoubleTensor{{}, {0.25}}));
}

TEST(TensorCodecTest, RejectsWrongByteCount) {
  FeatureSpec s = spec("a", ElementType::kInt64, {1});
  Result<Value> v = decodeTensor(s, "abc");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("needs 8 bytes, got 3"), std::string::npos);
}

TEST(TensorCodecTest, EncodesAdvice) {
  FeatureSpec s = spec("decision", ElementType::kInt64, {1});
  EXPECT_EQ(*encodeTensor(s, Value(std::int64_t{1})), bytesOf(std::int64_t{1}));
  EXPECT_EQ(*encodeTensor(s, Value(Int64Tensor{{1}, {-3}})), bytesOf(std::int64_t{-3}));
  FeatureSpec f = spec("scale", ElementType::kFloat, {2});
  EXPECT_EQ(*encodeTensor(f, Value(DoubleTensor{{2}, {0.5, 2.0}})), bytesOf(0.5f) + bytesOf(2.0f));
}

TEST(TensorCodecTest, RejectsAdviceOfWrongSizeTypeOrRange) {
  FeatureSpec s = spec("decision", ElementType::kInt64, {1});
  Result<std::string> two = encodeTensor(s, Value(Int64Tensor{{2}, {1, 0}}));
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(two.status().message().find("needs 1 element(s), got 2"), std::string::npos);
  EXPECT_FALSE(encodeTensor(s, Value(0.5)).ok());
  EXPECT_FALSE(encodeTensor(s, Value("yes")).ok());
  FeatureSpec narrow = spec("n", ElementType::kInt8, {1});
  Result<std::string> big = encodeTensor(narrow, Value(std::int64_t{300}));
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("does not fit int8_t"), std::string::npos);
}

}  // namespace
}  // namespace kiln::mlgo_channel
