// The built-in steps of batch compile jobs and the training-log writer. Every
// compiler a step starts is armed on the job's kill switch, so cancelling a
// job kills it at once.
#include <fmt/format.h>

#include <fstream>

#include "compilers/mlgo_channel/interactive_compiler.h"
#include "compilers/mlgo_channel/tensor_codec.h"
#include "compilers/mlgo_session/native_size.h"
#include "compilers/mlgo_session/pipeline.h"
#include "compilers/mlgo_session/reference_build.h"
#include "compilers/mlgo_session/run_tool.h"

namespace kiln::mlgo_session {

namespace {

// The compiler's deadlines are on the steady clock; the job's on kClock.
TimePoint steadyDeadline(const Resolved& deps) {
  auto left = *deps.deadline - deps.clock->now();
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(left);
}

class LoadStep final : public Step {
 public:
  std::string name() const override { return "load"; }
  std::vector<Dependency> needs() const override {
    return {Dependency::kBenchmark, Dependency::kWorkDirectory};
  }
  Result<std::filesystem::path> run(const std::filesystem::path&, const Resolved& deps,
                                    JobOutputs& outputs) override {
    if (!deps.benchmark || deps.benchmark->empty()) {
      return invalidArgument("the job has no module to compile (empty benchmark)");
    }
    std::filesystem::path path = deps.workDirectory / "input.bc";
    std::ofstream out(path, std::ios::binary);
    out.write(deps.benchmark->data(), static_cast<std::streamsize>(deps.benchmark->size()));
    if (!out) return internalError("cannot write the module to " + path.string());
    outputs.context = "module";
    return path;
  }
};

class CompileStep final : public Step {
 public:
  explicit CompileStep(std::vector<std::string> flags) : flags_(std::move(flags)) {}
  std::string name() const override {
    if (flags_.empty()) return "compile (the module's own -O level)";
    return fmt::format("compile {}", fmt::join(flags_, " "));
  }
  std::vector<Dependency> needs() const override {
    return {Dependency::kBenchmark, Dependency::kOpt,      Dependency::kWorkDirectory,
            Dependency::kClock,     Dependency::kDeadline, Dependency::kLimits,
            Dependency::kKillSwitch};
  }
  Result<std::filesystem::path> run(const std::filesystem::path& input, const Resolved& deps,
                                    JobOutputs& outputs) override {
    const ModuleToolFlags& module = deps.moduleFlags;
    if (flags_.empty() && !module.optLevel) {
      return invalidArgument(
          "a compile step without flags takes the module's -O level from its .cmd, and this "
          "module has none: give flags, e.g. [\"-Oz\"]");
    }
    std::filesystem::path output = deps.workDirectory / (input.stem().string() + "-c.bc");
    ToolRun run;
    run.argv = {deps.opt};
    std::vector<std::string> target = module.optTargetFlags();
    run.argv.insert(run.argv.end(), target.begin(), target.end());
    if (flags_.empty()) {
      run.argv.push_back(*module.optLevel);
    } else {
      run.argv.insert(run.argv.end(), flags_.begin(), flags_.end());
    }
    if (!target.empty() || flags_.empty()) {
      outputs.log +=
          fmt::format("module flags: {}\n", fmt::join(run.argv.begin() + 1, run.argv.end(), " "));
    }
    if (!module.ignored.empty()) {
      outputs.log +=
          fmt::format("module flags ignored (not on the allow-list): {}\n", module.ignored.size());
    }
    run.argv.insert(run.argv.end(), {input.string(), "-o", output.string()});
    run.workingDirectory = deps.workDirectory;
    run.deadline = *deps.deadline;
    run.clock = deps.clock;
    run.memoryLimitBytes = deps.memoryLimitBytes;
    run.killSwitch = deps.killSwitch;
    KILN_RETURN_IF_ERROR(runTool(run));
    return output;
  }

