// Parameters arrive on the worker's network thread while sessions run on the
// task pool, so the configuration is copied under a lock and never shared.
// It starts as the operator's (ServiceContext::settings()), which also bounds
// what a client's parameter may set.
#include "compilers/mlgo_session/mlgo_context.h"

#include <fmt/format.h>

#include <charconv>
#include <functional>

#include "common/security/file_confinement.h"
#include "compilers/llvm_engine/module_check.h"
#include "compilers/llvm_engine/pass_table.h"

namespace kiln::mlgo_session {

namespace {

Result<std::chrono::milliseconds> parseTimeout(const std::string& key, const std::string& value,
                                               std::chrono::milliseconds ceiling,
                                               std::string_view setBy) {
  std::int64_t ms = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), ms);
  if (error != std::errc() || end != value.data() + value.size() || ms < 1 ||
      ms > kMaxCompilerTimeoutMs) {
    return invalidArgument(
        fmt::format("{} must be a whole number of milliseconds in [1, {}], got '{}'", key,
                    kMaxCompilerTimeoutMs, value));
  }
  if (ms > ceiling.count()) {
    return aboveCeiling(key, static_cast<std::uint64_t>(ms),
                        static_cast<std::uint64_t>(ceiling.count()), "ms", setBy);
  }
  return std::chrono::milliseconds(ms);
}

}  // namespace

MlgoConfig operatorConfig(const OperatorSettings& settings, std::uint64_t compileMemoryBytes) {
  MlgoConfig config;
  config.opt = settings.mlgoOpt;
  config.llc = settings.mlgoLlc;
  config.decisionTimeout = settings.mlgoDecisionTimeout;
  config.compileTimeout = settings.mlgoCompileTimeout;
  // The worker's --compile-memory-mb bounds every compiler child of these types.
  config.memoryLimitBytes =
      compileMemoryBytes == 0 ? std::nullopt : std::optional<std::uint64_t>(compileMemoryBytes);
  return config;
}

Result<std::string> applyConfigParameter(MlgoConfig& config, const MlgoConfig& ceiling,
                                         const std::string& key, const std::string& value) {
  // A client that could name the program would run code of its choice on the host.
  if (key == "mlgo.opt") return operatorOnly(key, "--mlgo-opt PATH");
  if (key == "mlgo.llc") return operatorOnly(key, "--mlgo-llc PATH");
  if (key == "mlgo.decision_timeout_ms") {
    KILN_ASSIGN_OR_RETURN(config.decisionTimeout,
                          parseTimeout(key, value, ceiling.decisionTimeout,
                                       "the operator's --mlgo-decision-timeout-ms"));
    return std::to_string(config.decisionTimeout.count());
  }
  if (key == "mlgo.compile_timeout_ms") {
    KILN_ASSIGN_OR_RETURN(config.compileTimeout,
                          parseTimeout(key, value, ceiling.compileTimeout,
                                       "the operator's --mlgo-compile-timeout-ms"));
    return std::to_string(config.compileTimeout.count());
  }
  return notFound("unknown worker parameter '" + key +
                  "' (mlgo knows mlgo.decision_timeout_ms, mlgo.compile_timeout_ms)");
}

MlgoContext::MlgoContext(ContextResources& resources,
                         std::shared_ptr<datasets::SharedDatasetRegistry> datasets)
    : ServiceContext(resources),
      config_(operatorConfig(settings(), compileMemoryBytes())),
      ceiling_(config_),
      sharedDatasets_(datasets != nullptr ? std::move(datasets)
                                          : std::make_shared<datasets::SharedDatasetRegistry>()) {}

Status MlgoContext::init() {
  KILN_ASSIGN_OR_RETURN(auto table, llvm_engine::PassTable::fromRegistry());
  jobPasses_ = JobPasses::fromTable(*table);
  if (int abi = FileConfinement::kernelAbi(); abi > 0) {
    logger().info(
        "opt and llc run on clients' modules under Landlock (ABI {}): they read only "
        "system directories and write only their session's directory",
        abi);
  } else {
    logger().warn(
        "this kernel has no Landlock: opt and llc run on clients' modules without file "
        "confinement (kiln's module checks still apply; docs/security.md)");
  }
  KILN_ASSIGN_OR_RETURN(datasets_, sharedDatasets_->get([this] {
    std::vector<datasets::CorpusDirectory> corpora;
    for (const OperatorDataset& dataset : settings().datasets) {
      corpora.push_back({dataset.name, dataset.root});
    }
    return datasets::workerDatasetConfig(workingDirectory(), fileAccess(), maxBenchmarkBytes(),
                                         std::move(corpora));
  }));
  return okStatus();
}

