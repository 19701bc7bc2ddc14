#include "programs/make/corpus_extract.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <mutex>
#include <thread>

#include "common/base/json_text.h"
#include "common/security/file_reader.h"
#include "programs/make/llvm_tools.h"

namespace kiln::programs {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kMaxCompileDatabaseBytes = std::uint64_t{1} << 30;
constexpr std::uint64_t kMaxDescriptionBytes = std::uint64_t{256} << 20;

// One planned module's fate.
struct ModuleOutcome {
  bool extracted = false;
  std::uint64_t bytes = 0;
  std::string reason;  // a skip_reason when not extracted
  std::string detail;
  std::vector<std::string> droppedFlags;
  Status fatal;  // a tool that does not exist ends the whole extraction
};

Result<std::string> readWhole(const fs::path& file, std::uint64_t maxBytes) {
  fs::path absolute = fs::absolute(file).lexically_normal();
  return readFileBeneath(absolute.parent_path(), absolute.filename(), maxBytes);
}

// Writes `bytes` beside `target`, then renames it over: a reader never sees half a file.
Status writeAtomically(const fs::path& target, const std::string& bytes) {
  fs::path partial = target;
  partial += ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) return internalError("cannot write " + partial.string());
  }
  std::error_code ec;
  fs::rename(partial, target, ec);
  if (ec) return internalError("cannot rename " + partial.string() + ": " + ec.message());
  return okStatus();
}

ModuleOutcome skipped(std::string_view reason, std::string detail) {
  ModuleOutcome outcome;
  outcome.reason = std::string(reason);
  outcome.detail = std::move(detail);
  return outcome;
}

ModuleOutcome extractOne(const PlannedModule& planned, const ExtractOptions& options,
                         const fs::path& output) {
  ToolLimits limits{options.timeoutPerModule, options.memoryPerModuleBytes};
  fs::path partial = partialBitcodePath(output, planned.module);
  std::error_code ec;
  fs::create_directories(partial.parent_path(), ec);
  if (ec)
    return skipped(skip_reason::kWriteFailed, partial.parent_path().string() + ": " + ec.message());
  struct RemovePartial {
    fs::path path;
    ~RemovePartial() {
      std::error_code ignored;
      fs::remove(path, ignored);
    }
  } cleanup{partial};

  BitcodeCompile compile = planned.compile;
  // A missing directory is this entry's problem; a missing compiler (not-found below) is the run's.
  if (!fs::is_directory(compile.workingDirectory, ec)) {
    return skipped(skip_reason::kUnusableEntry,
                   "its directory " + compile.workingDirectory.string() + " does not exist");
  }
  std::vector<std::string> dropped;
  Status compiled = compileToBitcode(compile, limits, dropped);
  if (!compiled.ok()) {
    if (compiled.code() == ErrorCode::kNotFound) {
      ModuleOutcome outcome;
      outcome.fatal = compiled;
      return outcome;
    }
    if (compiled.code() == ErrorCode::kTimeout) {
      return skipped(skip_reason::kCompileTimeout, compiled.message());
    }
    bool crashed = compiled.message().find("killed by signal") != std::string::npos;
    return skipped(crashed ? skip_reason::kCompilerCrashed : skip_reason::kCompileError,
                   compiled.message());
  }
  std::uintmax_t size = fs::file_size(partial, ec);
  if (ec) return skipped(skip_reason::kNotBitcode, "clang wrote no output: " + ec.message());
  if (size > options.maxModuleBytes) {
    return skipped(skip_reason::kTooBig, std::to_string(size) + " bytes, over the limit of " +
                                             std::to_string(options.maxModuleBytes));
  }
  auto header = readFileBeneath(partial.parent_path(), partial.filename(), size);
  if (!header.ok()) return skipped(skip_reason::kNotBitcode, header.status().message());
  if (!hasBitcodeMagic(*header)) {
    return skipped(skip_reason::kNotBitcode, "the compiler's output has no bitcode magic");
  }
  Status verified = options.readBack ? verifyModule(partial, options.opt, limits) : okStatus();
  if (verified.code() == ErrorCode::kNotFound) {
    ModuleOutcome outcome;
    outcome.fatal = verified;
    return outcome;
  }
  if (!verified.ok()) return skipped(skip_reason::kVerifierRejected, verified.message());

  Status cmd = writeAtomically(cmdPath(output, planned.module), cmdFileText(compile.moduleFlags));
  if (!cmd.ok()) return skipped(skip_reason::kWriteFailed, cmd.message());
  fs::rename(partial, bitcodePath(output, planned.module), ec);
  if (ec) return skipped(skip_reason::kWriteFailed, ec.message());
  ModuleOutcome outcome;
  outcome.extracted = true;
  outcome.bytes = size;
  outcome.droppedFlags = std::move(dropped);
  return outcome;
}

