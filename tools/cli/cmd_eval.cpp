// `kiln eval`: a built-in search agent on a dataset with a budget per
// benchmark (tools/eval/harness.h), benchmarks in parallel over the cluster's
// slots, a progress bar on stderr, then the report against -Oz as a table or
// JSON, every final state validated against -O0 unless --no-validate, and
// the best states as CSV (--states-out) for `kiln replay`; on the embedded
// single-node cluster unless --coordinator.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <kiln/client/env_state.h>
#include "tools/cli/commands.h"
#include "tools/eval/harness.h"
#include "worker/worker_cli.h"

namespace kiln::cli {
namespace {

struct EvalFlags {
  eval::EvalOptions options;
  std::string agent = "greedy";
  std::string generatorSeeds;
  std::uint64_t steps = 0;
  double seconds = 0;
  std::string keyFile;
  std::vector<std::string> allowFiles;
  std::string statesOut;
  bool json = false;
};

[[noreturn]] void fail(const Status& status) {
  fmt::print(stderr, "kiln eval: {}\n", status.toString());
  throw CLI::RuntimeError(1);
}

void drawProgress(std::size_t done, std::size_t total, const std::string& benchmark, bool tty) {
  constexpr std::size_t kWidth = 30;
  if (!tty) {
    fmt::print(stderr, "  {}/{} {}\n", done, total, benchmark);
    return;
  }
  std::size_t filled = total == 0 ? kWidth : done * kWidth / total;
  fmt::print(stderr, "\r\033[K  [{}{}] {}/{} benchmarks  (last: {})", std::string(filled, '#'),
             std::string(kWidth - filled, '-'), done, total, benchmark);
  if (done == total) fmt::print(stderr, "\n");
}

// --dataset takes a dataset's URI, or NAME=DIR: a corpus directory (an
// ml-compiler-opt corpus, a `kiln datasets install` one, a directory of
// .bc/.ll files) that the embedded cluster serves, run as benchmark://NAME.
Status splitServedDatasets(eval::EvalOptions& o) {
  std::error_code error;
  const std::filesystem::path current = std::filesystem::current_path(error);
  for (std::string& dataset : o.datasets) {
    if (dataset.find("://") != std::string::npos || dataset.find('=') == std::string::npos) {
      continue;
    }
    KILN_ASSIGN_OR_RETURN(OperatorDataset served, parseDatasetFlag(dataset, current));
    dataset = "benchmark://" + served.name;
    o.servedDatasets.push_back(std::move(served));
  }
  return okStatus();
}

void runEvalCommand(EvalFlags& flags) {
  eval::EvalOptions& o = flags.options;
  auto agent = eval::parseAgentKind(flags.agent);
  if (!agent.ok()) fail(agent.status());
  o.agent = *agent;
  if (!flags.generatorSeeds.empty()) {
    auto seeds = eval::parseSeedRange(flags.generatorSeeds);
    if (!seeds.ok()) fail(seeds.status());
    o.generatorSeeds = *seeds;
  }
  if (flags.steps == 0 && flags.seconds <= 0) flags.steps = 2000;
  o.budget.steps = flags.steps;
  o.budget.seconds = std::chrono::duration<double>(flags.seconds);
  o.keys = loadKeyFileOrExit(flags.keyFile, "eval");
  if (Status split = splitServedDatasets(o); !split.ok()) fail(split);
  auto allowed = allowFilesFromFlags(flags.allowFiles);
  if (!allowed.ok()) fail(allowed.status());
  o.allowFiles = std::move(allowed).value();
  if (!flags.statesOut.empty()) {
    // Refused before the run, not after it: the run may take hours.
    std::error_code error;
    auto parent = std::filesystem::absolute(flags.statesOut, error).parent_path();
    if (error || !std::filesystem::is_directory(parent, error)) {
      fail(invalidArgument(fmt::format("--states-out {}: directory {} does not exist",
                                       flags.statesOut, parent.string())));
    }
  }
  bool tty = ::isatty(::fileno(stderr)) != 0;
  auto report =
      eval::runEval(o, [tty](std::size_t done, std::size_t total, const std::string& benchmark) {
        drawProgress(done, total, benchmark, tty);
      });
  if (!report.ok()) fail(report.status());
  fmt::print("{}", flags.json ? eval::formatJson(*report) : eval::formatTable(*report));
  if (!flags.statesOut.empty()) {
    auto states = eval::bestStates(*report);
    if (Status written = client::writeStatesFile(flags.statesOut, states); !written.ok()) {
      fail(written);
    }
    fmt::print(stderr, "wrote {} states to {} (check them with `kiln replay {}`)\n", states.size(),
               flags.statesOut, flags.statesOut);
  }
  if (!report->failures.empty()) throw CLI::RuntimeError(1);
}

}  // namespace

void addEvalCommand(CLI::App& app) {
  auto* command = app.add_subcommand(
      "eval",
      "run a search agent (random, greedy, beam) on a dataset with a budget per benchmark and "
      "report the sizes against -Oz (on an embedded single-node cluster unless --coordinator)");
  auto flags = std::make_shared<EvalFlags>();
  eval::EvalOptions& o = flags->options;
  command->add_option("--coordinator", o.coordinator, "use this cluster instead of starting one");
  addKeyFileOption(*command, flags->keyFile);
  addAllowFilesOption(*command, flags->allowFiles)
      ->excludes(command->get_option("--coordinator"))
      ->description(
          "embedded cluster only: a directory below which its workers may read file:// "
          "benchmarks; repeatable; 'none' = no files; default: the current directory");
  command->add_option("--agent", flags->agent, "random, greedy or beam")->capture_default_str();
  command->add_option("--dataset", o.datasets,
                      "a dataset to run (repeatable): benchmark://kiln-bench-v0, a generator "
                      "such as generator://csmith-v0 with --generator-seeds, or NAME=DIR: a "
                      "corpus directory the embedded cluster serves as benchmark://NAME");
  command->add_option("--generator-seeds", flags->generatorSeeds,
                      "the seeds of the generator datasets, N or N-M (e.g. 1-20)");
  command->add_option("--benchmark", o.benchmarks, "a single benchmark URI (repeatable)");
  command->add_option("--limit", o.perDataset, "at most this many benchmarks per dataset (0 = all)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{0}, std::size_t{1000000}));
  command
      ->add_option("--steps", flags->steps,
                   "step budget per benchmark: passes applied (default 2000 when no --seconds)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{100000000}));
  command->add_option("--seconds", flags->seconds, "time budget per benchmark, in seconds")
      ->check(CLI::Range(0.0, 86400.0));
  command->add_option("--seed", o.seed, "the agent's seed (each benchmark derives its own)")
      ->capture_default_str();
  command->add_option("--parallel", o.parallel, "benchmarks at once (0 = the cluster's slots)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 4096u));
  command->add_option("--slots", o.slots, "slots of the embedded worker (0 = cores, at least 2)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 256u));
  command
      ->add_option("--episode-length", o.agentOptions.episodeLength, "random: passes per sequence")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10000u));
  command
      ->add_option("--max-length", o.agentOptions.maxSequenceLength,
                   "greedy, beam: the longest sequence built")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10000u));
  command->add_option("--beam-width", o.agentOptions.beamWidth, "beam: states kept per length")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  command
      ->add_option("--patience", o.agentOptions.patience,
                   "beam: lengths without a new best before it stops")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  command->add_flag("--json", flags->json, "print the report as JSON");
  command->add_flag(
      "!--no-validate", o.validate,
      "skip running each final state against -O0 (faster; every line then says unvalidated)");
  command->add_option("--states-out", flags->statesOut,
                      "write each benchmark's best state to this CSV file "
                      "(benchmark,reward,walltime,commandline,validity)");
  command->callback([flags] { runEvalCommand(*flags); });
}

}  // namespace kiln::cli
