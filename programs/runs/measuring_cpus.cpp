#include "programs/runs/measuring_cpus.h"

#include <fmt/format.h>

namespace kiln::runs {
namespace {

using Clock = std::chrono::steady_clock;

// No CPUs known (the affinity mask could not be read): one unpinned unit,
// so that measurements still take turns.
MeasuringPlan planFor(CpuHost& host, unsigned cpus) {
  MeasuringPlan plan = planMeasuringCpus(host.allowedCores(), cpus);
  if (plan.units.empty()) plan.units.push_back({-1, {}});
  return plan;
}

}  // namespace

MeasuringCpus::MeasuringCpus(std::unique_ptr<CpuHost> host, MeasuringCpusOptions options)
    : host_(std::move(host)),
      options_(std::move(options)),
      plan_(planFor(*host_, options_.cpus)),
      ledger_(plan_.units.size()) {}

MeasuringCpus::Lease& MeasuringCpus::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = std::exchange(other.owner_, nullptr);
    ticket_ = other.ticket_;
    unit_ = other.unit_;
    cpu_ = other.cpu_;
    waited_ = other.waited_;
  }
  return *this;
}

void MeasuringCpus::Lease::release() {
  if (owner_ != nullptr) std::exchange(owner_, nullptr)->giveBack(ticket_, unit_);
}

void MeasuringCpus::notify(LeaseEvent::Kind kind, CpuLedger::Ticket ticket, int cpu) {
  if (!options_.observer) return;
  options_.observer({kind, ticket, cpu, ledger_.held().size(), ledger_.waiting()});
}

void MeasuringCpus::keepCompileWorkOff() {
  host_->keepCompileWorkOn(compileCpus(plan_, ledger_.held()));
}

Result<MeasuringCpus::Lease> MeasuringCpus::acquire() {
  const auto began = Clock::now();
  const auto deadline = began + options_.maxWait;
  std::unique_lock lock(mutex_);
  const CpuLedger::Ticket ticket = ledger_.enqueue();
  notify(LeaseEvent::Kind::kQueued, ticket, -1);
  auto leave = [&](Status why) -> Result<Lease> {
    ledger_.withdraw(ticket);
    notify(LeaseEvent::Kind::kAbandoned, ticket, -1);
    freed_.notify_all();  // the next in line is now the head
    return why;
  };
  while (true) {
    const std::vector<std::size_t> free = ledger_.candidates(ticket);
    for (std::size_t unit : free) {
      const int cpu = plan_.units[unit].cpu;
      Result<bool> locked = host_->tryLockHostWide(cpu);
      if (!locked.ok()) return leave(locked.status());
      if (!*locked) continue;  // another process times on it
      ledger_.take(ticket, unit);
      keepCompileWorkOff();
      notify(LeaseEvent::Kind::kGranted, ticket, cpu);
      freed_.notify_all();  // the next in line may take another free unit
      Lease lease;
      lease.owner_ = this;
      lease.ticket_ = ticket;
      lease.unit_ = unit;
      lease.cpu_ = cpu;
      lease.waited_ = Clock::now() - began;
      return lease;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      return leave(overloaded(fmt::format(
          "no measuring CPU came free in {} s ({} measurements in line, {} CPUs measuring: {}); "
          "ask for fewer runs, or have the operator give the worker more --runtime-cpus",
          std::chrono::duration_cast<std::chrono::seconds>(options_.maxWait).count(),
          ledger_.waiting(), plan_.units.size(), describe())));
    }
    // Free here but locked by another process: look again soon. Otherwise
    // a release in this process wakes us.
    freed_.wait_until(lock, free.empty() ? deadline : std::min(deadline, now + options_.hostPoll));
  }
}

void MeasuringCpus::giveBack(CpuLedger::Ticket ticket, std::size_t unit) {
  std::lock_guard lock(mutex_);
  const int cpu = plan_.units[unit].cpu;
  if (!ledger_.release(ticket, unit)) return;
  // Told before the host-wide lock goes, as a grant is told after it is
  // taken: an observer of several processes' events sees them in order.
  notify(LeaseEvent::Kind::kReleased, ticket, cpu);
  host_->unlockHostWide(cpu);
  keepCompileWorkOff();
  freed_.notify_all();
}

std::string MeasuringCpus::describe() const {
  std::vector<int> measuring;
  for (const MeasuringUnit& unit : plan_.units) {
    if (unit.cpu >= 0) measuring.push_back(unit.cpu);
  }
  if (measuring.empty()) return "unpinned, one measurement at a time (the CPU mask is unknown)";
  std::vector<std::size_t> all(plan_.units.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::vector<int> compile = compileCpus(plan_, all);
  return fmt::format(
      "CPU {} of {} ({})", describeCpus(measuring), describeCpus(plan_.allowed),
      compile == plan_.allowed
          ? "compile work shares them: no CPU is left for it"
          : fmt::format("compile work kept on {} while they all measure", describeCpus(compile)));
}

}  // namespace kiln::runs
