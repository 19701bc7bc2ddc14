// `kiln bench actions --validate`: the validation campaign over every
// runnable program, judged against 0 miscompiles in the default space.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

#include "bench/actions_bench.h"
#include "compilers/llvm_engine/validation_campaign.h"
#include "compilers/llvm_session/campaign_check.h"
#include "llvm/Config/llvm-config.h"
#include "programs/bundled/kiln_bench_v0.h"
#include "programs/datasets/generators.h"

namespace kiln::bench {
namespace {

struct Programs {
  std::vector<llvm_engine::CampaignProgram> programs;
  std::vector<runs::RunSpec> specs;  // one per program
};

bool wanted(const ActionsBenchOptions& options, const std::string& name) {
  return options.programs.empty() || std::find(options.programs.begin(), options.programs.end(),
                                               name) != options.programs.end();
}

// kiln-bench-v0 with its four inputs, csmith programs (their checksum), and
// llvm-stress modules, which have no main: they show as excluded.
Result<Programs> validationPrograms(const std::shared_ptr<const llvm_engine::PassTable>& table,
                                    const ActionsBenchOptions& options) {
  Programs out;
  auto add = [&](std::string name, std::string bitcode, runs::RunSpec spec) {
    if (!wanted(options, name)) return;
    out.programs.push_back({std::move(name), std::move(bitcode)});
    out.specs.push_back(std::move(spec));
  };
  for (const bundled::EmbeddedBenchmark& b : bundled::kilnBenchV0()) {
    add("kiln-bench-v0/" + std::string(b.name),
        std::string(reinterpret_cast<const char*>(b.bitcode.data()), b.bitcode.size()),
        runs::kilnBenchRunSpec());
  }
  const datasets::DatasetConfig config;
  for (unsigned seed = 1; seed <= options.csmithPrograms; ++seed) {
    auto generated = datasets::generateCsmith(config, seed);
    if (!generated.ok()) {
      return Status(generated.status().code(),
                    fmt::format("csmith seed {}: {}", seed, generated.status().message()));
    }
    add(fmt::format("csmith-v0/{}", seed), std::move(generated->bytes), runs::csmithRunSpec());
  }
  for (unsigned seed = 1; seed <= options.llvmStressPrograms; ++seed) {
    auto generated = datasets::generateLlvmStress(config, seed);
    if (!generated.ok()) {
      return Status(generated.status().code(),
                    fmt::format("llvm-stress seed {}: {}", seed, generated.status().message()));
    }
    // Textual IR: the campaign takes bitcode.
    KILN_ASSIGN_OR_RETURN(
        auto parsed, llvm_engine::ModuleState::fromIrText(table, generated->bytes, "llvm-stress"));
    KILN_ASSIGN_OR_RETURN(Bytes bitcode, parsed->bitcode());
    add(fmt::format("llvm-stress-v0/{}", seed), std::move(bitcode.data),
        runs::RunSpec{{runs::ProgramInput{}}, {"m"}});
  }
  if (out.programs.empty()) return invalidArgument("--program names no campaign program");
  return out;
}

// The command that reproduces this run, as a user would type it.
std::string commandLine(const ActionsBenchOptions& o) {
  std::string command = fmt::format(
      "kiln bench actions --validate --episodes {} --steps {} --seed {} --csmith {} "
      "--llvm-stress {} --threads {}",
      o.episodes, o.steps, o.seed, o.csmithPrograms, o.llvmStressPrograms, o.threads);
  if (o.maxSeconds > 0) command += fmt::format(" --max-seconds {}", o.maxSeconds);
  if (!o.asan) command += " --no-asan";
  for (const std::string& pass : o.putBack) command += " --put-back " + pass;
  for (const std::string& pass : o.focus) command += " --focus " + pass;
  for (const std::string& program : o.programs) command += " --program " + program;
  return command + (o.json ? " --json" : "");
}

// "<CPU model>, <n> CPUs, LLVM <version>": what the figures were measured on.
std::string machine() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpuinfo, line)) {
    if (line.starts_with("model name")) {
      const std::size_t colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  }
  return fmt::format("{}, {} CPUs, LLVM {}", model, std::thread::hardware_concurrency(),
                     LLVM_VERSION_STRING);
}

std::string utcNow() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  return fmt::format("{:%Y-%m-%d %H:%M} UTC", utc);
}

double count(std::uint64_t n) { return static_cast<double>(n); }

}  // namespace

