#include "worker/limit_options.h"

#include "worker/config_check.h"

namespace kiln {

namespace {

void addSecondsOption(CLI::App& app, const std::string& flag, Duration& target, double low,
                      double high, const std::string& help) {
  app.add_option_function<double>(
         flag, [&target](double s) { target = std::chrono::milliseconds(long(s * 1000)); }, help)
      ->check(CLI::Range(low, high));
}

}  // namespace

void addCountOption(CLI::App& app, const std::string& flag, std::uint32_t& target,
                    std::uint32_t low, std::uint32_t high, const std::string& help) {
  app.add_option(flag, target, help)->capture_default_str()->check(CLI::Range(low, high));
}

void addHostLimitOptions(CLI::App& app, WorkerConfig& c) {
  HostLimits& limits = c.limits;
  addCountOption(app, "--max-sessions-per-client", limits.maxSessionsPerClient, 1, 10'000'000,
                 "live sessions one client may hold on this worker (on kiln nest: on each "
                 "experiment's underlying worker)");
  addCountOption(app, "--max-sessions", limits.maxSessions, 1, 10'000'000,
                 "live sessions accepted");
  addCountOption(app, "--max-compilers-per-client", limits.maxCompilersPerClient, 0, 100'000,
                 "compiler processes one client's sessions may hold on this worker: each "
                 "session of mlgo-inline, mlgo-regalloc and mlgo-compile runs an opt or llc "
                 "(some 65 MiB each)");
  addCountOption(app, "--max-compilers", limits.maxCompilers, 0, 100'000,
                 "compiler processes all clients' sessions may hold on this worker together");
  app.add_option("--cache-bytes", c.cacheBytes,
                 "benchmark cache bound in bytes; clients may lower it, never raise it above this")
      ->capture_default_str()
      ->check(CLI::Range(kMinCacheBytes, kMaxCacheBytes));
  app.add_option("--max-benchmark-bytes", limits.maxBenchmarkBytes, "largest benchmark accepted")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, kMaxBenchmarkBytes));
  app.add_option("--max-benchmark-bytes-per-client", limits.maxBenchmarkBytesPerClient,
                 "benchmark bytes one client's sessions may hold on this worker, each program "
                 "once however many sessions share it")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 42));
  app.add_option("--max-module-data-bytes", limits.maxModuleDataBytes,
                 "data a client's module may make the code generator write (initialized globals, "
                 "alignment, assembler fills); a module over it is refused where it enters")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, kMaxModuleDataBytes));
  app.add_option("--max-message-bytes", c.frames.maxMessageBytes, "largest message accepted")
      ->capture_default_str()
      ->check(CLI::Range(kMinMessageBytes, kMaxMessageBytes));
  addSecondsOption(app, "--lease-seconds", limits.leaseTimeout, 0.1, 86400.0,
                   "end a silent client's sessions after this long (default 30)");
  addSecondsOption(app, "--deadline-seconds", limits.defaultDeadline, 0.01, kMaxDeadlineSeconds,
                   "deadline of a request that sets none (default 300)");
  addSecondsOption(app, "--max-deadline-seconds", limits.maxDeadline, 0.01, kMaxDeadlineSeconds,
                   "the longest deadline a request may ask for: a longer one is shortened to "
                   "this, and its timeout says so (default: --deadline-seconds)");
}

}  // namespace kiln
