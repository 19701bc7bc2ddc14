#include "compilers/llvm_engine/inst_count.h"

#include <array>

#include "llvm/IR/Instruction.h"
#include "llvm/IR/Module.h"

namespace kiln::llvm_engine {
namespace {

constexpr std::size_t kTotals = 3;

// Opcode numbers in Instruction.def order; generated from LLVM's own list so
// new opcodes appear without code changes.
constexpr std::array kOpcodes = {
#define HANDLE_INST(N, OPCODE, CLASS) unsigned{N},
#include "llvm/IR/Instruction.def"
};

constexpr std::array<std::string_view, kTotals + kOpcodes.size()> kNames = {
    "TotalInstsCount",
    "TotalBlocksCount",
    "TotalFuncsCount",
#define HANDLE_INST(N, OPCODE, CLASS) #OPCODE "Count",
#include "llvm/IR/Instruction.def"
};

constexpr unsigned kMaxOpcode = [] {
  unsigned max = 0;
  for (unsigned op : kOpcodes) max = op > max ? op : max;
  return max;
}();

// Opcode number -> feature index.
constexpr std::array<std::size_t, kMaxOpcode + 1> kSlot = [] {
  std::array<std::size_t, kMaxOpcode + 1> slot{};
  for (std::size_t i = 0; i < kOpcodes.size(); ++i) slot[kOpcodes[i]] = kTotals + i;
  return slot;
}();

}  // namespace

std::span<const std::string_view> instCountFeatureNames() { return kNames; }

std::vector<std::int64_t> computeInstCount(const llvm::Module& module) {
  std::vector<std::int64_t> features(kNames.size(), 0);
  for (const llvm::Function& function : module) {
    ++features[2];
    for (const llvm::BasicBlock& block : function) {
      ++features[1];
      for (const llvm::Instruction& inst : block) {
        ++features[0];
        const unsigned opcode = inst.getOpcode();
        if (opcode <= kMaxOpcode) ++features[kSlot[opcode]];
      }
    }
  }
  return features;
}

std::int64_t countInstructions(const llvm::Module& module) {
  return static_cast<std::int64_t>(module.getInstructionCount());
}

}  // namespace kiln::llvm_engine
