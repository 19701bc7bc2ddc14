// `kiln bench <name>`: benchmarks that print figures (a table, or JSON with --json).
#include <fmt/format.h>

#include "bench/nesting_bench.h"
#include "bench/rtt_bench.h"
#include "cli/commands.h"

namespace kiln::cli {

namespace {

void printOrFail(const Result<bench::Report>& report, bool json) {
  if (!report.ok()) {
    fmt::print(stderr, "benchmark failed: {}\n", report.status().toString());
    throw CLI::RuntimeError(1);
  }
  report->print(json);
}

}  // namespace

void addBenchCommand(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "run a benchmark and print its figures");
  bench->require_subcommand(1);
  auto json = std::make_shared<bool>(false);
  bench->add_flag("--json", *json, "print the figures as JSON");

  auto* rtt = bench->add_subcommand("rtt", "noop step round trip, throughput and memory");
  auto rttOptions = std::make_shared<bench::RttOptions>();
  rtt->add_option("--iterations", rttOptions->iterations, "round trips per measurement")
      ->capture_default_str();
  rtt->add_option("--idle-sessions", rttOptions->idleSessions, "sessions for the memory figure")
      ->capture_default_str();
  rtt->add_option("--slots", rttOptions->slots, "worker slots")->capture_default_str();
  rtt->add_flag("!--no-pinned", rttOptions->pinned, "skip the run pinned to CPU 0");
  rtt->add_flag("--json", *json, "print the figures as JSON");
  rtt->callback([rttOptions, json] { printOrFail(bench::runRttBench(*rttOptions), *json); });

  auto* nesting = bench->add_subcommand(
      "nesting", "experiments with training lulls: dedicated slots vs one nesting host");
  auto nestingOptions = std::make_shared<bench::NestingOptions>();
  nesting
      ->add_option("--experiments", nestingOptions->experimentCounts,
                   "experiment counts to run (each a pair of layouts)")
      ->capture_default_str();
  nesting->add_option("--slots", nestingOptions->slots, "total slots (0 = cores, at least K)")
      ->capture_default_str();
  nesting->add_option("--steps", nestingOptions->stepsPerPhase, "steps per collection phase")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  nesting->add_option("--phases", nestingOptions->phases, "collection phases per experiment")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100u));
  nesting->add_option("--busy-us", nestingOptions->busyMicros, "compile time of one step")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1000000u));
  nesting->add_flag("--json", *json, "print the figures as JSON");
  nesting->callback(
      [nestingOptions, json] { printOrFail(bench::runNestingBench(*nestingOptions), *json); });

  auto* echo = bench->add_subcommand("zmq-echo", "the raw ZeroMQ baseline server (internal)");
  echo->group("");  // hidden from --help
  auto listen = std::make_shared<std::string>("tcp://127.0.0.1:0");
  echo->add_option("--listen", *listen, "endpoint");
  echo->callback([listen] { std::exit(bench::runZmqEchoServer(*listen)); });
}

}  // namespace kiln::cli
