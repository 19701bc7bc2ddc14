#include "compilers/llvm_engine/autophase.h"

#include <array>

#include "llvm/Analysis/CFG.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

namespace kiln::llvm_engine {
namespace {

// Feature indices, in CompilerGym's output order.
enum Feature : std::size_t {
  kBBNumArgsHi,
  kBBNumArgsLo,
  kOnePred,
  kOnePredOneSuc,
  kOnePredTwoSuc,
  kOneSuccessor,
  kTwoPred,
  kTwoPredOneSuc,
  kTwoEach,
  kTwoSuccessor,
  kMorePreds,
  kBB03Phi,
  kBBHiPhi,
  kBBNoPhi,
  kBeginPhi,
  kBranchCount,
  kReturnInt,
  kCriticalCount,
  kNumEdges,
  kConst32Bit,
  kConst64Bit,
  kNumConstZeroes,
  kNumConstOnes,
  kUncondBranches,
  kBinaryConstArg,
  kNumAShrInst,
  kNumAddInst,
  kNumAllocaInst,
  kNumAndInst,
  kBlockMid,
  kBlockLow,
  kNumBitCastInst,
  kNumBrInst,
  kNumCallInst,
  kNumGetElementPtrInst,
  kNumICmpInst,
  kNumLShrInst,
  kNumLoadInst,
  kNumMulInst,
  kNumOrInst,
  kNumPHIInst,
  kNumRetInst,
  kNumSExtInst,
  kNumSelectInst,
  kNumShlInst,
  kNumStoreInst,
  kNumSubInst,
  kNumTruncInst,
  kNumXorInst,
  kNumZExtInst,
  kTotalBlocks,
  kTotalInsts,
  kTotalMemInst,
  kTotalFuncs,
  kArgsPhi,
  kTestUnary,
  kFeatureCount
};
static_assert(kFeatureCount == kAutophaseDims);

constexpr std::array<std::string_view, kAutophaseDims> kNames = {
    "BBNumArgsHi",  "BBNumArgsLo",    "onePred",       "onePredOneSuc",  "onePredTwoSuc",
    "oneSuccessor", "twoPred",        "twoPredOneSuc", "twoEach",        "twoSuccessor",
    "morePreds",    "BB03Phi",        "BBHiPhi",       "BBNoPhi",        "BeginPhi",
    "BranchCount",  "returnInt",      "CriticalCount", "NumEdges",       "const32Bit",
    "const64Bit",   "numConstZeroes", "numConstOnes",  "UncondBranches", "binaryConstArg",
    "NumAShrInst",  "NumAddInst",     "NumAllocaInst", "NumAndInst",     "BlockMid",
    "BlockLow",     "NumBitCastInst", "NumBrInst",     "NumCallInst",    "NumGetElementPtrInst",
    "NumICmpInst",  "NumLShrInst",    "NumLoadInst",   "NumMulInst",     "NumOrInst",
    "NumPHIInst",   "NumRetInst",     "NumSExtInst",   "NumSelectInst",  "NumShlInst",
    "NumStoreInst", "NumSubInst",     "NumTruncInst",  "NumXorInst",     "NumZExtInst",
    "TotalBlocks",  "TotalInsts",     "TotalMemInst",  "TotalFuncs",     "ArgsPhi",
    "testUnary"};

// Opcodes with a feature of their own.
std::size_t opcodeFeature(unsigned opcode) {
  switch (opcode) {
    case llvm::Instruction::AShr:
      return kNumAShrInst;
    case llvm::Instruction::Add:
      return kNumAddInst;
    case llvm::Instruction::Alloca:
      return kNumAllocaInst;
    case llvm::Instruction::And:
      return kNumAndInst;
    case llvm::Instruction::BitCast:
      return kNumBitCastInst;
    case llvm::Instruction::Br:
      return kNumBrInst;
    case llvm::Instruction::Call:
      return kNumCallInst;
    case llvm::Instruction::GetElementPtr:
      return kNumGetElementPtrInst;
    case llvm::Instruction::ICmp:
      return kNumICmpInst;
    case llvm::Instruction::LShr:
      return kNumLShrInst;
    case llvm::Instruction::Load:
      return kNumLoadInst;
    case llvm::Instruction::Mul:
      return kNumMulInst;
    case llvm::Instruction::Or:
      return kNumOrInst;
    case llvm::Instruction::PHI:
      return kNumPHIInst;
    case llvm::Instruction::Ret:
      return kNumRetInst;
    case llvm::Instruction::SExt:
      return kNumSExtInst;
    case llvm::Instruction::Select:
      return kNumSelectInst;
    case llvm::Instruction::Shl:
      return kNumShlInst;
    case llvm::Instruction::Store:
      return kNumStoreInst;
    case llvm::Instruction::Sub:
      return kNumSubInst;
    case llvm::Instruction::Trunc:
      return kNumTruncInst;
    case llvm::Instruction::Xor:
      return kNumXorInst;
    case llvm::Instruction::ZExt:
      return kNumZExtInst;
    default:
      return kFeatureCount;
  }
}

bool isMemoryInst(unsigned opcode) {
  switch (opcode) {
    case llvm::Instruction::GetElementPtr:
    case llvm::Instruction::Load:
    case llvm::Instruction::Store:
    case llvm::Instruction::Call:
    case llvm::Instruction::Invoke:
    case llvm::Instruction::Alloca:
      return true;
    default:
      return false;
  }
}

void countBlockShape(const llvm::BasicBlock& block, std::vector<std::int64_t>& f) {
  const llvm::Instruction* term = block.getTerminator();
  const unsigned succs = term != nullptr ? term->getNumSuccessors() : 0;
  for (unsigned i = 0; i < succs; ++i) {
    ++f[kNumEdges];
    if (llvm::isCriticalEdge(term, i)) ++f[kCriticalCount];
  }
  // Predecessors are counted per edge (a switch with two cases to the same
  // block counts twice), like pred_begin/pred_end.
  const std::size_t preds = llvm::pred_size(&block);
  if (succs == 1)
    ++f[kOneSuccessor];
  else if (succs == 2)
    ++f[kTwoSuccessor];
  if (preds == 1)
    ++f[kOnePred];
  else if (preds == 2)
    ++f[kTwoPred];
  else if (preds > 2)
    ++f[kMorePreds];
  if (preds == 1 && succs == 1)
    ++f[kOnePredOneSuc];
  else if (preds == 2 && succs == 1)
    ++f[kTwoPredOneSuc];
  else if (preds == 1 && succs == 2)
    ++f[kOnePredTwoSuc];
  else if (preds == 2 && succs == 2)
    ++f[kTwoEach];
}

void countOperands(const llvm::Instruction& inst, std::vector<std::int64_t>& f) {
  for (const llvm::Value* operand : inst.operand_values()) {
    const auto* c = llvm::dyn_cast<llvm::ConstantInt>(operand);
    if (c == nullptr) continue;
    const llvm::APInt& v = c->getValue();
    if (v.getBitWidth() == 32)
      ++f[kConst32Bit];
    else if (v.getBitWidth() == 64)
      ++f[kConst64Bit];
    if (v.isOne())
      ++f[kNumConstOnes];
    else if (v.isZero())
      ++f[kNumConstZeroes];
  }
}

void countBlock(const llvm::BasicBlock& block, std::vector<std::int64_t>& f) {
  ++f[kTotalBlocks];
  countBlockShape(block, f);
  std::int64_t insts = 0;
  std::int64_t phis = 0;
  std::int64_t phiArgs = 0;
  for (const llvm::Instruction& inst : block) {
    const unsigned opcode = inst.getOpcode();
    ++f[kTotalInsts];
    if (std::size_t slot = opcodeFeature(opcode); slot != kFeatureCount) ++f[slot];
    if (isMemoryInst(opcode)) ++f[kTotalMemInst];
    if (const auto* br = llvm::dyn_cast<llvm::BranchInst>(&inst)) {
      ++f[kBranchCount];
      if (br->isUnconditional()) ++f[kUncondBranches];
    }
    countOperands(inst, f);
    if (const auto* call = llvm::dyn_cast<llvm::CallInst>(&inst)) {
      const llvm::Function* callee = call->getCalledFunction();
      if (callee != nullptr && callee->getReturnType()->isIntegerTy()) ++f[kReturnInt];
    }
    if (llvm::isa<llvm::UnaryInstruction>(inst)) ++f[kTestUnary];
    if (llvm::isa<llvm::BinaryOperator>(inst) && (llvm::isa<llvm::Constant>(inst.getOperand(0)) ||
                                                  llvm::isa<llvm::Constant>(inst.getOperand(1)))) {
      ++f[kBinaryConstArg];
    }
    if (const auto* phi = llvm::dyn_cast<llvm::PHINode>(&inst)) {
      if (insts == 0) ++f[kBeginPhi];
      ++phis;
      phiArgs += phi->getNumIncomingValues();
    }
    ++insts;
  }
  f[kArgsPhi] += phiArgs;
  if (phis == 0)
    ++f[kBBNoPhi];
  else if (phis <= 3)
    ++f[kBB03Phi];
  else
    ++f[kBBHiPhi];
  if (phiArgs > 5)
    ++f[kBBNumArgsHi];
  else if (phiArgs >= 1)
    ++f[kBBNumArgsLo];
  if (insts < 15)
    ++f[kBlockLow];
  else if (insts <= 500)
    ++f[kBlockMid];
}

}  // namespace

std::span<const std::string_view> autophaseFeatureNames() { return kNames; }

std::vector<std::int64_t> computeAutophase(const llvm::Module& module) {
  std::vector<std::int64_t> f(kAutophaseDims, 0);
  for (const llvm::Function& function : module) {
    // Like CompilerGym, declarations count as functions too.
    ++f[kTotalFuncs];
    for (const llvm::BasicBlock& block : function) countBlock(block, f);
  }
  return f;
}

}  // namespace kiln::llvm_engine
