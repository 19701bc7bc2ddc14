#include "compilers/llvm_session/llvm_context.h"

#include <fmt/format.h>

#include <charconv>

#include "common/security/file_confinement.h"
#include "compilers/llvm_engine/module_check.h"
#include "llvm/Support/xxhash.h"
#include "programs/datasets/generators.h"

namespace kiln::llvm_session {

bool looksLikeBitcode(std::string_view bytes) {
  auto startsWith = [&](std::initializer_list<unsigned char> magic) {
    if (bytes.size() < magic.size()) return false;
    std::size_t i = 0;
    for (unsigned char byte : magic) {
      if (static_cast<unsigned char>(bytes[i++]) != byte) return false;
    }
    return true;
  };
  return startsWith({'B', 'C', 0xC0, 0xDE}) || startsWith({0xDE, 0xC0, 0x17, 0x0B});
}

std::string moduleCacheKey(const std::string& uri, std::string_view bytes) {
  const std::uint64_t hash = llvm::xxh3_64bits(llvm::ArrayRef<std::uint8_t>(
      reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
  return fmt::format("{}#{:016x}:{}", uri, hash, bytes.size());
}

LlvmContext::LlvmContext(ContextResources& resources,
                         std::shared_ptr<datasets::SharedDatasetRegistry> datasets)
    : ServiceContext(resources),
      sharedDatasets_(datasets != nullptr ? std::move(datasets)
                                          : std::make_shared<datasets::SharedDatasetRegistry>()) {}

Status LlvmContext::init() {
  KILN_ASSIGN_OR_RETURN(
      passes_, llvm_engine::PassTable::fromRegistry(
                   settings().faultInjection ? llvm_engine::PassTable::Crashers::kKept
                                             : llvm_engine::PassTable::Crashers::kLeftOut));
  KILN_ASSIGN_OR_RETURN(registry_, sharedDatasets_->get([this] {
    std::vector<datasets::CorpusDirectory> corpora;
    for (const OperatorDataset& dataset : settings().datasets) {
      corpora.push_back({dataset.name, dataset.root});
    }
    return datasets::workerDatasetConfig(workingDirectory(), fileAccess(), maxBenchmarkBytes(),
                                         std::move(corpora));
  }));
  programs_ = std::make_unique<ProgramRuns>(settings(), workingDirectory());
  // Said once at start: whether benchmark programs can read the host's files.
  if (const int abi = sandbox::landlockAbi(); abi > 0) {
    logger().info(
        "benchmark programs may open only system libraries and their scratch directory "
        "(Landlock ABI {})",
        abi);
  } else {
    logger().warn(
        "this kernel has no Landlock: benchmark programs (Runtime, Validation) can read every "
        "host file the sandbox's user may, and their output reaches clients; run workers on a "
        "Linux 5.13+ kernel with Landlock enabled (lsm=...,landlock)");
  }
  // The same kernel feature confines code generation of clients' modules
  // (compilers/llvm_engine/codegen.h) and the Runtime linker (common/security/file_confinement.h).
  if (FileConfinement::kernelAbi() > 0) {
    logger().info(
        "code generation of clients' modules opens no file; the Runtime linker writes "
        "only its build directory");
  } else {
    logger().warn(
        "this kernel has no Landlock: code generation of clients' modules and the "
        "Runtime linker run without file confinement (kiln's module checks still "
        "apply; docs/security.md)");
  }
  logger().info("llvm context: {} passes and {} pipelines (table {}), {} datasets",
                passes_->singlePassCount(), passes_->size() - passes_->singlePassCount(),
                passes_->fingerprint().substr(0, 12), registry_->list().size());
  return okStatus();
}

Result<runs::RunSpec> LlvmContext::runSpecFor(const Benchmark& benchmark) const {
  const std::string& uri = benchmark.uri;
  if (uri.starts_with("benchmark://kiln-bench-v0/")) return runs::kilnBenchRunSpec();
  if (uri.starts_with(fmt::format("generator://{}/", datasets::kCsmithDataset))) {
    return runs::csmithRunSpec();
  }
  if (registry_ != nullptr && benchmark.program != nullptr) {
    KILN_ASSIGN_OR_RETURN(std::optional<datasets::DatasetRegistry::ModuleRunSpec> own,
                          registry_->moduleRunSpec(uri, *benchmark.program));
    if (own) {
      return runs::parseRunSpec(
          own->text, fmt::format("the run spec of {} (its .run.json)", uri),
          [&own](const std::string& name) { return own->readBeside(name, runs::kMaxStdinBytes); });
    }
  }
  return runs::RunSpec{{runs::ProgramInput{}}, {"m"}};
}

Result<Benchmark> LlvmContext::resolveBenchmark(const std::string& uri) {
  if (!registry_) return internalError("the llvm context was not initialized");
  if (uri.empty()) return invalidArgument("the llvm session type needs a benchmark URI");
  auto resolved = registry_->resolve(uri);
  if (!resolved.ok()) {
    // A corpus file that is not a module at all (no bitcode magic, NUL bytes
    // in IR text) is the corpus's problem, listed like a module LLVM refuses.
    if (resolved.status().code() == ErrorCode::kInvalidArgument) {
      registry_->recordRejection(uri, resolved.status().message());
    }
    return resolved.status();
  }
  return Benchmark{uri, std::make_shared<const std::string>(std::move(resolved->bytes))};
}

namespace {

std::string listDatasets(const datasets::DatasetRegistry& registry) {
  std::string out;
  for (const datasets::DatasetInfo& info : registry.list()) {
    // Descriptions are single-line by construction; tabs would break the
    // three-column format, so they become spaces.
    std::string description = info.description;
    for (char& c : description) {
      if (c == '\t' || c == '\n') c = ' ';
    }
    out += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\n", info.name,
                       info.size ? std::to_string(*info.size) : "inf", description, info.bytes,
                       info.skipped, info.rejected);
  }
  return out;
}

Result<std::string> listBenchmarks(const datasets::DatasetRegistry& registry,
                                   const std::string& key, const std::string& value) {
  std::string dataset = value;
  std::size_t limit = std::numeric_limits<std::size_t>::max();
  // "name:limit"; the name itself holds "://", so only a trailing ":digits"
  // is a limit.
  if (auto colon = value.rfind(':');
      colon != std::string::npos && colon + 1 < value.size() &&
      value.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    auto [end, error] =
        std::from_chars(value.data() + colon + 1, value.data() + value.size(), limit);
    if (error != std::errc()) {
      return invalidArgument(fmt::format("{}: bad limit in '{}'", key, value));
    }
    dataset = value.substr(0, colon);
  }
  if (dataset.empty()) {
    return invalidArgument(fmt::format(
        "{} wants a dataset name (see llvm.datasets), e.g. 'benchmark://kiln-bench-v0:10'", key));
  }
  auto listed = registry.benchmarks(dataset, limit);
  if (!listed.ok()) {
    // not-found would read as "unknown parameter" to the worker, which offers
    // a key to the next context on not-found: the key is known, the value is bad.
    return invalidArgument(fmt::format("{} '{}': {}", key, value, listed.status().message()));
  }
  const bool sizes = key == "llvm.benchmark_sizes";
  std::string out;
  for (const datasets::BenchmarkListing& benchmark : *listed) {
    out += sizes ? fmt::format("{}\t{}\n", benchmark.uri, benchmark.bytes) : benchmark.uri + "\n";
  }
  return out;
}

Result<std::string> listProblems(const datasets::DatasetRegistry& registry,
                                 const std::string& dataset) {
  auto problems = registry.problems(dataset);
  if (!problems.ok()) {
    return invalidArgument(
        fmt::format("llvm.problems '{}': {}", dataset, problems.status().message()));
  }
  std::string out;
  for (const datasets::BenchmarkProblem& problem : *problems) {
    std::string reason = problem.reason;
    for (char& c : reason) {
      if (c == '\t' || c == '\n') c = ' ';
    }
    out += fmt::format("{}\t{}\t{}\n", problem.module, problem.kind, reason);
  }
  return out;
}

}  // namespace

bool LlvmContext::changesSharedState(const std::string& key) const {
  return isCacheSetter(kModuleCachePrefix, key) || isCacheSetter(kTransitionCachePrefix, key) ||
         isCacheSetter(kReadyModulesPrefix, key) || isCacheSetter(kProgramCachePrefix, key) ||
         isCacheSetter(kProgramGraphCachePrefix, key);
}

Result<std::string> LlvmContext::handleParameter(const std::string& key, const std::string& value) {
  if (key.rfind(kModuleCachePrefix, 0) == 0) {
    return handleModuleCacheParameter(moduleCache_, key, value);
  }
  if (key.rfind(kTransitionCachePrefix, 0) == 0) {
    return handleCacheParameter(transitionCache_, kTransitionCachePrefix, key, value);
  }
  if (key.rfind(kProgramGraphCachePrefix, 0) == 0) {
    return handleCacheParameter(programGraphCache_, kProgramGraphCachePrefix, key, value);
  }
  if (key.rfind(kProgramCachePrefix, 0) == 0) {
    if (!programs_) return internalError("the llvm context was not initialized");
    return handleCacheParameter(programs_->executableCache(), kProgramCachePrefix, key, value);
  }
  if (key.rfind(kReadyModulesPrefix, 0) == 0) {
    if (key.substr(kReadyModulesPrefix.size()) == "get_idle") {
      return std::string(readyModules_.idle() ? "true" : "false");
    }
    return handleCacheParameter(readyModules_, kReadyModulesPrefix, key, value);
  }
  if (key == "llvm.runtime_cpus") {
    // Where Runtime measurements run: the measuring CPUs are made on first
    // use, so asking makes them (and reports the lock directory's refusal).
    if (!programs_) return internalError("the llvm context was not initialized");
    KILN_ASSIGN_OR_RETURN(runs::MeasuringCpus * cpus, programs_->measuringCpus());
    return cpus->describe();
  }
  if (key != "llvm.datasets" && key != "llvm.benchmarks" && key != "llvm.benchmark_sizes" &&
      key != "llvm.problems") {
    return notFound(fmt::format("unknown worker parameter '{}'", key));
  }
  if (!registry_) return internalError("the llvm context was not initialized");
  if (key == "llvm.datasets") return listDatasets(*registry_);
  if (key == "llvm.problems") return listProblems(*registry_, value);
  return listBenchmarks(*registry_, key, value);
}

Result<std::shared_ptr<const CachedModule>> LlvmContext::module(const Benchmark& benchmark) {
  if (passes_ == nullptr) return internalError("the llvm context was not initialized");
  if (benchmark.program == nullptr || benchmark.program->empty()) {
    return invalidArgument(fmt::format(
        "benchmark '{}' has no program bytes (empty file or unknown URI scheme)", benchmark.uri));
  }
  const std::string& bytes = *benchmark.program;
  if (bytes.size() > maxBenchmarkBytes()) {
    return invalidArgument(fmt::format("benchmark '{}' is {} bytes, over the limit of {} bytes",
                                       benchmark.uri, bytes.size(), maxBenchmarkBytes()));
  }
  const std::string key = moduleCacheKey(benchmark.uri, bytes);
  if (auto cached = moduleCache_.get(key)) return cached;

  const bool bitcode = looksLikeBitcode(bytes);
  auto state = bitcode ? llvm_engine::ModuleState::fromBitcode(passes_, bytes, benchmark.uri,
                                                               maxModuleDataBytes())
                       : llvm_engine::ModuleState::fromIrText(passes_, bytes, benchmark.uri,
                                                              maxModuleDataBytes());
  if (!state.ok()) {
    Status why =
        bitcode ? llvm_engine::explainForeignBitcode(state.status(), bytes) : state.status();
    Status refused(why.code(), fmt::format("benchmark '{}' ({}) cannot be used: {}", benchmark.uri,
                                           bitcode ? "bitcode" : "not bitcode, read as IR text",
                                           why.message()));
    if (registry_) registry_->recordRejectedBytes(benchmark.uri, bytes, refused.message());
    return refused;
  }
  KILN_ASSIGN_OR_RETURN(llvm_engine::SerializedModule serialized, (*state)->serialize());
  KILN_ASSIGN_OR_RETURN(std::int64_t count, (*state)->instructionCount());
  auto entry = std::make_shared<const CachedModule>(key, std::move(serialized), count);
  moduleCache_.insert(entry);
  return std::shared_ptr<const CachedModule>(std::move(entry));
}

Result<std::unique_ptr<llvm_engine::ModuleState>> LlvmContext::readCached(
    const CachedModule& module) const {
  KILN_ASSIGN_OR_RETURN(auto state,
                        llvm_engine::ModuleState::materialize(passes_, module.module()));
  KILN_RETURN_IF_ERROR(state->readModule());
  return state;
}

Result<std::unique_ptr<llvm_engine::ModuleState>> LlvmContext::materialize(
    const std::shared_ptr<const CachedModule>& module) {
  if (auto ready = readyModules_.take(module)) return ready;
  return readCached(*module);
}

Result<llvm_engine::Baselines> LlvmContext::baselines(const CachedModule& module) const {
  return module.baselines(
      [this](const llvm_engine::SerializedModule& serialized) -> Result<llvm_engine::Baselines> {
        KILN_ASSIGN_OR_RETURN(auto state,
                              llvm_engine::ModuleState::materialize(passes_, serialized));
        return llvm_engine::computeBaselines(*state);
      });
}

}  // namespace kiln::llvm_session
