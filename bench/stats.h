// Latency samples and the figures benchmarks print (percentiles, rates), and
// the small table/JSON printer every `kiln bench` uses.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <kiln/status.h>

namespace kiln::bench {

struct LatencySummary {
  double p50us = 0, p90us = 0, p99us = 0, meanUs = 0;
  std::size_t samples = 0;
};

// Sorts `nanos` in place.
LatencySummary summarize(std::vector<std::int64_t>& nanos);

// One row of figures: named columns, numbers or text, kept in order.
struct Row {
  std::vector<std::pair<std::string, std::string>> text;
  std::vector<std::pair<std::string, double>> numbers;
};

struct Report {
  std::string title;
  std::vector<Row> rows;
  std::vector<std::string> notes;
  void print(bool json) const;
};

// Runs `measure` with this process, and the children it starts meanwhile,
// pinned to CPU 0 (no cross-CPU wake-ups), then restores the affinity.
Status runPinnedToCpu0(const std::function<Status()>& measure);

// Resident set size of a process in bytes (from /proc); 0 if unknown.
std::uint64_t residentBytes(int pid);

// The CPUs a process may run on, as /proc lists them ("0", "0-1"); pid 0 is
// the calling thread. Empty if unknown (the process is gone).
std::string allowedCpus(int pid);

}  // namespace kiln::bench
