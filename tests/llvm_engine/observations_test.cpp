// Observations: shapes, names, consistency between views, SHA-1 of the text,
// object .text size and baselines.
#include "compilers/llvm_engine/observations.h"
#include "compilers/llvm_engine/autophase.h"
#include "compilers/llvm_engine/baselines.h"
#include "compilers/llvm_engine/inst_count.h"
#include "compilers/llvm_engine/ir_text.h"
#include "tests/llvm_engine/test_support.h"

namespace kiln::llvm_engine {
namespace {

using testing::loadBenchmark;
using testing::passIndex;

TEST(ObservationsTest, InstCountShapeNamesAndTotals) {
  auto state = loadBenchmark("strings");
  auto tensor = state->instCount();
  ASSERT_TRUE(tensor.ok());
  ASSERT_EQ(tensor->shape, std::vector<std::int64_t>{70});
  ASSERT_EQ(tensor->values.size(), 70u);
  EXPECT_EQ(tensor->values[0], *state->instructionCount());
  std::int64_t perOpcode = 0;
  for (std::size_t i = 3; i < tensor->values.size(); ++i) perOpcode += tensor->values[i];
  EXPECT_EQ(perOpcode, tensor->values[0]);
  auto dict = state->instCountDict();
  ASSERT_TRUE(dict.ok());
  ASSERT_EQ(dict->size(), 70u);
  EXPECT_EQ((*dict)[0].name, "TotalInstsCount");
  EXPECT_EQ((*dict)[3].name, "RetCount");
  for (std::size_t i = 0; i < dict->size(); ++i) {
    EXPECT_EQ((*dict)[i].value.as<std::int64_t>(), tensor->values[i]) << (*dict)[i].name;
  }
}

TEST(ObservationsTest, AutophaseShapeAndConsistency) {
  auto state = loadBenchmark("matrix");
  ASSERT_TRUE(state->applyPass(passIndex("mem2reg")).ok());  // creates phis
  auto features = state->autophase();
  ASSERT_TRUE(features.ok());
  ASSERT_EQ(features->shape, std::vector<std::int64_t>{56});
  const auto names = autophaseFeatureNames();
  ASSERT_EQ(names.size(), 56u);
  auto at = [&](std::string_view name) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return features->values[i];
    }
    ADD_FAILURE() << "no feature " << name;
    return std::int64_t{-1};
  };
  const auto counts = computeInstCount(*state->module());
  EXPECT_EQ(at("TotalInsts"), counts[0]);
  EXPECT_EQ(at("TotalBlocks"), counts[1]);
  EXPECT_EQ(at("TotalFuncs"), counts[2]);
  EXPECT_EQ(at("BBNoPhi") + at("BB03Phi") + at("BBHiPhi"), at("TotalBlocks"));
  EXPECT_GT(at("NumPHIInst"), 0);
  EXPECT_LE(at("BeginPhi"), at("TotalBlocks"));
  EXPECT_EQ(at("BranchCount"), at("NumBrInst"));
  EXPECT_LE(at("CriticalCount"), at("NumEdges"));
  auto dict = state->autophaseDict();
  ASSERT_TRUE(dict.ok());
  EXPECT_EQ((*dict)[0].name, "BBNumArgsHi");
  EXPECT_EQ((*dict)[55].name, "testUnary");
}

TEST(ObservationsTest, IrSha1IsShaOfCanonicalText) {
  auto state = loadBenchmark("calls");
  const std::string text = *state->ir();
  EXPECT_EQ(text.find("; ModuleID"), std::string::npos);
  EXPECT_EQ(text.find("source_filename"), std::string::npos);
  EXPECT_NE(text.find("target triple"), std::string::npos);
  EXPECT_EQ(*state->irSha1(), sha1Hex(text));
  EXPECT_EQ(sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");  // FIPS 180 vector
  auto bitcode = state->bitcode();
  ASSERT_TRUE(bitcode.ok());
  auto reparsed = ModuleState::fromBitcode(testing::passTable(), bitcode->data, "again");
  ASSERT_TRUE(reparsed.ok());
  EXPECT_EQ(*(*reparsed)->irSha1(), *state->irSha1());
}

TEST(ObservationsTest, ObserveByNameCoversEverySpec) {
  auto state = loadBenchmark("stencil");
  for (const ObservationSpec& spec : observationSpecs()) {
    auto value = observe(*state, spec.name);
    EXPECT_TRUE(value.ok()) << spec.name << ": " << value.status().toString();
  }
  EXPECT_EQ(observe(*state, "NoSuchSpace").status().code(), ErrorCode::kNotFound);
}

TEST(ObservationsTest, ObjectTextSizeAndBaselines) {
  auto state = loadBenchmark("calls");
  auto size = state->objectTextSizeBytes();
  ASSERT_TRUE(size.ok()) << size.status().toString();
  EXPECT_GT(*size, 100);
  auto baselines = computeBaselines(*state);
  ASSERT_TRUE(baselines.ok()) << baselines.status().toString();
  EXPECT_EQ(baselines->instCountO0, *state->instructionCount());
  EXPECT_EQ(baselines->textSizeO0, *size);
  EXPECT_LT(baselines->instCountOz, baselines->instCountO0);
  EXPECT_LT(baselines->textSizeOz, baselines->textSizeO0);
  EXPECT_LE(baselines->textSizeOz, baselines->textSizeO3);
  // The state itself was not touched.
  EXPECT_EQ(*state->instructionCount(), baselines->instCountO0);
}

}  // namespace
}  // namespace kiln::llvm_engine
