// Runs LLVM work so that report_fatal_error, fatal diagnostics and crashes
// inside it come back as a kiln::Status instead of ending the process. Used
// around parsing, pass execution and codegen; the caller must treat the
// objects touched by a failed call as poisoned (leak them, never reuse them).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace llvm {
class LLVMContext;
}

namespace kiln::llvmenv {

// Runs `fn` inside an llvm::CrashRecoveryContext. Returns ok if it returned
// normally, otherwise compileError("<what>: <reason>") where the reason is the
// message of report_fatal_error or the signal that was caught.
Status runGuarded(std::string_view what, const std::function<void()>& fn);

// Collects error diagnostics of one LLVMContext instead of letting LLVM's
// default handler print them and exit(1). Install once per context; the
// collector must outlive the context's use.
class DiagnosticCollector {
 public:
  void install(llvm::LLVMContext& context);
  bool hasErrors() const { return !errors_.empty(); }
  // The collected error messages joined with "; " (then cleared).
  std::string takeErrors();

 private:
  static void handle(const void* info, void* self);
  std::vector<std::string> errors_;
};

}  // namespace kiln::llvmenv
