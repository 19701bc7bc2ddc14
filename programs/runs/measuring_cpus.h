// A CPU of its own for every Runtime measurement of a worker process
// (mechanism around programs/runs/cpu_ledger.h's policy): a measurement leases a
// measuring CPU, or waits in line when every one is taken, and gives it back
// when its runs are done. One per llvm context, shared by all its sessions.
//
// Several worker processes on one host: each measuring CPU also has a
// host-wide lock (programs/runs/cpu_host.h), taken with the lease, so that
// processes whose CPU sets overlap (kiln local's workers, a nest's isolated
// children, workers started side by side) take turns instead of timing on
// one CPU at once; a worker the operator gave CPUs of its own (a cpuset,
// taskset, Slurm's binding) can do without them (--runtime-cpu-locks off).
// In this process, FIFO; across processes, whoever looks first when a CPU
// frees (a waiting head looks again every `hostPoll`).
//
// While a lease is held, the process's compile work (every thread still on
// the mask it was given, and what those threads start) runs on the other
// CPUs, unless there are none. What cannot be kept off cheaply: other
// processes' work (another worker's compiles, isolated nest children, the
// host's own), and the sandbox's keeper and init processes, which sleep
// while the program runs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <kiln/status.h>
#include "programs/runs/cpu_host.h"
#include "programs/runs/cpu_ledger.h"

namespace kiln::runs {

struct LeaseEvent {
  enum class Kind { kQueued, kGranted, kReleased, kAbandoned };
  Kind kind = Kind::kQueued;
  CpuLedger::Ticket ticket = 0;
  int cpu = -1;             // granted and released: the CPU
  std::size_t holders = 0;  // leases held just after the event
  std::size_t waiting = 0;  // measurements in line just after the event
};

struct MeasuringCpusOptions {
  unsigned cpus = 0;  // --runtime-cpus: measuring cores, 0 = half of them
  // The longest a measurement waits in line before it gives up (overloaded).
  std::chrono::milliseconds maxWait{600'000};
  // How often the head of the line looks again at CPUs locked by another
  // process (a release in this process wakes it at once).
  std::chrono::milliseconds hostPoll{2};
  // Called under the lock, in the order things happened (tests, logs).
  std::function<void(const LeaseEvent&)> observer;
};

class MeasuringCpus {
 public:
  MeasuringCpus(std::unique_ptr<CpuHost> host, MeasuringCpusOptions options);

  // A measuring CPU held until destroyed (or released).
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept { *this = std::move(other); }
    Lease& operator=(Lease&& other) noexcept;
    ~Lease() { release(); }
    void release();
    int cpu() const { return cpu_; }  // -1: unpinned (the process's CPUs are unknown)
    std::chrono::nanoseconds waited() const { return waited_; }

   private:
    friend class MeasuringCpus;
    MeasuringCpus* owner_ = nullptr;
    CpuLedger::Ticket ticket_ = 0;
    std::size_t unit_ = 0;
    int cpu_ = -1;
    std::chrono::nanoseconds waited_{0};
  };

  // Waits for a measuring CPU (FIFO). overloaded after maxWait; the host's
  // refusal (a lock file that cannot be opened) as it came.
  Result<Lease> acquire();

  const MeasuringPlan& plan() const { return plan_; }
  // "CPU 1 of 0-1 (compile work kept on 0 meanwhile)" for logs and docs.
  std::string describe() const;

 private:
  void giveBack(CpuLedger::Ticket ticket, std::size_t unit);
  void notify(LeaseEvent::Kind kind, CpuLedger::Ticket ticket, int cpu);
  void keepCompileWorkOff();

  std::unique_ptr<CpuHost> host_;
  MeasuringCpusOptions options_;
  MeasuringPlan plan_;
  std::mutex mutex_;
  std::condition_variable freed_;
  CpuLedger ledger_;
};

}  // namespace kiln::runs
