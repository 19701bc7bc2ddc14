#include "compilers/llvm_engine/baselines.h"

#include <memory>

#include "compilers/llvm_engine/module_state.h"

namespace kiln::llvm_engine {
namespace {

struct Measured {
  std::int64_t instCount = 0;
  std::int64_t textSize = 0;
};

Result<Measured> measure(const ModuleState& state) {
  KILN_ASSIGN_OR_RETURN(std::int64_t count, state.instructionCount());
  KILN_ASSIGN_OR_RETURN(std::int64_t text, state.objectTextSizeBytes());
  return Measured{count, text};
}

Result<Measured> measureAfter(const ModuleState& state, std::string_view pipeline) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<ModuleState> copy, state.clone());
  KILN_ASSIGN_OR_RETURN(PassOutcome outcome, copy->applyPipeline(pipeline));
  (void)outcome;
  return measure(*copy);
}

}  // namespace

Result<Baselines> computeBaselines(const ModuleState& state) {
  KILN_ASSIGN_OR_RETURN(Measured o0, measure(state));
  KILN_ASSIGN_OR_RETURN(Measured o3, measureAfter(state, "default<O3>"));
  KILN_ASSIGN_OR_RETURN(Measured oz, measureAfter(state, "default<Oz>"));
  return Baselines{o0.instCount, o3.instCount, oz.instCount, o0.textSize, o3.textSize, oz.textSize};
}

}  // namespace kiln::llvm_engine