Result<Benchmark> MlgoContext::resolveBenchmark(const std::string& uri) {
  if (datasets_ && (uri.starts_with("benchmark://") || uri.starts_with("generator://"))) {
    auto bytes = datasets_->resolve(uri);
    if (!bytes.ok()) {
      if (bytes.status().code() == ErrorCode::kInvalidArgument) {
        datasets_->recordRejection(uri, bytes.status().message());
      }
      return bytes.status();
    }
    return Benchmark{uri, std::make_shared<const std::string>(std::move(bytes->bytes))};
  }
  return ServiceContext::resolveBenchmark(uri);
}

Status MlgoContext::checkModule(const Benchmark& benchmark) {
  if (benchmark.program == nullptr || benchmark.program->empty()) {
    return invalidArgument("benchmark '" + benchmark.uri + "' has no program");
  }
  const std::string key = defaultSizeKey("module", benchmark);
  {
    std::lock_guard lock(mutex_);
    if (acceptedModules_.count(key) != 0) return okStatus();
  }
  Status checked =
      llvm_engine::checkModule(*benchmark.program, benchmark.uri, maxModuleDataBytes());
  if (!checked.ok()) {
    Status refused =
        invalidArgument("benchmark '" + benchmark.uri + "' cannot be used: " + checked.message());
    if (datasets_) {
      datasets_->recordRejectedBytes(benchmark.uri, *benchmark.program, refused.message());
    }
    return refused;
  }
  constexpr std::size_t kAcceptedKept = 4096;
  std::lock_guard lock(mutex_);
  if (acceptedModules_.size() >= kAcceptedKept) acceptedModules_.clear();
  acceptedModules_.insert(key);
  return okStatus();
}

Result<ModuleToolFlags> MlgoContext::moduleFlags(const Benchmark& benchmark) {
  if (!datasets_ || benchmark.program == nullptr) return ModuleToolFlags{};
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> command,
                        datasets_->moduleFlags(benchmark.uri, *benchmark.program));
  ModuleToolFlags flags = mapModuleFlags(command);
  if (!flags.ignored.empty()) {
    // The operator may want to know; the arguments themselves stay on the host.
    logger().debug("{}: {} of its {} compile arguments are not on the allow-list and are ignored",
                   benchmark.uri, flags.ignored.size(), command.size());
  }
  return flags;
}

Result<std::string> MlgoContext::handleParameter(const std::string& key, const std::string& value) {
  if (!key.starts_with("mlgo.")) return ServiceContext::handleParameter(key, value);
  std::lock_guard lock(mutex_);
  MlgoConfig updated = config_;
  KILN_ASSIGN_OR_RETURN(std::string reply, applyConfigParameter(updated, ceiling_, key, value));
  config_ = std::move(updated);
  return reply;
}

MlgoConfig MlgoContext::config() const {
  std::lock_guard lock(mutex_);
  return config_;
}

void MlgoContext::setConfig(MlgoConfig config) {
  std::lock_guard lock(mutex_);
  config_ = std::move(config);
  ceiling_ = config_;
  // Another compiler may size the same benchmark differently.
  defaultSizes_.clear();
}

std::optional<std::int64_t> MlgoContext::cachedDefaultSize(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = defaultSizes_.find(key);
  if (it == defaultSizes_.end()) return std::nullopt;
  return it->second;
}

void MlgoContext::storeDefaultSize(const std::string& key, std::int64_t size) {
  std::lock_guard lock(mutex_);
  defaultSizes_[key] = size;
}

std::string defaultSizeKey(const std::string& kind, const Benchmark& benchmark) {
  std::size_t hash = benchmark.program ? std::hash<std::string>{}(*benchmark.program) : 0;
  return fmt::format("{}|{}|{:x}", kind, benchmark.uri, hash);
}

}  // namespace kiln::mlgo_session
