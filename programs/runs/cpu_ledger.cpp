#include "programs/runs/cpu_ledger.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace kiln::runs {

MeasuringPlan planMeasuringCpus(const std::vector<std::vector<int>>& cores, unsigned requested) {
  MeasuringPlan plan;
  std::vector<std::vector<int>> kept;
  for (std::vector<int> core : cores) {
    if (core.empty()) continue;
    std::sort(core.begin(), core.end());
    plan.allowed.insert(plan.allowed.end(), core.begin(), core.end());
    kept.push_back(std::move(core));
  }
  if (kept.empty()) return plan;
  std::sort(plan.allowed.begin(), plan.allowed.end());
  std::sort(kept.begin(), kept.end());  // by first CPU
  const std::size_t wanted = requested == 0 ? std::max<std::size_t>(kept.size() / 2, 1)
                                            : std::min<std::size_t>(requested, kept.size());
  for (std::size_t i = 0; i < wanted; ++i) {
    const std::vector<int>& core = kept[kept.size() - 1 - i];
    plan.units.push_back({core.front(), core});
  }
  return plan;
}

std::vector<int> compileCpus(const MeasuringPlan& plan, const std::vector<std::size_t>& held) {
  std::vector<int> left;
  for (int cpu : plan.allowed) {
    const bool measuring = std::any_of(held.begin(), held.end(), [&](std::size_t unit) {
      const std::vector<int>& core = plan.units.at(unit).core;
      return std::find(core.begin(), core.end(), cpu) != core.end();
    });
    if (!measuring) left.push_back(cpu);
  }
  return left.empty() ? plan.allowed : left;
}

std::string describeCpus(const std::vector<int>& cpus) {
  std::string text;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t last = i;
    while (last + 1 < cpus.size() && cpus[last + 1] == cpus[last] + 1) ++last;
    text += fmt::format("{}{}", text.empty() ? "" : ",", cpus[i]);
    if (last > i) text += fmt::format("-{}", cpus[last]);
    i = last + 1;
  }
  return text;
}

std::optional<std::vector<int>> parseCpuList(const std::string& text) {
  std::string trimmed = text;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ')) trimmed.pop_back();
  if (trimmed.empty()) return std::nullopt;
  std::vector<int> cpus;
  std::size_t start = 0;
  while (start <= trimmed.size()) {
    const std::size_t comma = std::min(trimmed.find(',', start), trimmed.size());
    const std::string item = trimmed.substr(start, comma - start);
    const std::size_t dash = item.find('-');
    int first = 0, last = 0;
    const auto parse = [](const std::string& digits, int& out) {
      if (digits.empty()) return false;
      auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
      return error == std::errc() && end == digits.data() + digits.size() && out >= 0;
    };
    if (!parse(item.substr(0, dash), first)) return std::nullopt;
    last = first;
    if (dash != std::string::npos && !parse(item.substr(dash + 1), last)) return std::nullopt;
    if (last < first || last - first > 4096) return std::nullopt;
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    start = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

CpuLedger::Ticket CpuLedger::enqueue() {
  line_.push_back(next_);
  return next_++;
}

void CpuLedger::withdraw(Ticket ticket) {
  line_.erase(std::remove(line_.begin(), line_.end(), ticket), line_.end());
}

std::vector<std::size_t> CpuLedger::candidates(Ticket ticket) const {
  std::vector<std::size_t> free;
  if (line_.empty() || line_.front() != ticket) return free;
  for (std::size_t unit = 0; unit < holders_.size(); ++unit) {
    if (!holders_[unit]) free.push_back(unit);
  }
  return free;
}

bool CpuLedger::take(Ticket ticket, std::size_t unit) {
  if (line_.empty() || line_.front() != ticket) return false;
  if (unit >= holders_.size() || holders_[unit]) return false;
  holders_[unit] = ticket;
  line_.pop_front();
  return true;
}

bool CpuLedger::release(Ticket ticket, std::size_t unit) {
  if (unit >= holders_.size() || holders_[unit] != ticket) return false;
  holders_[unit].reset();
  return true;
}

std::vector<std::size_t> CpuLedger::held() const {
  std::vector<std::size_t> units;
  for (std::size_t unit = 0; unit < holders_.size(); ++unit) {
    if (holders_[unit]) units.push_back(unit);
  }
  return units;
}

}  // namespace kiln::runs
