#include "programs/llvm_tools.h"

#include "common/subprocess.h"
#include "programs/corpus_layout.h"

namespace kiln::programs {

bool hasBitcodeMagic(std::string_view bytes) {
  static constexpr unsigned char kRaw[] = {'B', 'C', 0xC0, 0xDE};
  static constexpr unsigned char kWrapper[] = {0xDE, 0xC0, 0x17, 0x0B};
  if (bytes.size() < 4) return false;
  auto matches = [&](const unsigned char* magic) {
    for (int i = 0; i < 4; ++i) {
      if (static_cast<unsigned char>(bytes[i]) != magic[i]) return false;
    }
    return true;
  };
  return matches(kRaw) || matches(kWrapper);
}

Status runTool(const std::vector<std::string>& argv, const std::filesystem::path& workingDirectory,
               const ToolLimits& limits, ErrorCode failure, std::string_view what) {
  SubprocessOptions options;
  options.workingDirectory = workingDirectory;
  options.memoryLimitBytes = limits.memoryBytes;
  // A tool must not outlive the thread that waits for it (the caller's).
  options.dieWithParent = true;
  // Diagnostics beyond what trimDiagnostics keeps are never read.
  constexpr std::size_t kCaptureBytes = 64 << 10;
  auto ran = runSubprocess(argv, limits.timeout, options, kCaptureBytes);
  if (!ran.ok()) {
    if (ran.status().code() == ErrorCode::kTimeout) {
      return timeoutError(std::string(what) + " did not finish within " +
                          std::to_string(limits.timeout.count()) + " ms");
    }
    return ran.status();
  }
  if (ran->status.success()) return okStatus();
  std::string message = std::string(what) + " failed (" + ran->status.describe() + ")";
  if (ran->status.signaled()) {
    message += "; it may have run out of its " + std::to_string(limits.memoryBytes >> 20) +
               " MiB memory limit";
  }
  std::string diagnostics = trimDiagnostics(ran->stderrText);
  if (!diagnostics.empty()) message += ":\n" + diagnostics;
  return Status(failure, std::move(message));
}

Status compileToBitcode(BitcodeCompile& compile, const ToolLimits& limits,
                        std::vector<std::string>& dropped) {
  constexpr int kAttempts = 4;
  std::string what = "clang (" + compile.source.filename().string() + ")";
  for (int attempt = 1;; ++attempt) {
    Status compiled =
        runTool(compile.argv, compile.workingDirectory, limits, ErrorCode::kCompileError, what);
    if (compiled.code() != ErrorCode::kCompileError || attempt == kAttempts) return compiled;
    std::vector<std::string> unknown = unknownArguments(compiled.message());
    if (unknown.empty() || !dropUnknownArguments(compile, unknown)) return compiled;
    dropped.insert(dropped.end(), unknown.begin(), unknown.end());
  }
}

Status verifyModule(const std::filesystem::path& file, const std::string& opt,
                    const ToolLimits& limits) {
  return runTool({opt, "-passes=verify", "-disable-output", file.string()}, {}, limits,
                 ErrorCode::kInvalidArgument, "LLVM 19 (" + opt + " -passes=verify)");
}

}  // namespace kiln::programs
