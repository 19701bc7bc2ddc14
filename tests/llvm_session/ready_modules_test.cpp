// Modules read ahead (compilers/llvm_session/ready_modules.h): the reader's policy as a
// pure function; the reader on real kiln-bench-v0 modules (hits after it
// settles, bounds, a failed read never retried, stopping while it reads);
// and sessions started from a module read ahead stepping exactly like
// sessions whose start read it.
#include "compilers/llvm_session/ready_modules.h"

#include <atomic>
#include <thread>

#include "tests/llvm_session/episodes.h"

namespace kiln::llvm_session {
namespace {

using namespace testing;

// nextToRead ------------------------------------------------------------

TEST(NextToReadTest, MostRecentBenchmarkWithRoomFirst) {
  const std::vector<ReadAheadWant> wants{{2, 10, false}, {1, 10, false}, {0, 10, false}};
  EXPECT_EQ(nextToRead(wants, 2, 3, 30, 16, 1000), 1u);  // the first is full
}

TEST(NextToReadTest, NothingWhenEveryBenchmarkIsFullOrUnreadable) {
  const std::vector<ReadAheadWant> wants{{2, 10, false}, {0, 10, true}};
  EXPECT_EQ(nextToRead(wants, 2, 2, 20, 16, 1000), std::nullopt);
  EXPECT_EQ(nextToRead({}, 2, 0, 0, 16, 1000), std::nullopt);
}

TEST(NextToReadTest, BoundsAreNeverExceeded) {
  const std::vector<ReadAheadWant> wants{{0, 600, false}, {0, 100, false}};
  // The entry bound is reached: nothing.
  EXPECT_EQ(nextToRead(wants, 2, 4, 0, 4, 1000), std::nullopt);
  // 600 more bytes would exceed 1000 with 500 held: the smaller one fits.
  EXPECT_EQ(nextToRead(wants, 2, 1, 500, 16, 1000), 1u);
  // Neither fits.
  EXPECT_EQ(nextToRead(wants, 2, 1, 950, 16, 1000), std::nullopt);
  // A module larger than the whole bound is never read (and no overflow).
  EXPECT_EQ(nextToRead({{0, ~std::uint64_t{0}, false}}, 2, 0, 0, 16, 1000), std::nullopt);
  // A bound of 0 disables reading.
  EXPECT_EQ(nextToRead(wants, 2, 0, 0, 0, 1000), std::nullopt);
}

TEST(NextToReadTest, OneMoreFitsOnlyWithinBothBounds) {
  EXPECT_TRUE(fitsOneMore(0, 0, 1000, 1, 1000));
  EXPECT_FALSE(fitsOneMore(1, 0, 10, 1, 1000));                  // the entry bound
  EXPECT_FALSE(fitsOneMore(0, 991, 10, 16, 1000));               // the byte bound
  EXPECT_FALSE(fitsOneMore(0, 0, ~std::uint64_t{0}, 16, 1000));  // no overflow
}

// ReadyModules on real modules -----------------------------------------

std::shared_ptr<const CachedModule> cachedModule(const std::string& program) {
  const std::string bytes = readFile(benchPath(program));
  auto state = llvm_engine::ModuleState::fromBitcode(llvm_engine::PassTable::fromRegistry().value(),
                                                     bytes, benchUri(program));
  EXPECT_TRUE(state.ok()) << state.status().toString();
  return std::make_shared<const CachedModule>(moduleCacheKey(benchUri(program), bytes),
                                              (*state)->serialize().value(), 0);
}

// A reader over real states that counts its reads.
struct CountingReader {
  std::shared_ptr<const llvm_engine::PassTable> passes =
      llvm_engine::PassTable::fromRegistry().value();
  std::atomic<int> reads{0};
  ReadyModules::Read read() {
    return [this](const CachedModule& module) -> Result<std::unique_ptr<llvm_engine::ModuleState>> {
      ++reads;
      KILN_ASSIGN_OR_RETURN(auto state,
                            llvm_engine::ModuleState::materialize(passes, module.module()));
      KILN_RETURN_IF_ERROR(state->readModule());
      return state;
    };
  }
};

bool settles(const ReadyModules& ready) {
  for (int i = 0; i < 2000; ++i) {  // at most 10 s
    if (ready.idle()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

TEST(ReadyModulesTest, AStartedBenchmarkIsReadAheadForTheNextStarts) {
  CountingReader reader;
  ReadyModules ready(16, 4u << 20, 2, 1ms, reader.read());
  const auto crc32 = cachedModule("crc32");
  EXPECT_EQ(ready.take(crc32), nullptr);  // nothing asked for it before
  ASSERT_TRUE(settles(ready));
  EXPECT_EQ(ready.size(), 2u);
  EXPECT_EQ(ready.sizeInBytes(), 2 * crc32->module().bitcode.size());
  auto state = ready.take(crc32);
  ASSERT_NE(state, nullptr);
  // Already read: exactly the module a fresh read gives.
  auto fresh = llvm_engine::ModuleState::materialize(reader.passes, crc32->module()).value();
  EXPECT_EQ(state->irSha1().value(), fresh->irSha1().value());
  ASSERT_TRUE(settles(ready));
  EXPECT_EQ(ready.size(), 2u);  // read again for the next start
  const CacheCounters counters = ready.counters();
  EXPECT_EQ(counters.hits, 1u);
  EXPECT_EQ(counters.misses, 1u);
  EXPECT_EQ(counters.inserts, 3u);
  EXPECT_EQ(reader.reads.load(), 3);
}

TEST(ReadyModulesTest, TheReaderWaitsForAQuietMomentAfterAStart) {
  CountingReader reader;
  ReadyModules ready(16, 4u << 20, 2, 500ms, reader.read());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(ready.take(cachedModule("crc32")), nullptr);
  std::this_thread::sleep_for(100ms);
  // Earlier than `quiet` after the take: nothing read (a slow machine only
  // makes the reader later).
  if (std::chrono::steady_clock::now() - start < 450ms) {
    EXPECT_EQ(reader.reads.load(), 0);
  }
  EXPECT_FALSE(ready.idle());  // it has work, for later
  ASSERT_TRUE(settles(ready));
  EXPECT_EQ(reader.reads.load(), 2);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 500ms);
}

TEST(ReadyModulesTest, BoundsHoldAndLoweringThemDropsStates) {
  CountingReader reader;
  const auto crc32 = cachedModule("crc32");
  const auto quicksort = cachedModule("quicksort");
  ReadyModules ready(3, 4u << 20, 2, 1ms, reader.read());
  (void)ready.take(crc32);
  (void)ready.take(quicksort);  // now the most recent
  ASSERT_TRUE(settles(ready));
  EXPECT_EQ(ready.size(), 3u);  // 2 of quicksort, 1 of crc32: the entry bound
  ready.setMaxSize(1);
  EXPECT_EQ(ready.size(), 1u);
  EXPECT_NE(ready.take(quicksort), nullptr);  // the oldest benchmark's went first
  ready.setMaxSize(0);
  EXPECT_EQ(ready.size(), 0u);
  EXPECT_EQ(ready.take(crc32), nullptr);  // disabled: no reads at all
  ASSERT_TRUE(settles(ready));
  EXPECT_EQ(ready.size(), 0u);
  ready.setMaxSizeInBytes(crc32->module().bitcode.size());  // room for one crc32 read
  ready.setMaxSize(3);
  ASSERT_TRUE(settles(ready));
  EXPECT_LE(ready.sizeInBytes(), crc32->module().bitcode.size());
  ready.evictToCapacity(0);
  EXPECT_EQ(ready.sizeInBytes(), 0u);
}

TEST(ReadyModulesTest, AFailedReadIsNeverRetried) {
  std::atomic<int> reads{0};
  ReadyModules ready(16, 4u << 20, 2, 1ms,
                     [&](const CachedModule&) -> Result<std::unique_ptr<llvm_engine::ModuleState>> {
                       ++reads;
                       return compileError("its bitcode does not read back");
                     });
  const auto crc32 = cachedModule("crc32");
  EXPECT_EQ(ready.take(crc32), nullptr);
  ASSERT_TRUE(settles(ready));
  EXPECT_EQ(ready.take(crc32), nullptr);
  ASSERT_TRUE(settles(ready));
  EXPECT_EQ(reads.load(), 1);
  EXPECT_EQ(ready.size(), 0u);
}

TEST(ReadyModulesTest, StopsWhileAReadIsInFlight) {
  std::atomic<bool> reading{false};
  {
    ReadyModules ready(
        16, 4u << 20, 2, 1ms,
        [&](const CachedModule&) -> Result<std::unique_ptr<llvm_engine::ModuleState>> {
          reading = true;
          std::this_thread::sleep_for(50ms);
          return compileError("slow");
        });
    (void)ready.take(cachedModule("crc32"));
    for (int i = 0; i < 1000 && !reading; ++i) std::this_thread::sleep_for(1ms);
    EXPECT_TRUE(reading.load());
  }  // the destructor waits for the read and returns
  SUCCEED();
}

// Sessions ---------------------------------------------------------------

TEST(ReadyModulesSessionTest, StartsFromModulesReadAheadStepLikeStartsThatRead) {
  Process off("read-off");
  off.context().readyModules().setMaxSize(0);
  off.context().transitionCache().setMaxSize(0);
  Process on("read-on");
  on.context().transitionCache().setMaxSize(0);  // every step runs its passes
  const std::size_t passes = on.context().passes()->size();
  for (const std::string program : {"crc32", "quicksort", "json_tokenizer"}) {
    (void)runEpisode(on, program, {}, false);  // asks the reader for this program
    for (unsigned seed = 1; seed <= 2; ++seed) {
      const auto actions = randomSequence(passes, seed * 17 + program.size(), 12);
      const auto expected = runEpisode(off, program, actions, true);
      ASSERT_TRUE(settles(on.context().readyModules()));
      const CacheCounters before = on.context().readyModules().counters();
      const auto readAhead = runEpisode(on, program, actions, true);
      EXPECT_EQ(on.context().readyModules().counters().hits, before.hits + 1) << program;
      EXPECT_EQ(readAhead, expected) << program << " seed " << seed;
    }
  }
  EXPECT_EQ(off.context().readyModules().counters().hits, 0u);
}

}  // namespace
}  // namespace kiln::llvm_session
