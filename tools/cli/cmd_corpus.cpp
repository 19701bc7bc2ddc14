// `kiln corpus extract`: a build's compile_commands.json to an ml-compiler-opt
// corpus (programs/make/corpus_extract.h), with a progress bar on a terminal and
// plain lines otherwise, then the counts and the skip reasons.
#include <fmt/format.h>
#include <unistd.h>

#include <fstream>

#include "programs/make/corpus_extract.h"
#include "tools/cli/commands.h"

namespace kiln::cli {

namespace {

struct CorpusExtractCli {
  programs::ExtractOptions extract;
  std::string compileCommands;  // the file, or the build directory holding it
  std::string report;           // --report FILE
  std::int64_t timeoutMs = 120'000;
  std::uint64_t memoryMiB = 4096;
  std::uint64_t maxModuleMiB = 64;
};

[[noreturn]] void fail(const Status& status) {
  fmt::print(stderr, "kiln corpus extract: {}\n", status.toString());
  throw CLI::RuntimeError(1);
}

// One line redrawn in place on a terminal; a line per compile otherwise (logs, CI).
class ProgressPrinter {
 public:
  ProgressPrinter() : terminal_(::isatty(STDERR_FILENO) == 1) {}
  ~ProgressPrinter() {
    if (terminal_ && drawn_) fmt::print(stderr, "\n");
  }
  void operator()(const programs::ExtractProgress& p) {
    drawn_ = true;
    if (!terminal_) {
      fmt::print(stderr, "[{}/{}] {}: {}\n", p.done, p.total, p.source, p.outcome);
      return;
    }
    constexpr std::size_t kWidth = 30;
    std::size_t filled = p.total == 0 ? kWidth : p.done * kWidth / p.total;
    std::string name = std::filesystem::path(p.source).filename().string();
    if (name.size() > 30) name = name.substr(0, 27) + "...";
    fmt::print(stderr, "\r[{}{}] {}/{}  extracted {}  skipped {}  {:<30}", std::string(filled, '#'),
               std::string(kWidth - filled, '.'), p.done, p.total, p.extracted, p.skipped, name);
    std::fflush(stderr);
  }

 private:
  bool terminal_;
  bool drawn_ = false;
};

// The line of a skip's detail that says most: clang's first error, else the first line.
std::string firstTellingLine(const std::string& detail) {
  std::size_t error = detail.find("error:");
  std::size_t start = error == std::string::npos ? 0 : detail.rfind('\n', error);
  start = start == std::string::npos || error == std::string::npos ? 0 : start + 1;
  return detail.substr(start, detail.find('\n', start) - start);
}

void runExtract(CorpusExtractCli& o) {
  std::filesystem::path commands = o.compileCommands;
  std::error_code ec;
  if (std::filesystem::is_directory(commands, ec)) commands /= "compile_commands.json";
  o.extract.compileCommands = commands;
  o.extract.timeoutPerModule = std::chrono::milliseconds(o.timeoutMs);
  o.extract.memoryPerModuleBytes = o.memoryMiB << 20;
  o.extract.maxModuleBytes = o.maxModuleMiB << 20;
  auto printer = std::make_shared<ProgressPrinter>();
  o.extract.onProgress = [printer](const programs::ExtractProgress& p) { (*printer)(p); };
  auto report = programs::extractCorpus(o.extract);
  printer.reset();
  o.extract.onProgress = nullptr;
  if (!report.ok()) fail(report.status());
  if (!o.report.empty()) {
    std::ofstream out(o.report, std::ios::trunc);
    out << programs::reportJson(*report);
    if (!out) fail(invalidArgument("cannot write the report to " + o.report));
  }
  auto modules = [](std::size_t n) {
    return std::to_string(n) + (n == 1 ? " module" : " modules");
  };
  fmt::print("{}: {} extracted, {} skipped, {} in the corpus ({:.1f} s; source root {})\n",
             report->output.string(), modules(report->extracted.size()), report->skipped.size(),
             modules(report->corpusModules), static_cast<double>(report->elapsed.count()) / 1000.0,
             report->sourceRoot.string());
  for (const auto& [reason, count] : programs::skippedByReason(*report)) {
    fmt::print("  skipped {:>5}  {}\n", count, reason);
    // The first one of each reason, so the cause is visible without the report.
    for (const programs::SkippedSource& skip : report->skipped) {
      if (skip.reason != reason) continue;
      std::string detail = firstTellingLine(skip.detail);
      fmt::print("                 e.g. {}: {}\n", skip.source, detail);
      break;
    }
  }
}

}  // namespace

void addCorpusCommand(CLI::App& app) {
  auto* corpus = app.add_subcommand("corpus", "build benchmark corpora from your own programs");
  corpus->require_subcommand(1);
  auto* extract = corpus->add_subcommand(
      "extract",
      "compile every source of a build's compile_commands.json (CMake's, or `bear -- make`'s) "
      "to LLVM 19 bitcode in ml-compiler-opt's corpus layout, for --dataset NAME=DIR");
  auto o = std::make_shared<CorpusExtractCli>();
  extract
      ->add_option("compile_commands", o->compileCommands,
                   "compile_commands.json, or the build directory that holds it")
      ->required();
  extract->add_option("-o,--output", o->extract.output, "the corpus directory")->required();
  extract->add_option("--source-root", o->extract.sourceRoot,
                      "module names are source paths relative to this (default: the deepest "
                      "directory holding every source)");
  extract->add_option("--prefix", o->extract.prefix, "put module names under PREFIX/");
  extract->add_flag("--append", o->extract.append, "add to the corpus already in the directory");
  extract->add_option("-j,--jobs", o->extract.jobs, "compiles at once (0: one per core)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1024u));
  extract->add_option("--timeout-ms", o->timeoutMs, "the longest one module's compile may take")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{3'600'000}));
  extract->add_option("--memory-mib", o->memoryMiB, "memory limit of each compile (RLIMIT_AS)")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{64}, std::uint64_t{1} << 20));
  extract->add_option("--max-module-mib", o->maxModuleMiB, "skip modules larger than this")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{4096}));
  extract->add_option("--report", o->report, "write every compile's outcome to this JSON file");
  extract->add_option("--clang", o->extract.clang, "the C compiler to run")->capture_default_str();
  extract->add_option("--clangxx", o->extract.clangxx, "the C++ compiler to run")
      ->capture_default_str();
  extract->add_option("--opt", o->extract.opt, "the opt that reads back and verifies every module")
      ->capture_default_str();
  extract->add_flag("!--no-read-back", o->extract.readBack,
                    "trust clang-19's own verifier on each module it writes instead of reading "
                    "it back with opt-19 (faster; only for LLVM 19's clang)");
  extract->callback([o] { runExtract(*o); });
}

}  // namespace kiln::cli