Status checkOptions(const ExtractOptions& options) {
  if (options.compileCommands.empty()) return invalidArgument("no compile_commands.json given");
  if (options.output.empty()) return invalidArgument("no output directory given");
  if (!options.prefix.empty()) {
    Status name = checkModuleName(options.prefix);
    if (!name.ok()) return invalidArgument("--prefix: " + name.message());
  }
  if (options.timeoutPerModule.count() <= 0) {
    return invalidArgument("the timeout per module must be positive");
  }
  if (options.maxModuleBytes == 0) return invalidArgument("the module size limit must be positive");
  return okStatus();
}

// Runs the planned compiles on `jobs` threads; reports each on this thread.
std::vector<ModuleOutcome> runPlan(const ExtractionPlan& plan, const ExtractOptions& options,
                                   const fs::path& output, ExtractProgress& progress,
                                   const std::vector<DatabaseEntry>& entries, Status& fatal) {
  std::size_t count = plan.modules.size();
  std::vector<ModuleOutcome> outcomes(count);
  unsigned jobs =
      options.jobs != 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, count));
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::size_t> finished;
  unsigned running = jobs;
  std::vector<std::jthread> threads;
  for (unsigned t = 0; t < jobs; ++t) {
    threads.emplace_back([&] {
      for (;;) {
        std::size_t i = next.fetch_add(1);
        if (i >= count || stop.load()) break;
        outcomes[i] = extractOne(plan.modules[i], options, output);
        if (!outcomes[i].fatal.ok()) stop.store(true);
        std::lock_guard lock(mutex);
        finished.push_back(i);
        changed.notify_one();
      }
      std::lock_guard lock(mutex);
      --running;
      changed.notify_one();
    });
  }
  for (;;) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return !finished.empty() || running == 0; });
    if (finished.empty()) break;
    std::size_t i = finished.front();
    finished.pop_front();
    lock.unlock();
    const ModuleOutcome& outcome = outcomes[i];
    if (!outcome.fatal.ok()) {
      fatal = outcome.fatal;
      continue;
    }
    ++progress.done;
    ++(outcome.extracted ? progress.extracted : progress.skipped);
    progress.source = entries[plan.modules[i].entry].command.file.string();
    progress.outcome = outcome.extracted ? "extracted" : outcome.reason;
    if (options.onProgress) options.onProgress(progress);
  }
  return outcomes;
}

}  // namespace

