// `kiln datasets check DIR`: checks every module of a corpus directory in
// this process, as a worker's sessions would load it, and lists the modules
// it would skip or reject with the reasons. Exit status 1 when there is any.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "programs/datasets/corpus_check.h"
#include "tools/cli/commands.h"

namespace kiln::cli {

namespace {

struct CheckOptions {
  std::string directory;
  std::uint64_t maxBytes = std::uint64_t{64} << 20;
  bool quiet = false;
};

void runCheck(const CheckOptions& o) {
  const bool bar = !o.quiet && ::isatty(STDERR_FILENO) != 0;
  auto report =
      datasets::checkCorpus(o.directory, o.maxBytes, [&](std::size_t done, std::size_t total) {
        if (bar && (done % 50 == 0 || done == total)) {
          fmt::print(stderr, "\rchecking {}/{} modules", done, total);
          if (done == total) fmt::print(stderr, "\n");
        }
      });
  if (!report.ok()) {
    fmt::print(stderr, "kiln datasets check: {}\n", report.status().toString());
    throw CLI::RuntimeError(2);
  }
  for (const datasets::BenchmarkProblem& p : report->problems) {
    fmt::print("{}\t{}\t{}\n", p.module, p.kind, p.reason);
  }
  std::fflush(stdout);
  fmt::print(stderr, "{} ({} bytes): {} accepted by LLVM 19, {} rejected, {} skipped\n",
             report->description, report->bytes, report->accepted, report->rejected,
             report->skipped);
  if (report->problems.size() < report->rejected + report->skipped) {
    fmt::print(stderr, "(the first {} problems of each kind are listed)\n",
               datasets::kMaxProblemsKept);
  }
  if (!report->clean()) throw CLI::RuntimeError(1);
}

}  // namespace

void addDatasetsCheckCommand(CLI::App& datasets) {
  auto* command = datasets.add_subcommand(
      "check",
      "check every module of a corpus directory as a worker would load it (LLVM 19 parse and "
      "verifier); lists what would be skipped or rejected, exit status 1 if anything");
  auto options = std::make_shared<CheckOptions>();
  command->add_option("DIR", options->directory, "an MLGO corpus or a directory of .bc/.ll files")
      ->required()
      ->check(CLI::ExistingDirectory);
  command
      ->add_option("--max-benchmark-bytes", options->maxBytes,
                   "modules larger than this are rejected, as on a worker")
      ->capture_default_str();
  command->add_flag("--quiet", options->quiet, "no progress line");
  command->callback([options] { runCheck(*options); });
}

}  // namespace kiln::cli
