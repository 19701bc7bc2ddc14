#include "programs/datasets/generators.h"

#include <stdlib.h>

#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "common/process/subprocess.h"
#include "programs/datasets/file_source.h"

namespace kiln::datasets {
namespace {

constexpr std::size_t kStderrCapture = 64 * 1024;
constexpr std::size_t kStderrTail = 2000;

std::string tail(const std::string& text) {
  if (text.size() <= kStderrTail) return text;
  return "..." + text.substr(text.size() - kStderrTail);
}

// A fresh directory that is removed, with everything in it, on every path out.
class ScratchDir {
 public:
  static Result<ScratchDir> create(const std::filesystem::path& parent) {
    std::error_code ec;
    std::filesystem::path base = parent.empty() ? std::filesystem::temp_directory_path(ec) : parent;
    if (ec) return internalError("no temporary directory: " + ec.message());
    std::filesystem::create_directories(base, ec);
    if (ec) {
      return permissionDenied("cannot create scratch directory " + base.string() + ": " +
                              ec.message());
    }
    std::string pattern = (base / "kiln-gen-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      return permissionDenied("cannot create a scratch directory under " + base.string());
    }
    return ScratchDir(pattern);
  }
  ScratchDir(ScratchDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  ScratchDir& operator=(ScratchDir&&) = delete;
  ~ScratchDir() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit ScratchDir(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

SubprocessOptions toolOptions(const DatasetConfig& config, const std::filesystem::path& dir) {
  SubprocessOptions options;
  options.workingDirectory = dir;
  options.memoryLimitBytes = config.toolMemoryLimitBytes;
  return options;
}

// Adds "which tool, which seed" to failures that are not the tool's own verdict.
Status toolFailure(const Status& status, std::string_view dataset, const std::string& tool,
                   std::uint32_t seed) {
  std::string prefix = std::string(dataset) + " seed " + std::to_string(seed) + ": ";
  if (status.code() == ErrorCode::kNotFound) {
    return notFound(prefix + "tool " + tool + " is not available (" + status.message() +
                    "); install it or set its path in DatasetConfig");
  }
  return Status(status.code(), prefix + status.message());
}

}  // namespace

Result<std::uint32_t> parseSeed(std::string_view text) {
  auto bad = [&](const char* why) {
    return invalidArgument("generator seed '" + std::string(text.substr(0, 40)) + "' " + why);
  };
  if (text.empty()) return bad("is empty");
  if (text.size() > 10) return bad("is out of range [0, 4294967295]");
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return bad("is not a decimal number");
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (text.size() > 1 && text[0] == '0') return bad("has leading zeros (use the canonical form)");
  if (value > 0xffffffffull) return bad("is out of range [0, 4294967295]");
  return static_cast<std::uint32_t>(value);
}

Result<BenchmarkBytes> generateCsmith(const DatasetConfig& config, std::uint32_t seed) {
  KILN_ASSIGN_OR_RETURN(ScratchDir dir, ScratchDir::create(config.scratchDirectory));
  std::string seedText = std::to_string(seed);
  std::string stem = "csmith-" + seedText;

  // csmith writes to stdout (not -o) so its header comment does not mention a path.
  std::vector<std::string> csmithArgv = {config.csmith.string(), "--seed", seedText};
  csmithArgv.insert(csmithArgv.end(), config.csmithArgs.begin(), config.csmithArgs.end());
  auto generated = runSubprocess(csmithArgv, config.generatorTimeout,
                                 toolOptions(config, dir.path()), config.maxBenchmarkBytes + 1);
  if (!generated.ok()) return toolFailure(generated.status(), kCsmithDataset, "csmith", seed);
  if (!generated->status.success()) {
    return compileError("csmith failed for seed " + seedText + " (" + generated->status.describe() +
                        "): " + tail(generated->stderrText));
  }
  if (generated->stdoutText.size() > config.maxBenchmarkBytes) {
    return invalidArgument("csmith program for seed " + seedText + " is over the size limit of " +
                           std::to_string(config.maxBenchmarkBytes) + " bytes");
  }
  {
    std::ofstream source(dir.path() / (stem + ".c"), std::ios::binary);
    source << generated->stdoutText;
    if (!source.flush()) {
      return internalError("cannot write " + (dir.path() / (stem + ".c")).string());
    }
  }

  // Relative names keep the scratch path out of the module, so bytes depend on the seed only.
  std::vector<std::string> clangArgv = {
      config.clang.string(), "-O2", "-Xclang",   "-disable-llvm-passes",
      "-emit-llvm",          "-c",  "-w",        "-I" + config.csmithIncludeDir.string(),
      stem + ".c",           "-o",  stem + ".bc"};
  auto compiled = runSubprocess(clangArgv, config.compileTimeout, toolOptions(config, dir.path()),
                                kStderrCapture);
  if (!compiled.ok()) return toolFailure(compiled.status(), kCsmithDataset, "clang", seed);
  if (!compiled->status.success()) {
    return compileError("clang could not compile the csmith program for seed " + seedText + " (" +
                        compiled->status.describe() + "): " + tail(compiled->stderrText));
  }
  KILN_ASSIGN_OR_RETURN(
      std::string bytes,
      readBenchmarkFile(dir.path() / (stem + ".bc"), Format::kBitcode, config.maxBenchmarkBytes));
  return BenchmarkBytes{"generator://" + std::string(kCsmithDataset) + "/" + seedText,
                        std::move(bytes), Format::kBitcode};
}

Result<BenchmarkBytes> generateLlvmStress(const DatasetConfig& config, std::uint32_t seed) {
  KILN_ASSIGN_OR_RETURN(ScratchDir dir, ScratchDir::create(config.scratchDirectory));
  std::string seedText = std::to_string(seed);
  std::vector<std::string> argv = {config.llvmStress.string(), "-seed=" + seedText,
                                   "-size=" + std::to_string(config.llvmStressSize), "-o", "-"};
  auto generated = runSubprocess(argv, config.generatorTimeout, toolOptions(config, dir.path()),
                                 config.maxBenchmarkBytes + 1);
  if (!generated.ok()) {
    return toolFailure(generated.status(), kLlvmStressDataset, "llvm-stress", seed);
  }
  if (!generated->status.success()) {
    return compileError("llvm-stress failed for seed " + seedText + " (" +
                        generated->status.describe() + "): " + tail(generated->stderrText));
  }
  if (generated->stdoutText.size() > config.maxBenchmarkBytes) {
    return invalidArgument("llvm-stress module for seed " + seedText +
                           " is over the size limit of " +
                           std::to_string(config.maxBenchmarkBytes) + " bytes");
  }
  if (generated->stdoutText.empty()) {
    return compileError("llvm-stress produced no output for seed " + seedText);
  }
  return BenchmarkBytes{"generator://" + std::string(kLlvmStressDataset) + "/" + seedText,
                        std::move(generated->stdoutText), Format::kIr};
}

}  // namespace kiln::datasets
