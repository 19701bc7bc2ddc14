// The parameters a client may send (SendSessionParameter), to every session
// type the kiln worker binary serves (registerBuiltinSessionTypes: noop,
// llvm, mlgo-inline, mlgo-regalloc, mlgo-compile): worker-level keys through
// the worker's own dispatch (service.benchmark_cache.* to the benchmark
// cache, anything else offered to each context in turn) and through each
// context directly, and session-level keys to a session of each type. The
// contexts start once per process in a private temporary directory; the
// llvm session runs on a small kiln-bench-v0 benchmark; the mlgo sessions
// are built but never started (starting one runs a compiler).
//
// Input: up to 64 lines, each one operation:
//   w KEY VALUE   the worker's dispatch (SessionHost::handleWorkerParameter)
//   c<i> KEY VALUE   context i directly (i: 0 noop, 1 llvm, 2..4 the mlgo types)
//   p<i> KEY VALUE   the session of type i (a fresh noop session per input)
//   s<action>     a noop step (action 0..9) and its Sum observation
// KEY ends at the first space; VALUE is the rest of the line.
//
// Properties checked: every answer is a value or an error of the closed set
// (not internal); a key the worker documents never answers not-found (that
// reads as "unknown parameter"); a cache bound that was set reads back and
// holds; a timeout that was set reaches the mlgo configuration.
#include <stdlib.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <kiln/clock.h>
#include <kiln/kit/cache_parameters.h>
#include <kiln/kit/session_types.h>
#include <kiln/logging.h>
#include "compilers/llvm_session/llvm_context.h"
#include "compilers/mlgo_session/mlgo_context.h"
#include "tools/local_cluster/builtin_types.h"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_session_parameters: property violated: %s\n", what);
    std::abort();
  }
}

constexpr std::array kTypes = {"noop", "llvm", "mlgo-inline", "mlgo-regalloc", "mlgo-compile"};
constexpr std::array kCachePrefixes = {"service.benchmark_cache.", "service.parsed_module_cache.",
                                       "service.transition_cache."};
constexpr std::array kCacheKeys = {
    "get_counters",          "get_size",          "get_size_in_bytes", "get_max_size_in_bytes",
    "set_max_size_in_bytes", "evict_to_capacity", "get_max_size",      "set_max_size"};

// Never sent: noop.busy_us makes every step spin for up to 10 s, which the
// fuzzer would only rediscover. mlgo.opt, mlgo.llc and the noop fault hooks
// are sent: the contexts here have the default operator settings (no fault
// injection), so each must keep answering permission-denied.
bool excluded(std::string_view key) { return key == "noop.busy_us"; }

bool closedSetError(kiln::ErrorCode code) {
  return code == kiln::ErrorCode::kInvalidArgument || code == kiln::ErrorCode::kNotFound ||
         code == kiln::ErrorCode::kPermissionDenied;
}