 private:
  std::vector<std::string> flags_;
};

class InlineDefaultStep final : public Step {
 public:
  std::string name() const override { return "inline-default"; }
  // The benchmark for its flags: the module's target, as mlgo-inline gives
  // opt, so that this step builds what mlgo-inline's DefaultNativeSize measures.
  std::vector<Dependency> needs() const override {
    return {Dependency::kBenchmark, Dependency::kOpt,      Dependency::kWorkDirectory,
            Dependency::kClock,     Dependency::kDeadline, Dependency::kLimits,
            Dependency::kKillSwitch};
  }
  Result<std::filesystem::path> run(const std::filesystem::path& input, const Resolved& deps,
                                    JobOutputs& outputs) override {
    mlgo_channel::CompilerOptions options;
    options.kind = mlgo_channel::AdvisorKind::kInliner;
    options.sessionDirectory = deps.workDirectory;
    options.input = input;
    options.compiler = deps.opt;
    options.extraFlags = advisorModuleFlags(mlgo_channel::AdvisorKind::kInliner, deps.moduleFlags);
    options.outputStem = input.stem().string() + "-inl";
    options.channelBaseName = input.stem().string() + "-channel";
    options.memoryLimitBytes = deps.memoryLimitBytes;
    KillSwitch* killSwitch = deps.killSwitch;
    options.onSpawn = [killSwitch](pid_t pid) {
      if (killSwitch != nullptr) killSwitch->arm(pid);
    };
    TimePoint deadline = steadyDeadline(deps);
    KILN_ASSIGN_OR_RETURN(mlgo_channel::InteractiveCompiler compiler,
                          mlgo_channel::InteractiveCompiler::start(options, deadline));
    outputs.header = compiler.header();
    while (true) {
      KILN_ASSIGN_OR_RETURN(std::optional<mlgo_channel::Observation> observation,
                            compiler.next(deadline));
      if (!observation) break;
      KILN_ASSIGN_OR_RETURN(std::int64_t decision, compiler.defaultAdvice(*observation));
      KILN_RETURN_IF_ERROR(compiler.advise(Value(decision), deadline));
      // The training log keeps every feature: decode them all.
      KILN_ASSIGN_OR_RETURN(std::vector<Value> features,
                            mlgo_channel::decodeFeatures(compiler.header(), *observation));
      outputs.records.push_back({std::move(features), decision});
    }
    KILN_ASSIGN_OR_RETURN(mlgo_channel::CompileOutcome outcome, compiler.finish(deadline));
    return outcome.output;
  }
};

class NativeSizeStep final : public Step {
 public:
  std::string name() const override { return "native-size"; }
  std::vector<Dependency> needs() const override { return {}; }
  Result<std::filesystem::path> run(const std::filesystem::path& input, const Resolved&,
                                    JobOutputs& outputs) override {
    KILN_ASSIGN_OR_RETURN(std::int64_t size, nativeTextSize(input));
    outputs.nativeSize = size;
    return input;
  }
};

class TrainingLogStep final : public Step {
 public:
  std::string name() const override { return "training-log"; }
  std::vector<Dependency> needs() const override { return {}; }
  Result<std::filesystem::path> run(const std::filesystem::path& input, const Resolved&,
                                    JobOutputs& outputs) override {
    KILN_ASSIGN_OR_RETURN(outputs.trainingLog, serializeTrainingLog(outputs));
    return input;
  }
};

std::string specJson(const mlgo_channel::FeatureSpec& spec) {
  return fmt::format(R"({{"name":"{}","port":{},"shape":[{}],"type":"{}"}})", spec.name, spec.port,
                     fmt::join(spec.shape, ","), mlgo_channel::elementTypeName(spec.type));
}

}  // namespace

std::unique_ptr<Step> makeLoadStep() { return std::make_unique<LoadStep>(); }
std::unique_ptr<Step> makeCompileStep(std::vector<std::string> flags) {
  return std::make_unique<CompileStep>(std::move(flags));
}
std::unique_ptr<Step> makeInlineDefaultStep() { return std::make_unique<InlineDefaultStep>(); }
std::unique_ptr<Step> makeNativeSizeStep() { return std::make_unique<NativeSizeStep>(); }
std::unique_ptr<Step> makeTrainingLogStep() { return std::make_unique<TrainingLogStep>(); }

Result<std::string> serializeTrainingLog(const JobOutputs& outputs) {
  if (!outputs.header) {
    return invalidArgument(
        "no decisions were recorded: put an inline-default step before training-log");
  }
  const mlgo_channel::ChannelHeader& header = *outputs.header;
  std::vector<std::string> features;
  for (const mlgo_channel::FeatureSpec& spec : header.features) features.push_back(specJson(spec));
  std::string log = fmt::format(R"({{"features":[{}],"advice":{}}})", fmt::join(features, ","),
                                specJson(header.advice));
  log += fmt::format("\n{{\"context\":\"{}\"}}\n", outputs.context);
  for (std::size_t i = 0; i < outputs.records.size(); ++i) {
    const TrainingRecord& record = outputs.records[i];
    if (record.features.size() != header.features.size()) {
      return internalError(fmt::format("record {} has {} features, the header {}", i,
                                       record.features.size(), header.features.size()));
    }
    log += fmt::format("{{\"observation\":{}}}\n", i);
    for (std::size_t f = 0; f < header.features.size(); ++f) {
      KILN_ASSIGN_OR_RETURN(std::string bytes,
                            mlgo_channel::encodeTensor(header.features[f], record.features[f]));
      log += bytes;
    }
    log += fmt::format("\n{{\"outcome\":{}}}\n", i);
    KILN_ASSIGN_OR_RETURN(std::string advice,
                          mlgo_channel::encodeTensor(header.advice, Value(record.decision)));
    log += advice;
    log += '\n';
  }
  return log;
}

}  // namespace kiln::mlgo_session
