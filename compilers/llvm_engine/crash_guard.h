// Runs LLVM work so that report_fatal_error, fatal diagnostics and crashes
// inside it come back as a kiln::Status instead of ending the process. Used
// around parsing, pass execution and codegen; the caller must treat the
// objects touched by a failed call as poisoned (leak them, never reuse them).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>

namespace llvm {
class LLVMContext;
}

namespace kiln::llvm_engine {

// Runs `fn` inside an llvm::CrashRecoveryContext. Returns ok if it returned
// normally, otherwise compileError("<what>: <reason>") where the reason is the
// message of report_fatal_error or the signal that was caught.
Status runGuarded(std::string_view what, const std::function<void()>& fn);

// The first crash (a signal, not a report_fatal_error) that runGuarded caught
// in this process, described; nullopt while there was none. A caught crash
// keeps the process alive for its answer, but the code that crashed may have
// written through a wild pointer first, or died holding a lock (malloc's
// among them) that nobody will release: the process's memory can no longer
// be trusted. Hosts use this to stop serving and be restarted
// (ServiceContext::damage()).
std::optional<std::string> firstCaughtCrash();

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

}  // namespace kiln::llvm_engine
