#include "llvmenv/pass_runner.h"

#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

namespace kiln::llvmenv {

Status runPipeline(llvm::Module& module, llvm::TargetMachine* tm, std::string_view pipeline,
                   bool* allPreserved) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;

  llvm::PassInstrumentationCallbacks pic;
  llvm::StandardInstrumentations si(module.getContext(), /*DebugLogging=*/false,
                                    /*VerifyEach=*/false);
  // Same defaults as opt's NewPMDriver: default tuning options, no PGO.
  llvm::PassBuilder pb(tm, llvm::PipelineTuningOptions(), std::nullopt, &pic);
  si.registerCallbacks(pic, &mam);

  llvm::TargetLibraryInfoImpl tlii{llvm::Triple(module.getTargetTriple())};
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);

  llvm::ModulePassManager mpm;
  if (llvm::Error error =
          pb.parsePassPipeline(mpm, llvm::StringRef(pipeline.data(), pipeline.size()))) {
    return invalidArgument("bad pass pipeline '" + std::string(pipeline) +
                           "': " + llvm::toString(std::move(error)));
  }
  const llvm::PreservedAnalyses preserved = mpm.run(module, mam);
  if (allPreserved != nullptr) *allPreserved = preserved.areAllPreserved();
  return okStatus();
}

Result<std::string> canonicalPipeline(std::string_view pipeline) {
  llvm::PassInstrumentationCallbacks pic;
  // The PassBuilder fills `pic` with the class-name -> pass-name map that
  // printPipeline needs.
  llvm::PassBuilder pb(nullptr, llvm::PipelineTuningOptions(), std::nullopt, &pic);
  llvm::ModulePassManager mpm;
  if (llvm::Error error =
          pb.parsePassPipeline(mpm, llvm::StringRef(pipeline.data(), pipeline.size()))) {
    return invalidArgument("bad pass pipeline '" + std::string(pipeline) +
                           "': " + llvm::toString(std::move(error)));
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  mpm.printPipeline(os, [&](llvm::StringRef className) {
    llvm::StringRef name = pic.getPassNameForClassName(className);
    return name.empty() ? className : name;
  });
  os.flush();
  return text;
}

}  // namespace kiln::llvmenv