struct Fixture {
  Fixture() {
    // Private to this process and removed at exit (the fixture lives until then).
    std::string pattern =
        (std::filesystem::temp_directory_path() / "kiln-fuzz-parameters-XXXXXX").string();
    require(::mkdtemp(pattern.data()) != nullptr, "no private directory");
    directory = pattern;
    static const std::filesystem::path removeAtExit = directory;
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(removeAtExit, ignored);
    });
    resources = std::make_unique<kiln::ContextResources>(kiln::ContextResources{
        directory, processCache, kiln::makeNullLogger("fuzz"), clock, 1u << 20, 0});
    // Runtime measurements' per-CPU locks in this process's directory, not
    // the host-wide one in TMPDIR, which would outlive the run.
    resources->settings.runtimeCpuLocks = (directory / "cpu-locks").string();
    kiln::registerBuiltinSessionTypes(types);
    require(types.start(*resources).ok(), "the session types do not start");
    for (std::size_t i = 0; i < kTypes.size(); ++i) {
      const kiln::ReadySessionType* type = types.find(kTypes[i]);
      require(type != nullptr, "a built-in session type is missing");
      contexts[i] = type->context;
      if (i != 0) sessions[i] = type->create();  // noop: a fresh one per input
    }
    auto benchmark = contexts[1]->resolveBenchmark("benchmark://kiln-bench-v0/adler32");
    require(benchmark.ok() && sessions[1]->init(0, *benchmark).ok(),
            "the llvm session does not start");
    mlgo = static_cast<kiln::mlgo_session::MlgoContext*>(contexts[2]);
    mlgoConfig = mlgo->config();
    // The llvm caches start empty, so their contents are the same for every
    // input; their bounds are put back after each.
    for (const char* prefix : {"service.parsed_module_cache.", "service.transition_cache."}) {
      require(contexts[1]->handleParameter(std::string(prefix) + "evict_to_capacity", "0").ok(),
              "an llvm cache does not empty");
      bounds.push_back({prefix, "set_max_size", read(prefix, "get_max_size")});
      bounds.push_back({prefix, "set_max_size_in_bytes", read(prefix, "get_max_size_in_bytes")});
    }
  }
  std::string read(const std::string& prefix, const std::string& name) {
    auto answer = contexts[1]->handleParameter(prefix + name, "");
    require(answer.ok(), "an llvm cache bound does not read");
    return *answer;
  }
  void restore() {
    for (const auto& [prefix, setter, value] : bounds) {
      require(contexts[1]->handleParameter(prefix + setter, value).ok(),
              "an llvm cache bound cannot be put back");
    }
    mlgo->setConfig(mlgoConfig);
    // A fault hook: refused here, where the operator enabled no fault injection.
    auto skew = contexts[0]->handleParameter("noop.skew_next_starts", "0");
    require(!skew.ok() && skew.status().code() == kiln::ErrorCode::kPermissionDenied,
            "a fault hook answered without --enable-fault-injection");
  }

  std::filesystem::path directory;
  kiln::FakeClock clock;
  kiln::BenchmarkCache processCache{1u << 20};
  std::unique_ptr<kiln::ContextResources> resources;
  kiln::SessionTypeRegistry types;
  std::array<kiln::ServiceContext*, kTypes.size()> contexts{};
  std::array<std::unique_ptr<kiln::CompilationSession>, kTypes.size()> sessions;
  kiln::mlgo_session::MlgoContext* mlgo = nullptr;
  kiln::mlgo_session::MlgoConfig mlgoConfig;
  struct Bound {
    std::string prefix, setter, value;
  };
  std::vector<Bound> bounds;
};

// Keys some handler documents: they must never answer not-found. The
// benchmark cache is bounded in bytes only, so it has no entry-count keys.
bool documented(const std::string& key) {
  for (std::string_view prefix : kCachePrefixes) {
    if (!key.starts_with(prefix)) continue;
    std::string_view name = std::string_view(key).substr(prefix.size());
    if (name == "get_max_size" || name == "set_max_size") {
      return prefix != kiln::kCacheParameterPrefix;
    }
    for (std::string_view known : kCacheKeys) {
      if (name == known) return true;
    }
    return false;
  }
  return key == "llvm.datasets" || key == "llvm.benchmarks" || key == "llvm.benchmark_sizes" ||
         key == "llvm.problems" || key == "mlgo.decision_timeout_ms" ||
         key == "mlgo.compile_timeout_ms" || key == "noop.skew_next_starts";
}

// What a cache's setter promises: the bound reads back, and what it holds fits.
void checkCacheSetter(kiln::CacheControls& cache, const std::string& key, const std::string& value,
                      const std::string& reply) {
  if (key.ends_with(".set_max_size")) {
    require(reply == std::to_string(cache.maxSize()), "an entry bound does not read back");
    require(cache.size() <= cache.maxSize(), "a cache holds more entries than its bound");
  } else if (key.ends_with(".set_max_size_in_bytes")) {
    require(reply == std::to_string(cache.maxSizeInBytes()), "a byte bound does not read back");
    require(cache.sizeInBytes() <= cache.maxSizeInBytes(), "a cache holds more than its bound");
  } else if (key.ends_with(".evict_to_capacity")) {
    require(reply == std::to_string(cache.sizeInBytes()), "evict_to_capacity misreports");
    require(cache.sizeInBytes() <= std::stoull(value), "evict_to_capacity left too much");
  }
}

void checkAnswer(const kiln::Result<std::string>& answer) {
  if (answer.ok()) return;
  require(closedSetError(answer.status().code()),
          "a parameter failed with a code outside invalid-argument/not-found/permission-denied");
}

struct Operation {
  char kind = 0;          // w, c, p or s
  std::size_t which = 0;  // c and p: the type's index; s: the action
  std::string key;
  std::string value;
};

