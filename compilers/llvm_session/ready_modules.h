// Modules read ahead of the sessions that will start from them. Reading a
// cached benchmark's bitcode into a fresh LLVMContext is most of what a
// session's start costs (crc32: ~250 us of a ~300 us start; a 6,000
// instruction csmith program: ~3 ms). A worker between requests, and a
// worker on a host with an idle core, has time to spare: one reader thread
// at the lowest scheduling class (SCHED_IDLE: it runs only on a CPU that
// nothing else wants), once the worker has had no start for a moment, reads
// the most recently started benchmarks again, so that the next start from
// them takes a module already read.
//
// A state read ahead is exactly what a start would have read (the same
// bytes, a fresh context, no verification: the bytes were verified when the
// benchmark was first cached), so nothing a session does depends on whether
// its module came from here. Bounded like the other caches and controlled by
// the same worker parameters (`service.ready_modules.*`,
// include/kiln/kit/cache_parameters.h): entries are states read ahead, bytes the
// bitcode they were read from (a read module takes ~50x its bitcode in
// memory: crc32's 10 KB take ~0.5 MB).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <kiln/clock.h>
#include <kiln/kit/bounded_cache.h>
#include <kiln/status.h>
#include "compilers/llvm_engine/module_state.h"
#include "compilers/llvm_session/module_cache.h"

namespace kiln::llvm_session {

// What the reader weighs for one benchmark started recently.
struct ReadAheadWant {
  std::size_t ready = 0;           // states of it read ahead now
  std::uint64_t bitcodeBytes = 0;  // what one more would add to the byte count
  bool unreadable = false;         // a read of it failed: never tried again
};

// Policy: whether one more state of `bytes` of bitcode stays within both
// bounds with what is held already.
bool fitsOneMore(std::size_t heldEntries, std::uint64_t heldBytes, std::uint64_t bytes,
                 std::size_t maxEntries, std::uint64_t maxBytes);

// Policy: which benchmark to read next, as a position in `wants` (most
// recently started first), or nullopt when none needs a read or none fits.
// Recent starts come first; each benchmark gets up to `perBenchmark` states;
// a read must fit both bounds with what is held already.
std::optional<std::size_t> nextToRead(const std::vector<ReadAheadWant>& wants,
                                      std::size_t perBenchmark, std::size_t heldEntries,
                                      std::uint64_t heldBytes, std::size_t maxEntries,
                                      std::uint64_t maxBytes);

// The cache parameters' prefix; `service.ready_modules.get_idle` adds idle()
// ("true"/"false").
inline constexpr std::string_view kReadyModulesPrefix = "service.ready_modules.";

class ReadyModules : public CacheControls {
 public:
  // Reads one state of a cached module in full (materialize + read).
  using Read =
      std::function<Result<std::unique_ptr<llvm_engine::ModuleState>>(const CachedModule&)>;

  // `quiet`: how long after the last take the reader waits before it reads
  // (see readerLoop()).
  ReadyModules(std::size_t maxEntries, std::uint64_t maxBytes, std::size_t perBenchmark,
               Duration quiet, Read read);
  ~ReadyModules() override;  // stops the reader (a read in flight finishes first)
  ReadyModules(const ReadyModules&) = delete;
  ReadyModules& operator=(const ReadyModules&) = delete;

  // A state of `module` read ahead (a hit), or nullptr (a miss); either way
  // `module` becomes the most recently started benchmark and the reader is
  // asked to read it again for the next start. The reader thread starts on
  // the first call, so a process that never starts a session has none.
  std::unique_ptr<llvm_engine::ModuleState> take(const std::shared_ptr<const CachedModule>& module);
  // True while the reader has nothing to read: every recently started
  // benchmark has its states ready, or the bounds are reached.
  bool idle() const;

  // CacheControls: hits/misses are takes, inserts states read, evictions
  // states dropped for a bound.
  bool boundsEntries() const override { return true; }
  std::size_t size() const override;
  std::uint64_t sizeInBytes() const override;
  std::size_t maxSize() const override;
  std::uint64_t maxSizeInBytes() const override;
  std::size_t operatorMaxSize() const override { return operatorMaxEntries_; }
  std::uint64_t operatorMaxSizeInBytes() const override { return operatorMaxBytes_; }
  void setMaxSize(std::size_t entries) override;
  void setMaxSizeInBytes(std::uint64_t bytes) override;
  void evictToCapacity(std::uint64_t targetBytes) override;
  CacheCounters counters() const override;

 private:
  struct Benchmark {
    std::shared_ptr<const CachedModule> module;
    std::vector<std::unique_ptr<llvm_engine::ModuleState>> ready;
    bool unreadable = false;
  };
  using States = std::vector<std::unique_ptr<llvm_engine::ModuleState>>;

  void readerLoop();
  // The position in benchmarks_ to read next (see nextToRead).
  std::optional<std::size_t> nextLocked() const;
  // Takes one of `benchmark`'s ready states out of the held counts.
  std::unique_ptr<llvm_engine::ModuleState> popReadyLocked(Benchmark& benchmark);
  // Drops states, oldest benchmarks first, until within the bounds; the
  // dropped states go to `out`, destroyed by the caller outside the lock.
  void evictLocked(std::size_t maxEntries, std::uint64_t maxBytes, States& out);

  const std::size_t perBenchmark_;
  const Duration quiet_;
  const std::size_t operatorMaxEntries_;
  const std::uint64_t operatorMaxBytes_;
  const Read read_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;     // the reader: work or stop
  std::list<Benchmark> benchmarks_;  // most recently started first
  std::size_t maxEntries_;
  std::uint64_t maxBytes_;
  std::size_t heldEntries_ = 0;
  std::uint64_t heldBytes_ = 0;
  TimePoint lastTake_{};
  bool reading_ = false;
  bool stopping_ = false;
  CacheCounters counters_;
  std::thread reader_;  // last: started after everything it reads is built
};

}  // namespace kiln::llvm_session
