// The measuring CPUs' mechanism (programs/runs/measuring_cpus.h) over a fake host:
// a measurement waits in line while the CPU is taken, skips a CPU another
// process holds, moves compile work off the CPUs that measure and back, and
// gives up with overloaded when the line does not move. Every wait is ended
// by the test's own action (events, not sleeps).
#include "programs/runs/measuring_cpus.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

namespace kiln::runs {
namespace {

using Kind = LeaseEvent::Kind;
using Cores = std::vector<std::vector<int>>;

class FakeCpuHost final : public CpuHost {
 public:
  struct Shared {
    std::mutex mutex;
    std::vector<std::vector<int>> cores;
    std::set<int> lockedElsewhere;
    std::vector<std::vector<int>> compileMasks;  // each keepCompileWorkOn
    std::optional<Status> refusal;
  };
  explicit FakeCpuHost(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
  std::vector<std::vector<int>> allowedCores() override {
    std::lock_guard lock(shared_->mutex);
    return shared_->cores;
  }
  Result<bool> tryLockHostWide(int cpu) override {
    std::lock_guard lock(shared_->mutex);
    if (shared_->refusal) return *shared_->refusal;
    return !shared_->lockedElsewhere.contains(cpu);
  }
  void unlockHostWide(int) override {}
  void keepCompileWorkOn(const std::vector<int>& cpus) override {
    std::lock_guard lock(shared_->mutex);
    shared_->compileMasks.push_back(cpus);
  }

 private:
  std::shared_ptr<Shared> shared_;
};

// Events as they happened, and a way to wait for one.
class EventLog {
 public:
  void record(const LeaseEvent& event) {
    std::lock_guard lock(mutex_);
    events_.push_back(event);
    changed_.notify_all();
  }
  void waitFor(Kind kind, std::size_t count) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return countLocked(kind) >= count; });
  }
  std::vector<LeaseEvent> events() {
    std::lock_guard lock(mutex_);
    return events_;
  }

 private:
  std::size_t countLocked(Kind kind) const {
    std::size_t n = 0;
    for (const LeaseEvent& e : events_) n += e.kind == kind ? 1 : 0;
    return n;
  }
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<LeaseEvent> events_;
};

struct Fixture {
  std::shared_ptr<FakeCpuHost::Shared> shared = std::make_shared<FakeCpuHost::Shared>();
  EventLog log;
  std::unique_ptr<MeasuringCpus> cpus;

  explicit Fixture(std::vector<std::vector<int>> cores, unsigned measuring = 0,
                   std::chrono::milliseconds maxWait = std::chrono::milliseconds(600'000)) {
    shared->cores = std::move(cores);
    MeasuringCpusOptions options;
    options.cpus = measuring;
    options.maxWait = maxWait;
    options.hostPoll = std::chrono::milliseconds(1);
    options.observer = [this](const LeaseEvent& event) { log.record(event); };
    cpus = std::make_unique<MeasuringCpus>(std::make_unique<FakeCpuHost>(shared), options);
  }
};

std::vector<Kind> kinds(const std::vector<LeaseEvent>& events) {
  std::vector<Kind> out;
  for (const LeaseEvent& e : events) out.push_back(e.kind);
  return out;
}

TEST(MeasuringCpusTest, ASecondMeasurementWaitsForTheFirstsCpu) {
  Fixture f(Cores{{0}, {1}});  // one measuring CPU: 1
  auto first = f.cpus->acquire();
  ASSERT_TRUE(first.ok()) << first.status().toString();
  EXPECT_EQ(first->cpu(), 1);
  int secondCpu = -2;
  std::thread second([&] {
    auto lease = f.cpus->acquire();
    ASSERT_TRUE(lease.ok()) << lease.status().toString();
    secondCpu = lease->cpu();
  });
  f.log.waitFor(Kind::kQueued, 2);  // the second is in line
  first->release();
  second.join();
  EXPECT_EQ(secondCpu, 1);
  EXPECT_EQ(kinds(f.log.events()),
            (std::vector<Kind>{Kind::kQueued, Kind::kGranted, Kind::kQueued, Kind::kReleased,
                               Kind::kGranted, Kind::kReleased}));
}

TEST(MeasuringCpusTest, TwoMeasuringCpusServeTwoAtOnceAndMoveCompileWork) {
  Fixture f(Cores{{0}, {1}, {2}, {3}});  // measuring: 3, then 2
  auto a = f.cpus->acquire();
  auto b = f.cpus->acquire();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->cpu(), 3);
  EXPECT_EQ(b->cpu(), 2);
  a->release();
  b->release();
  std::lock_guard lock(f.shared->mutex);
  EXPECT_EQ(f.shared->compileMasks,
            (std::vector<std::vector<int>>{{0, 1, 2}, {0, 1}, {0, 1, 3}, {0, 1, 2, 3}}));
}

TEST(MeasuringCpusTest, ACpuAnotherProcessHoldsIsSkippedOrWaitedFor) {
  Fixture f(Cores{{0}, {1}, {2}, {3}});
  {
    std::lock_guard lock(f.shared->mutex);
    f.shared->lockedElsewhere = {3};
  }
  auto lease = f.cpus->acquire();
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(lease->cpu(), 2);
  lease->release();
  {
    std::lock_guard lock(f.shared->mutex);
    f.shared->lockedElsewhere = {2, 3};
  }
  int got = -2;
  std::thread waiter([&] {
    auto waited = f.cpus->acquire();
    ASSERT_TRUE(waited.ok());
    got = waited->cpu();
  });
  f.log.waitFor(Kind::kQueued, 2);
  {
    std::lock_guard lock(f.shared->mutex);
    f.shared->lockedElsewhere = {2};  // the other process is done with 3
  }
  waiter.join();
  EXPECT_EQ(got, 3);
}

TEST(MeasuringCpusTest, AWaitThatLastsTooLongIsOverloadedAndLeavesTheLine) {
  Fixture f(Cores{{0}, {1}}, 0, std::chrono::milliseconds(0));
  auto held = f.cpus->acquire();
  ASSERT_TRUE(held.ok());
  auto refused = f.cpus->acquire();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kOverloaded);
  EXPECT_NE(refused.status().message().find("no measuring CPU came free"), std::string::npos);
  held->release();
  auto next = f.cpus->acquire();  // the line is empty again
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->cpu(), 1);
}

TEST(MeasuringCpusTest, TheHostsRefusalReachesTheMeasurement) {
  Fixture f(Cores{{0}, {1}});
  {
    std::lock_guard lock(f.shared->mutex);
    f.shared->refusal = invalidArgument("the lock cannot be opened");
  }
  auto refused = f.cpus->acquire();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "the lock cannot be opened");
  EXPECT_EQ(kinds(f.log.events()), (std::vector<Kind>{Kind::kQueued, Kind::kAbandoned}));
}

TEST(MeasuringCpusTest, UnknownCpusStillTakeTurnsUnpinned) {
  Fixture f(Cores{});
  auto lease = f.cpus->acquire();
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(lease->cpu(), -1);
  EXPECT_NE(f.cpus->describe().find("unpinned"), std::string::npos);
}

TEST(MeasuringCpusTest, DescribeNamesWhereCompileWorkGoes) {
  Fixture f(Cores{{0}, {1}});
  EXPECT_EQ(f.cpus->describe(), "CPU 1 of 0-1 (compile work kept on 0 while they all measure)");
}

}  // namespace
}  // namespace kiln::runs