// One line of the input; nullopt for a line that names no operation.
std::optional<Operation> parseLine(std::string_view line) {
  if (line.empty()) return std::nullopt;
  Operation op;
  op.kind = line[0];
  line.remove_prefix(1);
  if (op.kind == 'c' || op.kind == 'p' || op.kind == 's') {
    if (line.empty() || line[0] < '0' || line[0] > '9') return std::nullopt;
    op.which = static_cast<std::size_t>(line[0] - '0');
    line.remove_prefix(1);
    if (op.kind == 's') return op;
    if (op.which >= kTypes.size()) return std::nullopt;
  } else if (op.kind != 'w') {
    return std::nullopt;
  }
  if (!line.empty() && line[0] == ' ') line.remove_prefix(1);
  std::size_t space = line.find(' ');
  op.key = std::string(line.substr(0, space));
  if (space != std::string_view::npos) op.value = std::string(line.substr(space + 1));
  return op;
}

void checkContextAnswer(Fixture& fixture, const Operation& op,
                        const kiln::Result<std::string>& answer) {
  checkAnswer(answer);
  // What names a program or injects a fault is the operator's: never a
  // client's (its own type refuses it; the others do not know the key).
  if (op.key == "mlgo.opt" || op.key == "mlgo.llc" || op.key == "noop.skew_next_starts" ||
      op.key == "noop.crash_on_step" || op.key == "noop.hang_on_step") {
    require(!answer.ok(), "a client set a program or a fault hook");
  }
  if (!answer.ok()) return;
  if (op.which == 1) {
    auto& llvm = static_cast<kiln::llvm_session::LlvmContext&>(*fixture.contexts[1]);
    if (op.key.starts_with("service.parsed_module_cache.")) {
      checkCacheSetter(llvm.moduleCache(), op.key, op.value, *answer);
    } else if (op.key.starts_with("service.transition_cache.")) {
      checkCacheSetter(llvm.transitionCache(), op.key, op.value, *answer);
    }
  }
  if (op.key == "mlgo.decision_timeout_ms" || op.key == "mlgo.compile_timeout_ms") {
    auto config = fixture.mlgo->config();
    auto set =
        op.key == "mlgo.decision_timeout_ms" ? config.decisionTimeout : config.compileTimeout;
    require(*answer == std::to_string(set.count()), "a timeout set is not the one in force");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Fixture* fixture = new Fixture();  // contexts start once per process
  // The worker's benchmark cache, fresh per input with three programs in it.
  kiln::BenchmarkCache cache{4096};
  for (int i = 0; i < 3; ++i) {
    cache.insert("benchmark://fuzz/" + std::to_string(i),
                 std::make_shared<const std::string>(std::size_t{512} << i, 'x'));
  }
  auto noop = fixture->types.find("noop")->create();
  require(noop->init(0, kiln::Benchmark{"benchmark://fuzz/noop", nullptr}).ok(),
          "a noop session does not start");
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (int lines = 0; lines < 64 && !text.empty(); ++lines) {
    std::size_t end = text.find('\n');
    auto op = parseLine(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!op || excluded(op->key)) continue;
    switch (op->kind) {
      case 's': {  // a noop step between parameters, as a client would interleave them
        kiln::ActionOutcome outcome;
        kiln::Value sum;
        require(
            noop->applyAction(kiln::Value(static_cast<std::int64_t>(op->which)), outcome).ok() &&
                noop->computeObservation(0, sum).ok(),
            "a noop step failed");
        break;
      }
      case 'w': {
        const bool toCache = op->key.starts_with(kiln::kCacheParameterPrefix);
        auto answer = toCache ? kiln::handleCacheParameter(cache, op->key, op->value)
                              : fixture->types.handleContextParameter(op->key, op->value);
        checkAnswer(answer);
        require(answer.ok() || answer.status().code() != kiln::ErrorCode::kNotFound ||
                    !documented(op->key),
                "a documented worker parameter answered not-found");
        if (toCache && answer.ok()) checkCacheSetter(cache.controls(), op->key, op->value, *answer);
        break;
      }
      case 'c':
        checkContextAnswer(*fixture, *op,
                           fixture->contexts[op->which]->handleParameter(op->key, op->value));
        break;
      default: {  // 'p'
        kiln::CompilationSession& session = op->which == 0 ? *noop : *fixture->sessions[op->which];
        auto answer = session.handleParameter(op->key, op->value);
        checkAnswer(answer);
        if (op->key == "noop.sum" && op->which == 0)
          require(answer.ok(), "noop.sum does not answer");
      }
    }
  }
  fixture->restore();
  return 0;
}
