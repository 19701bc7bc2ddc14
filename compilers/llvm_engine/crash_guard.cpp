#include "compilers/llvm_engine/crash_guard.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <mutex>

#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::llvm_engine {
namespace {

// Where the fatal-error handler leaves its reason for the guarded call that is
// running on this thread (nullptr outside runGuarded).
thread_local std::string* tlsFatalReason = nullptr;

void onFatalError(void* /*userData*/, const char* reason, bool /*genCrashDiag*/) {
  if (tlsFatalReason != nullptr) {
    *tlsFatalReason = reason;
  } else {
    std::fprintf(stderr, "LLVM fatal error outside a guarded call: %s\n", reason);
  }
  // Inside a CrashRecoveryContext this long-jumps back to runGuarded;
  // elsewhere it exits as LLVM would have.
  llvm::sys::Process::Exit(1, /*NoCleanup=*/true);
}

// Process-wide like the signal handlers that feed it: a crash on any thread
// damages the one heap all threads share.
std::mutex crashMutex;
std::optional<std::string> firstCrash;
std::atomic<bool> crashCaught{false};  // hosts ask after every step: no lock then

void recordCaughtCrash(std::string_view what, const std::string& reason) {
  std::lock_guard lock(crashMutex);
  if (!firstCrash) firstCrash = std::string(what) + ": " + reason;
  crashCaught.store(true, std::memory_order_release);
}

// LLVM's fatal-error handler and crash recovery are process-wide by LLVM's
// design (one handler, one set of signal handlers), so they are installed
// exactly once per process. This is the only process-wide state of llvmenv
// besides target initialization.
void installProcessHandlersOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::install_fatal_error_handler(onFatalError, nullptr);
    llvm::CrashRecoveryContext::Enable();
  });
}

std::string describeSignal(int retCode) {
  // CrashRecoveryContext reports a signal as 128 + signo (LLVM convention).
  if (retCode > 128) {
    const char* name = strsignal(retCode - 128);
    return std::string("crashed with signal ") + std::to_string(retCode - 128) + " (" +
           (name ? name : "?") + ")";
  }
  return "exited with code " + std::to_string(retCode);
}

}  // namespace

Status runGuarded(std::string_view what, const std::function<void()>& fn) {
  installProcessHandlersOnce();
  std::string reason;
  std::string* previous = tlsFatalReason;
  tlsFatalReason = &reason;
  llvm::CrashRecoveryContext crc;
  const bool ok = crc.RunSafely([&] { fn(); });
  tlsFatalReason = previous;
  if (ok) return okStatus();
  if (reason.empty()) {
    reason = describeSignal(crc.RetCode);
    if (crc.RetCode > 128) recordCaughtCrash(what, reason);
  }
  return compileError(std::string(what) + ": LLVM failed: " + reason);
}

std::optional<std::string> firstCaughtCrash() {
  if (!crashCaught.load(std::memory_order_acquire)) return std::nullopt;
  std::lock_guard lock(crashMutex);
  return firstCrash;
}

void DiagnosticCollector::install(llvm::LLVMContext& context) {
  context.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo* info, void* self) { handle(info, self); }, this,
      /*RespectFilters=*/true);
}

void DiagnosticCollector::handle(const void* info, void* self) {
  const auto& di = *static_cast<const llvm::DiagnosticInfo*>(info);
  // Warnings, notes and remarks do not make a result wrong; only errors are
  // kept (LLVM's default handler would exit(1) on them).
  if (di.getSeverity() != llvm::DS_Error) return;
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::DiagnosticPrinterRawOStream printer(os);
  di.print(printer);
  os.flush();
  static_cast<DiagnosticCollector*>(self)->errors_.push_back(std::move(text));
}

std::string DiagnosticCollector::takeErrors() {
  std::string joined;
  for (const std::string& e : errors_) {
    if (!joined.empty()) joined += "; ";
    joined += e;
  }
  errors_.clear();
  return joined;
}

}  // namespace kiln::llvm_engine
