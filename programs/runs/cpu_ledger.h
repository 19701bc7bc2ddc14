// Which CPUs time programs and who times on which (policy, no threads, no
// system calls): the plan that sets aside measuring CPUs from those a
// worker may use, and the ledger that hands each Runtime measurement a CPU
// of its own, first come first served, or keeps it waiting in line until
// one is free. programs/runs/measuring_cpus.h is the mechanism around it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace kiln::runs {

// One place a measurement runs: `cpu` runs the program; every CPU of
// `core` (its hyperthread siblings among the allowed ones, `cpu` included)
// is kept free of the worker's compile work while it does, since a sibling
// shares the core's caches and execution units.
struct MeasuringUnit {
  int cpu = -1;
  std::vector<int> core;
  bool operator==(const MeasuringUnit&) const = default;
};

struct MeasuringPlan {
  std::vector<int> allowed;          // the CPUs the process may use, sorted
  std::vector<MeasuringUnit> units;  // in order of preference
  bool operator==(const MeasuringPlan&) const = default;
};

// Sets aside `requested` cores (0 = half of them, at least one) for
// measurements, the last ones (the first CPUs are where a host's own work
// tends to land), each measuring on its first allowed CPU. `cores` groups
// the allowed CPUs by physical core (a CPU with no known siblings alone).
// More than there are: every core. None allowed: no plan (measure unpinned).
MeasuringPlan planMeasuringCpus(const std::vector<std::vector<int>>& cores, unsigned requested);

// The CPUs compile work may use while the units in `held` measure: the
// allowed ones less those units' cores; all allowed CPUs when that would
// leave none (one core: the work cannot be kept off it).
std::vector<int> compileCpus(const MeasuringPlan& plan, const std::vector<std::size_t>& held);

// "0-3,6": CPUs as /proc and taskset list them.
std::string describeCpus(const std::vector<int>& cpus);
// The inverse, for /sys's sibling lists: nullopt for text that is not one.
std::optional<std::vector<int>> parseCpuList(const std::string& text);

// The line of measurements: each takes a ticket, waits until it is at the
// head and a unit is free, holds the unit, and gives it back. A unit the
// caller cannot take (another process on this host times on that CPU: the
// host-wide lock) is skipped for the next free one, and the head waits when
// none can be taken. One unit per measurement; the same unit for a lone
// measurement every time (the first free one in plan order), so that runs
// alone are compared on one CPU.
class CpuLedger {
 public:
  using Ticket = std::uint64_t;

  explicit CpuLedger(std::size_t units) : holders_(units) {}

  // Joins the line.
  Ticket enqueue();
  // Leaves the line without a unit (the wait was abandoned).
  void withdraw(Ticket ticket);
  // The free units `ticket` may try, in order of preference: none unless it
  // is at the head of the line.
  std::vector<std::size_t> candidates(Ticket ticket) const;
  // `ticket`, at the head, takes free unit `unit` and leaves the line.
  // False (nothing changes) when it is not at the head or the unit is held.
  bool take(Ticket ticket, std::size_t unit);
  // Gives the unit back; false when `ticket` does not hold it.
  bool release(Ticket ticket, std::size_t unit);

  std::vector<std::size_t> held() const;
  std::size_t waiting() const { return line_.size(); }
  std::size_t units() const { return holders_.size(); }

 private:
  std::vector<std::optional<Ticket>> holders_;
  std::deque<Ticket> line_;
  Ticket next_ = 1;
};

}  // namespace kiln::runs
