#include <kiln/programs/make_benchmark.h>

#include <sodium.h>

#include <cstdlib>
#include <optional>

#include "common/process/working_directory.h"
#include "common/security/file_reader.h"
#include "programs/make/clang_command.h"
#include "programs/make/llvm_tools.h"

namespace kiln::programs {
namespace {

namespace fs = std::filesystem;

enum class InputKind : std::uint8_t { kSource, kIr, kBitcode };

Result<InputKind> inputKind(const fs::path& file) {
  std::string ext = file.extension().string();
  if (ext == ".ll") return InputKind::kIr;
  if (ext == ".bc") return InputKind::kBitcode;
  auto language = languageOfSource(file, false);
  if (!language.ok()) {
    return invalidArgument(file.string() + ": " + language.status().message() +
                           "; kiln makes benchmarks of C/C++ sources, .ll and .bc files");
  }
  return InputKind::kSource;
}

Result<std::string> readBounded(const fs::path& file, std::uint64_t maxBytes) {
  return readFileBeneath(file.parent_path(), file.filename(), maxBytes);
}

// Whether LLVM 19 reads bitcode from `producer`: LLVM 19 and older do.
bool readableProducer(const std::string& producer) {
  if (!producer.starts_with("LLVM")) return false;  // Apple's and others' own numbering
  return std::atoi(producer.c_str() + 4) <= 19;
}

// Links `modules` (one or more) into `output` with llvm-link, which reads
// .ll and .bc alike and verifies the result.
Status linkModules(const std::vector<fs::path>& modules, const fs::path& output,
                   const MakeBenchmarkOptions& options) {
  std::vector<std::string> argv{options.llvmLink};
  for (const fs::path& module : modules) argv.push_back(module.string());
  argv.insert(argv.end(), {"-o", output.string()});
  std::string what = modules.size() == 1 ? "LLVM 19 (" + options.llvmLink + ") reading " +
                                               modules.front().filename().string()
                                         : "linking the modules (" + options.llvmLink + ")";
  Status linked = runTool(argv, {}, options.limits, ErrorCode::kInvalidArgument, what);
  if (linked.code() != ErrorCode::kInvalidArgument) return linked;
  // LLVM's reader names the bitcode epoch it cannot read, not who wrote
  // the module: the producer is what a user recognizes.
  for (const fs::path& module : modules) {
    std::optional<std::string> producer =
        bitcodeProducer(module, options.bcanalyzer, options.limits);
    if (producer && !readableProducer(*producer)) {
      return Status(linked.code(),
                    linked.message() + " (" + module.filename().string() +
                        " is bitcode from another LLVM version: producer '" + *producer +
                        "'; kiln reads LLVM 19 and older bitcode: regenerate it with clang-19)");
    }
  }
  return linked;
}

Result<UserBenchmark> finish(const fs::path& linked, const fs::path& name,
                             const MakeBenchmarkOptions& options) {
  std::error_code ec;
  auto size = fs::file_size(linked, ec);
  if (ec) return internalError("the linked module is missing: " + ec.message());
  if (size > options.maxBytes) {
    return invalidArgument("the benchmark's bitcode is " + std::to_string(size) +
                           " bytes, over the limit of " + std::to_string(options.maxBytes));
  }
  KILN_ASSIGN_OR_RETURN(std::string bitcode, readBounded(linked, options.maxBytes));
  if (!hasBitcodeMagic(bitcode)) {
    return invalidArgument(linked.filename().string() + " has no bitcode magic");
  }
  return UserBenchmark{userBenchmarkUri(name, bitcode), std::move(bitcode)};
}

fs::path absoluteFrom(const fs::path& directory, const fs::path& path) {
  if (path.is_absolute()) return path.lexically_normal();
  return ((directory.empty() ? fs::current_path() : directory) / path).lexically_normal();
}

Status compileSource(const CompileCommand& command, const fs::path& output,
                     const MakeBenchmarkOptions& options) {
  KILN_ASSIGN_OR_RETURN(BitcodeCompile compile,
                        bitcodeCompile(command, output, {options.clang, options.clangxx}));
  std::error_code ec;
  if (!fs::is_regular_file(compile.source, ec)) {
    return notFound("no source file " + compile.source.string());
  }
  std::vector<std::string> dropped;  // GCC's flags in a user's gcc command line
  return compileToBitcode(compile, options.limits, dropped);
}

}  // namespace

std::string userBenchmarkUri(const fs::path& name, std::string_view bitcode) {
  std::string stem;
  for (char c : name.stem().string()) {
    if (stem.size() >= 64) break;
    bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '.' || c == '_' || c == '-';
    stem.push_back(allowed ? c : '_');
  }
  if (stem.empty() || stem[0] == '.') stem.insert(0, "program");
  unsigned char hash[8];
  if (sodium_init() < 0) throw std::runtime_error("libsodium cannot initialize");
  crypto_generichash(hash, sizeof hash, reinterpret_cast<const unsigned char*>(bitcode.data()),
                     bitcode.size(), nullptr, 0);
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char byte : hash) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 15]);
  }
  return "benchmark://" + std::string(kUserDataset) + "/" + stem + "-" + hex;
}

