#include "compilers/llvm_session/ready_modules.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <iterator>

namespace kiln::llvm_session {

namespace {

// Benchmarks remembered for reading ahead, most recent first: enough for a
// vector env cycling through a dataset's worth of programs per worker,
// small enough that a take's search costs nothing.
constexpr std::size_t kTrackedBenchmarks = 64;

// The reader must never delay a request: on a CPU that a request's thread
// wants, a SCHED_IDLE thread gives way at once. If the kernel refuses (it
// does not for a thread lowering itself), the reader still works, as a
// normal thread.
void lowerToIdlePriority() {
  sched_param param{};
  (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
  (void)pthread_setname_np(pthread_self(), "kiln-read-ahead");
}

}  // namespace

bool fitsOneMore(std::size_t heldEntries, std::uint64_t heldBytes, std::uint64_t bytes,
                 std::size_t maxEntries, std::uint64_t maxBytes) {
  return heldEntries < maxEntries && bytes <= maxBytes && heldBytes <= maxBytes - bytes;
}

std::optional<std::size_t> nextToRead(const std::vector<ReadAheadWant>& wants,
                                      std::size_t perBenchmark, std::size_t heldEntries,
                                      std::uint64_t heldBytes, std::size_t maxEntries,
                                      std::uint64_t maxBytes) {
  for (std::size_t i = 0; i < wants.size(); ++i) {
    const ReadAheadWant& want = wants[i];
    if (want.unreadable || want.ready >= perBenchmark) continue;
    // A module too big for what is left is skipped, not waited for: a
    // smaller one further down may still fit.
    if (!fitsOneMore(heldEntries, heldBytes, want.bitcodeBytes, maxEntries, maxBytes)) continue;
    return i;
  }
  return std::nullopt;
}

ReadyModules::ReadyModules(std::size_t maxEntries, std::uint64_t maxBytes, std::size_t perBenchmark,
                           Duration quiet, Read read)
    : perBenchmark_(perBenchmark),
      quiet_(quiet),
      operatorMaxEntries_(maxEntries),
      operatorMaxBytes_(maxBytes),
      read_(std::move(read)),
      maxEntries_(maxEntries),
      maxBytes_(maxBytes) {}

ReadyModules::~ReadyModules() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (reader_.joinable()) reader_.join();
}

std::unique_ptr<llvm_engine::ModuleState> ReadyModules::take(
    const std::shared_ptr<const CachedModule>& module) {
  std::unique_ptr<llvm_engine::ModuleState> state;
  States dropped;
  {
    std::lock_guard lock(mutex_);
    if (maxEntries_ == 0 || maxBytes_ == 0) {
      ++counters_.misses;
      return nullptr;
    }
    auto found = std::find_if(benchmarks_.begin(), benchmarks_.end(),
                              [&](const Benchmark& b) { return b.module->key() == module->key(); });
    if (found == benchmarks_.end()) {
      benchmarks_.push_front(Benchmark{module, {}, false});
    } else {
      benchmarks_.splice(benchmarks_.begin(), benchmarks_, found);
    }
    Benchmark& front = benchmarks_.front();
    if (front.ready.empty()) {
      ++counters_.misses;
    } else {
      ++counters_.hits;
      state = popReadyLocked(front);
    }
    while (benchmarks_.size() > kTrackedBenchmarks) {
      Benchmark& oldest = benchmarks_.back();
      while (!oldest.ready.empty()) {
        dropped.push_back(popReadyLocked(oldest));
        ++counters_.evictions;
      }
      benchmarks_.pop_back();
    }
    lastTake_ = std::chrono::steady_clock::now();
    if (!reader_.joinable()) reader_ = std::thread([this] { readerLoop(); });
  }
  wake_.notify_one();
  return state;
}

std::optional<std::size_t> ReadyModules::nextLocked() const {
  std::vector<ReadAheadWant> wants;
  wants.reserve(benchmarks_.size());
  for (const Benchmark& b : benchmarks_) {
    wants.push_back({b.ready.size(), b.module->module().bitcode.size(), b.unreadable});
  }
  return nextToRead(wants, perBenchmark_, heldEntries_, heldBytes_, maxEntries_, maxBytes_);
}

void ReadyModules::readerLoop() {
  lowerToIdlePriority();
  std::unique_lock lock(mutex_);
  while (true) {
    std::optional<std::size_t> next;
    wake_.wait(lock, [&] { return stopping_ || (next = nextLocked()).has_value(); });
    // A start is followed at once by its episode's first requests: a read
    // then would compete with them (on one CPU, a pinned large module's
    // start took 2.4 ms instead of 0.3 ms). The reader waits for a quiet
    // moment, `quiet_` after the last take.
    for (auto quietFrom = lastTake_ + quiet_;
         !stopping_ && std::chrono::steady_clock::now() < quietFrom;
         quietFrom = lastTake_ + quiet_) {
      wake_.wait_until(lock, quietFrom, [&] { return stopping_; });
    }
    if (stopping_) return;
    next = nextLocked();
    if (!next) continue;
    std::shared_ptr<const CachedModule> module =
        std::next(benchmarks_.begin(), static_cast<long>(*next))->module;
    reading_ = true;
    lock.unlock();
    Result<std::unique_ptr<llvm_engine::ModuleState>> state = read_(*module);
    lock.lock();
    reading_ = false;
    auto found = std::find_if(benchmarks_.begin(), benchmarks_.end(),
                              [&](const Benchmark& b) { return b.module->key() == module->key(); });
    const std::uint64_t bytes = module->module().bitcode.size();
    const bool fits = fitsOneMore(heldEntries_, heldBytes_, bytes, maxEntries_, maxBytes_);
    if (found != benchmarks_.end() && !state.ok()) found->unreadable = true;
    if (found != benchmarks_.end() && state.ok() && fits && found->ready.size() < perBenchmark_) {
      found->ready.push_back(std::move(*state));
      ++heldEntries_;
      heldBytes_ += bytes;
      ++counters_.inserts;
    } else if (state.ok()) {
      // Dropped (its benchmark was forgotten or a bound lowered while it
      // was read): destroyed outside the lock.
      auto unwanted = std::move(*state);
      lock.unlock();
      unwanted.reset();
      lock.lock();
    }
  }
}

bool ReadyModules::idle() const {
  std::lock_guard lock(mutex_);
  return !reading_ && !nextLocked();
}

std::unique_ptr<llvm_engine::ModuleState> ReadyModules::popReadyLocked(Benchmark& benchmark) {
  std::unique_ptr<llvm_engine::ModuleState> state = std::move(benchmark.ready.back());
  benchmark.ready.pop_back();
  --heldEntries_;
  heldBytes_ -= benchmark.module->module().bitcode.size();
  return state;
}

void ReadyModules::evictLocked(std::size_t maxEntries, std::uint64_t maxBytes, States& out) {
  for (auto it = benchmarks_.rbegin(); it != benchmarks_.rend(); ++it) {
    while (!it->ready.empty() && (heldEntries_ > maxEntries || heldBytes_ > maxBytes)) {
      out.push_back(popReadyLocked(*it));
      ++counters_.evictions;
    }
  }
}

std::size_t ReadyModules::size() const {
  std::lock_guard lock(mutex_);
  return heldEntries_;
}

std::uint64_t ReadyModules::sizeInBytes() const {
  std::lock_guard lock(mutex_);
  return heldBytes_;
}

std::size_t ReadyModules::maxSize() const {
  std::lock_guard lock(mutex_);
  return maxEntries_;
}

std::uint64_t ReadyModules::maxSizeInBytes() const {
  std::lock_guard lock(mutex_);
  return maxBytes_;
}

void ReadyModules::setMaxSize(std::size_t entries) {
  States dropped;
  {
    std::lock_guard lock(mutex_);
    maxEntries_ = entries;
    evictLocked(maxEntries_, maxBytes_, dropped);
  }
  wake_.notify_one();  // a raised bound may leave room to read
}

void ReadyModules::setMaxSizeInBytes(std::uint64_t bytes) {
  States dropped;
  {
    std::lock_guard lock(mutex_);
    maxBytes_ = bytes;
    evictLocked(maxEntries_, maxBytes_, dropped);
  }
  wake_.notify_one();
}

void ReadyModules::evictToCapacity(std::uint64_t targetBytes) {
  States dropped;
  std::lock_guard lock(mutex_);
  evictLocked(maxEntries_, targetBytes, dropped);
}

CacheCounters ReadyModules::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

}  // namespace kiln::llvm_session