Result<ExtractReport> extractCorpus(const ExtractOptions& options) {
  auto started = std::chrono::steady_clock::now();
  KILN_RETURN_IF_ERROR(checkOptions(options));
  auto text = readWhole(options.compileCommands, kMaxCompileDatabaseBytes);
  if (!text.ok()) {
    return Status(text.status().code(),
                  options.compileCommands.string() + ": " + text.status().message());
  }
  KILN_ASSIGN_OR_RETURN(std::vector<DatabaseEntry> entries, parseCompileDatabase(*text));
  if (entries.empty()) {
    return invalidArgument(options.compileCommands.string() + " lists no compile commands");
  }

  fs::path output = fs::absolute(options.output).lexically_normal();
  std::error_code ec;
  fs::create_directories(output, ec);
  if (ec) return invalidArgument("cannot create " + output.string() + ": " + ec.message());
  std::vector<std::string> corpusModules;
  fs::path description = output / kCorpusDescriptionFile;
  if (fs::exists(description, ec)) {
    if (!options.append) {
      return invalidArgument(output.string() +
                             " already holds a corpus (corpus_description.json); add to it with "
                             "--append, or extract into another directory");
    }
    KILN_ASSIGN_OR_RETURN(std::string existing,
                          readFileBeneath(output, kCorpusDescriptionFile, kMaxDescriptionBytes));
    auto modules = parseCorpusDescription(existing);
    if (!modules.ok()) {
      return invalidArgument(description.string() + ": " + modules.status().message());
    }
    corpusModules = std::move(*modules);
  }

  PlanOptions plan;
  plan.output = output;
  plan.prefix = options.prefix;
  plan.compilers = BitcodeCompilers{options.clang, options.clangxx};
  plan.existingModules.insert(corpusModules.begin(), corpusModules.end());
  if (!options.sourceRoot.empty()) {
    plan.sourceRoot = fs::absolute(options.sourceRoot).lexically_normal();
  } else {
    std::vector<fs::path> files;
    for (const DatabaseEntry& entry : entries) {
      if (entry.command.file.is_absolute()) files.push_back(entry.command.file);
    }
    plan.sourceRoot = commonSourceRoot(files);
  }
  ExtractionPlan planned = planExtraction(entries, plan);

  ExtractProgress progress;
  progress.total = entries.size();
  for (const auto& [entry, skip] : planned.skipped) {
    ++progress.done;
    ++progress.skipped;
    progress.source = skip.source;
    progress.outcome = skip.reason;
    if (options.onProgress) options.onProgress(progress);
  }
  Status fatal;
  std::vector<ModuleOutcome> outcomes = runPlan(planned, options, output, progress, entries, fatal);
  if (!fatal.ok()) return fatal;

  // The report and the description list compiles in the build's order.
  ExtractReport report;
  report.output = output;
  report.sourceRoot = plan.sourceRoot;
  std::vector<std::pair<std::size_t, SkippedSource>> skips = planned.skipped;
  for (std::size_t i = 0; i < planned.modules.size(); ++i) {
    const PlannedModule& module = planned.modules[i];
    const ModuleOutcome& outcome = outcomes[i];
    std::string source = entries[module.entry].command.file.string();
    if (outcome.extracted) {
      report.extracted.push_back(
          ExtractedModule{source, module.module, outcome.bytes, outcome.droppedFlags});
      corpusModules.push_back(module.module);
    } else {
      skips.emplace_back(module.entry,
                         SkippedSource{source, module.module, outcome.reason, outcome.detail});
    }
  }
  std::stable_sort(skips.begin(), skips.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [entry, skip] : skips) report.skipped.push_back(std::move(skip));
  KILN_RETURN_IF_ERROR(writeAtomically(description, corpusDescriptionText(corpusModules)));
  report.corpusModules = corpusModules.size();
  report.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  return report;
}

std::vector<std::pair<std::string, std::size_t>> skippedByReason(const ExtractReport& report) {
  std::map<std::string, std::size_t> counts;
  for (const SkippedSource& skip : report.skipped) ++counts[skip.reason];
  std::vector<std::pair<std::string, std::size_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

std::string reportJson(const ExtractReport& report) {
  auto quoted = [](std::string_view text) { return "\"" + jsonEscape(text) + "\""; };
  std::string json = "{\n  \"corpus\": " + quoted(report.output.string()) +
                     ",\n  \"source_root\": " + quoted(report.sourceRoot.string()) +
                     ",\n  \"extracted\": " + std::to_string(report.extracted.size()) +
                     ",\n  \"skipped\": " + std::to_string(report.skipped.size()) +
                     ",\n  \"corpus_modules\": " + std::to_string(report.corpusModules) +
                     ",\n  \"elapsed_ms\": " + std::to_string(report.elapsed.count()) +
                     ",\n  \"skipped_by_reason\": {";
  auto reasons = skippedByReason(report);
  for (std::size_t i = 0; i < reasons.size(); ++i) {
    json += (i == 0 ? "\n    " : ",\n    ") + quoted(reasons[i].first) + ": " +
            std::to_string(reasons[i].second);
  }
  json += reasons.empty() ? "},\n  \"modules\": [" : "\n  },\n  \"modules\": [";
  bool first = true;
  auto open = [&] {
    json += first ? "\n    {" : ",\n    {";
    first = false;
  };
  for (const ExtractedModule& m : report.extracted) {
    open();
    json += "\"source\": " + quoted(m.source) + ", \"module\": " + quoted(m.module) +
            ", \"outcome\": \"extracted\", \"bytes\": " + std::to_string(m.bytes);
    if (!m.droppedFlags.empty()) {
      json += ", \"dropped_flags\": [";
      for (std::size_t i = 0; i < m.droppedFlags.size(); ++i) {
        json += (i == 0 ? "" : ", ") + quoted(m.droppedFlags[i]);
      }
      json += "]";
    }
    json += "}";
  }
  for (const SkippedSource& s : report.skipped) {
    open();
    json += "\"source\": " + quoted(s.source) + ", \"module\": " + quoted(s.module) +
            ", \"outcome\": \"skipped\", \"reason\": " + quoted(s.reason) +
            ", \"detail\": " + quoted(s.detail) + "}";
  }
  json += first ? "]\n}\n" : "\n  ]\n}\n";
  return json;
}

}  // namespace kiln::programs