Result<UserBenchmark> makeBenchmark(const std::vector<fs::path>& files,
                                    const MakeBenchmarkOptions& options) {
  if (files.empty()) return invalidArgument("make a benchmark of what? no files given");
  fs::path cwd = options.workingDirectory.empty() ? fs::current_path() : options.workingDirectory;
  KILN_ASSIGN_OR_RETURN(WorkingDirectory scratch,
                        WorkingDirectory::create({}, "kiln-make-benchmark"));
  std::vector<fs::path> modules;
  InputKind firstKind = InputKind::kSource;
  for (std::size_t i = 0; i < files.size(); ++i) {
    fs::path file = absoluteFrom(cwd, files[i]);
    KILN_ASSIGN_OR_RETURN(InputKind kind, inputKind(file));
    if (i == 0) firstKind = kind;
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return notFound("no file " + file.string());
    if (kind != InputKind::kSource) {
      modules.push_back(file);
      continue;
    }
    auto language = languageOfSource(file, false);
    std::vector<std::string> argv{*language == SourceLanguage::kCxx ? "c++" : "cc"};
    argv.insert(argv.end(), options.copts.begin(), options.copts.end());
    argv.insert(argv.end(), {"-c", file.string()});
    fs::path output = scratch.path() / (std::to_string(i) + ".bc");
    KILN_RETURN_IF_ERROR(compileSource(CompileCommand{argv, cwd, file}, output, options));
    modules.push_back(output);
  }
  fs::path linked = scratch.path() / "linked.bc";
  KILN_RETURN_IF_ERROR(linkModules(modules, linked, options));
  // One .bc that LLVM 19 read and verified is kept as it is, so that a
  // benchmark written to a file and made again has the same bytes and URI.
  bool oneBitcodeFile = files.size() == 1 && firstKind == InputKind::kBitcode;
  return finish(oneBitcodeFile ? modules.front() : linked, files.front(), options);
}

Result<UserBenchmark> benchmarkFromClangInvocation(const std::vector<std::string>& argv,
                                                   const fs::path& workingDirectory,
                                                   const MakeBenchmarkOptions& options) {
  fs::path cwd = workingDirectory.empty() ? fs::current_path() : absoluteFrom({}, workingDirectory);
  KILN_ASSIGN_OR_RETURN(WorkingDirectory scratch,
                        WorkingDirectory::create({}, "kiln-make-benchmark"));
  fs::path compiled = scratch.path() / "compiled.bc";
  CompileCommand command{argv, cwd, {}};
  KILN_ASSIGN_OR_RETURN(BitcodeCompile derived,
                        bitcodeCompile(command, compiled, {options.clang, options.clangxx}));
  KILN_RETURN_IF_ERROR(compileSource(command, compiled, options));
  fs::path linked = scratch.path() / "linked.bc";
  KILN_RETURN_IF_ERROR(linkModules({compiled}, linked, options));
  return finish(linked, derived.source, options);
}

}  // namespace kiln::programs