Result<Report> runValidationBench(const ActionsBenchOptions& options) {
  KILN_ASSIGN_OR_RETURN(auto table, llvm_engine::PassTable::fromRegistry());
  KILN_ASSIGN_OR_RETURN(Programs programs, validationPrograms(table, options));
  llvm_session::ProgramCheckOptions checkOptions;
  checkOptions.asan = options.asan;
  KILN_ASSIGN_OR_RETURN(llvm_engine::BehaviourCheck check,
                        llvm_session::makeProgramCheck(programs.specs, checkOptions));
  llvm_engine::ValidationOptions campaign;
  campaign.plan.sequences = options.episodes;
  campaign.plan.randomSteps = options.steps;
  campaign.plan.seed = options.seed;
  campaign.plan.focus = options.focus;
  campaign.putBack = options.putBack;
  campaign.threads = options.threads;
  campaign.timeLimit =
      std::chrono::milliseconds(static_cast<std::int64_t>(options.maxSeconds * 1000));
  KILN_ASSIGN_OR_RETURN(
      llvm_engine::ValidationCampaignReport result,
      llvm_engine::runValidationCampaign(table, programs.programs, check, campaign));

  Report report;
  report.title = fmt::format(
      "kiln bench actions --validate: {} sequences of {} actions{} over {} programs, each final "
      "state's program run on every input{} and judged against the program as it came (-O0): "
      "0 miscompiles expected in the default space",
      result.planned, table->size(),
      options.putBack.empty() ? "" : fmt::format(" (+{} put back)", options.putBack.size()),
      result.programs.size(), options.asan ? " (and its ASan build)" : "");
  Row run;
  run.text = {{"figure", "run"},
              {"command", commandLine(options)},
              {"date", utcNow()},
              {"machine", machine()}};
  report.rows.push_back(std::move(run));
  Row totals;
  totals.text = {{"figure", "campaign"}, {"asan", options.asan ? "yes" : "no"}};
  totals.numbers = {
      {"programs", count(result.programs.size())}, {"excluded", count(result.excluded.size())},
      {"planned", count(result.planned)},          {"sequences", count(result.sequences)},
      {"unchanged", count(result.unchanged)},      {"checks", count(result.checks)},
      {"miscompiles", count(result.miscompiles)},  {"broken", count(result.broken)},
      {"check_errors", count(result.checkErrors)}, {"seconds", result.seconds}};
  report.rows.push_back(std::move(totals));
  Row names;
  names.text = {{"figure", "programs"},
                {"names", fmt::format("{}", fmt::join(result.programs, ", "))}};
  report.rows.push_back(std::move(names));
  for (const llvm_engine::FamilyVerdicts& family : result.families) {
    Row row;
    row.text = {{"figure", "family"},
                {"family", std::string(llvm_engine::familyName(family.family))}};
    row.numbers = {{"sequences", count(family.sequences)},
                   {"miscompiles", count(family.miscompiles)}};
    report.rows.push_back(std::move(row));
  }
  for (std::size_t i = 0; i < result.passes.size(); ++i) {
    const llvm_engine::PassVerdicts& pass = result.passes[i];
    // The table's single passes are the default space; pipelines follow.
    const std::string_view space = pass.putBack ? "put back"
                                   : i < table->singlePassCount()
                                       ? llvm_engine::kActionSpaces[0].name
                                       : llvm_engine::kActionSpaces[1].name;
    Row row;
    row.text = {{"figure", "pass"}, {"pass", pass.pass}, {"space", std::string(space)}};
    row.numbers = {{"tried", count(pass.tried)},
                   {"changed", count(pass.changed)},
                   {"miscompiles", count(pass.miscompiles)},
                   {"broke", count(pass.broke)}};
    report.rows.push_back(std::move(row));
  }
  for (const llvm_engine::Reproducer& found : result.reproducers) {
    Row row;
    row.text = {{"figure", "miscompile"},
                {"program", found.program},
                {"family", std::string(llvm_engine::familyName(found.family))},
                {"pass", found.sequence.back()},
                {"sequence", fmt::format("{}", fmt::join(found.sequence, " "))},
                {"kind", found.kind},
                {"message", found.message.substr(0, 400)}};
    report.rows.push_back(std::move(row));
  }
  for (const llvm_engine::ExcludedProgram& excluded : result.excluded) {
    Row row;
    row.text = {{"figure", "excluded"},
                {"program", excluded.program},
                {"reason", excluded.reason.substr(0, 300)}};
    report.rows.push_back(std::move(row));
  }
  for (const std::string& error : result.errors) {
    report.rows.push_back({{{"figure", "error"}, {"message", error.substr(0, 400)}}, {}});
  }
  report.notes.push_back(
      fmt::format("{} threads; a state already checked (same program, same IR) is not run again; a "
                  "miscompile's culprit is the first action after which its prefix misbehaves",
                  options.threads));
  if (result.sequences < result.planned) {
    report.notes.push_back(
        fmt::format("{} of {} planned sequences were checked (time limit, "
                    "LLVM failures or check errors)",
                    result.sequences, result.planned));
  }
  return report;
}

}  // namespace kiln::bench
