// Parameters arrive on the worker's network thread while sessions run on the
// task pool, so the configuration is copied under a lock and never shared.
#include "mlgosession/mlgo_context.h"

#include <fmt/format.h>

#include <charconv>
#include <functional>

namespace kiln::mlgosession {

namespace {

constexpr std::int64_t kMaxTimeoutMs = 3'600'000;

Result<std::chrono::milliseconds> parseTimeout(const std::string& key, const std::string& value) {
  std::int64_t ms = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), ms);
  if (error != std::errc() || end != value.data() + value.size() || ms < 1 || ms > kMaxTimeoutMs) {
    return invalidArgument(
        fmt::format("{} must be a whole number of milliseconds in [1, {}], got '{}'", key,
                    kMaxTimeoutMs, value));
  }
  return std::chrono::milliseconds(ms);
}

Status checkProgram(const std::string& key, const std::string& value) {
  if (value.empty() || value.size() > 4096 || value.find('\0') != std::string::npos) {
    return invalidArgument(key + " must name a program (a non-empty path or PATH name)");
  }
  return okStatus();
}

}  // namespace

Result<std::string> applyConfigParameter(MlgoConfig& config, const std::string& key,
                                         const std::string& value) {
  if (key == "mlgo.opt" || key == "mlgo.llc") {
    KILN_RETURN_IF_ERROR(checkProgram(key, value));
    (key == "mlgo.opt" ? config.opt : config.llc) = value;
    return value;
  }
  if (key == "mlgo.decision_timeout_ms" || key == "mlgo.compile_timeout_ms") {
    KILN_ASSIGN_OR_RETURN(std::chrono::milliseconds timeout, parseTimeout(key, value));
    (key == "mlgo.decision_timeout_ms" ? config.decisionTimeout : config.compileTimeout) = timeout;
    return std::to_string(timeout.count());
  }
  return notFound("unknown worker parameter '" + key +
                  "' (mlgo knows mlgo.opt, mlgo.llc, mlgo.decision_timeout_ms, "
                  "mlgo.compile_timeout_ms)");
}

Status MlgoContext::init() {
  datasets::DatasetConfig datasetConfig;
  datasetConfig.scratchDirectory = workingDirectory();
  datasetConfig.fileAccess = fileAccess();
  KILN_ASSIGN_OR_RETURN(datasets::DatasetRegistry registry,
                        datasets::DatasetRegistry::create(std::move(datasetConfig)));
  datasets_.emplace(std::move(registry));
  std::lock_guard lock(mutex_);
  // The worker's --compile-memory-mb bounds every compiler child of these types.
  if (compileMemoryBytes() == 0) {
    config_.memoryLimitBytes.reset();
  } else {
    config_.memoryLimitBytes = compileMemoryBytes();
  }
  return okStatus();
}

Result<Benchmark> MlgoContext::resolveBenchmark(const std::string& uri) {
  if (datasets_ && (uri.starts_with("benchmark://") || uri.starts_with("generator://"))) {
    KILN_ASSIGN_OR_RETURN(datasets::BenchmarkBytes bytes, datasets_->resolve(uri));
    return Benchmark{uri, std::make_shared<const std::string>(std::move(bytes.bytes))};
  }
  return ServiceContext::resolveBenchmark(uri);
}

Result<std::string> MlgoContext::handleParameter(const std::string& key, const std::string& value) {
  if (!key.starts_with("mlgo.")) return ServiceContext::handleParameter(key, value);
  std::lock_guard lock(mutex_);
  MlgoConfig updated = config_;
  KILN_ASSIGN_OR_RETURN(std::string reply, applyConfigParameter(updated, key, value));
  config_ = std::move(updated);
  // Another compiler may size the same benchmark differently.
  if (key == "mlgo.opt" || key == "mlgo.llc") defaultSizes_.clear();
  return reply;
}

MlgoConfig MlgoContext::config() const {
  std::lock_guard lock(mutex_);
  return config_;
}

void MlgoContext::setConfig(MlgoConfig config) {
  std::lock_guard lock(mutex_);
  config_ = std::move(config);
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

}  // namespace kiln::mlgosession
