#include "compilers/llvm_engine/pass_runner.h"

#include <algorithm>

#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

namespace kiln::llvm_engine {
namespace {

Status parseError(std::string_view pipeline, llvm::Error error) {
  return invalidArgument("bad pass pipeline '" + std::string(pipeline) +
                         "': " + llvm::toString(std::move(error)));
}

// The end of the bracketed group that opens at text[open] ('<' or '('),
// counting nested groups of the same kind; npos if it never closes.
std::size_t closingOf(std::string_view text, std::size_t open) {
  const char opening = text[open];
  const char closing = opening == '<' ? '>' : ')';
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    if (text[i] == opening) ++depth;
    if (text[i] == closing && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// Collects the leaves of a printed pipeline ("a<p>,b(c,d<q>)"): an element
// with a parenthesized list is an adaptor or a nested manager (function(...),
// loop-mssa(...), devirt<4>(...)), not a pass of its own.
void collectLeaves(std::string_view text, std::vector<std::string>& out) {
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t nameEnd = std::min(text.find_first_of("<(,", i), text.size());
    const std::string_view name = text.substr(i, nameEnd - i);
    i = nameEnd;
    if (i < text.size() && text[i] == '<') i = std::min(closingOf(text, i), text.size() - 1) + 1;
    if (i < text.size() && text[i] == '(') {
      const std::size_t close = std::min(closingOf(text, i), text.size());
      collectLeaves(text.substr(i + 1, close - i - 1), out);
      i = close + 1;
    } else if (!name.empty() && name != "require" && name != "invalidate" &&
               std::find(out.begin(), out.end(), name) == out.end()) {
      out.emplace_back(name);
    }
    if (i < text.size() && text[i] == ',') ++i;
  }
}

}  // namespace

Status runPipeline(llvm::Module& module, llvm::TargetMachine* tm, std::string_view pipeline,
                   bool* allPreserved) {
  // opt makes a TargetMachine only for a module that names an architecture
  // (llvm-stress's modules have no triple): without one, passes see LLVM's
  // target-independent cost model, not the host's.
  const llvm::Triple triple(module.getTargetTriple());
  if (triple.getArch() == llvm::Triple::UnknownArch) tm = nullptr;
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

  llvm::TargetLibraryInfoImpl tlii{triple};
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);

  llvm::ModulePassManager mpm;
  if (llvm::Error error =
          pb.parsePassPipeline(mpm, llvm::StringRef(pipeline.data(), pipeline.size()))) {
    return parseError(pipeline, std::move(error));
  }
  const llvm::PreservedAnalyses preserved = mpm.run(module, mam);
  if (allPreserved != nullptr) *allPreserved = preserved.areAllPreserved();
  return okStatus();
}

Result<std::vector<std::string>> passesRunBy(std::string_view pipeline) {
  llvm::PassInstrumentationCallbacks pic;
  // The PassBuilder fills `pic` with the class-name -> pass-name map that
  // printPipeline needs.
  llvm::PassBuilder pb(nullptr, llvm::PipelineTuningOptions(), std::nullopt, &pic);
  llvm::ModulePassManager mpm;
  if (llvm::Error error =
          pb.parsePassPipeline(mpm, llvm::StringRef(pipeline.data(), pipeline.size()))) {
    return parseError(pipeline, std::move(error));
  }
  std::string printed;
  llvm::raw_string_ostream os(printed);
  mpm.printPipeline(os, [&](llvm::StringRef className) {
    llvm::StringRef name = pic.getPassNameForClassName(className);
    return name.empty() ? className : name;
  });
  os.flush();
  std::vector<std::string> passes;
  collectLeaves(printed, passes);
  return passes;
}

}  // namespace kiln::llvm_engine
