#include "programs/make/llvm_tools.h"

#include <cstdlib>
#include <optional>

#include "common/process/subprocess.h"
#include "common/security/file_confinement.h"
#include "programs/make/corpus_layout.h"

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
  std::optional<FileConfinement> confinement;
  if (limits.confined) {
    KILN_ASSIGN_OR_RETURN(confinement, FileConfinement::prepareIfSupported(
                                           compilerPaths(workingDirectory, argv.front())));
    if (confinement) options.confinement = &*confinement;
  }
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

std::optional<std::string> bitcodeProducer(const std::filesystem::path& file,
                                           const std::string& bcanalyzer,
                                           const ToolLimits& limits) {
  SubprocessOptions options;
  options.memoryLimitBytes = limits.memoryBytes;
  // The identification block comes first: its dump is in the first lines.
  auto dumped = runSubprocess({bcanalyzer, "-dump", file.string()}, limits.timeout, options,
                              std::size_t{64} << 10);
  if (!dumped.ok()) return std::nullopt;
  const std::string& text = dumped->stdoutText;
  const std::size_t block = text.find("<IDENTIFICATION_BLOCK_ID");
  const std::size_t blockEnd = text.find("</IDENTIFICATION_BLOCK_ID>", block);
  if (block == std::string::npos || blockEnd == std::string::npos) return std::nullopt;
  // <STRING abbrevid=4 op0=76 op1=76 op2=86 op3=77 ... />: one op per
  // character (the dump adds the text only when it thinks it printable).
  const std::size_t record = text.find("<STRING", block);
  if (record == std::string::npos || record > blockEnd) return std::nullopt;
  const std::size_t recordEnd = text.find("/>", record);
  if (recordEnd == std::string::npos || recordEnd > blockEnd) return std::nullopt;
  std::string producer;
  for (std::size_t op = text.find(" op", record); op < recordEnd; op = text.find(" op", op + 1)) {
    const std::size_t equals = text.find('=', op);
    if (equals == std::string::npos || equals > recordEnd) break;
    const long value = std::strtol(text.c_str() + equals + 1, nullptr, 10);
    if (value < 0x20 || value > 0x7e) return std::nullopt;  // printable ASCII only
    producer.push_back(static_cast<char>(value));
  }
  if (producer.empty()) return std::nullopt;
  return producer;
}

}  // namespace kiln::programs
