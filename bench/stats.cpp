#include "bench/stats.h"

#include "common/base/json_text.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <numeric>

namespace kiln::bench {

LatencySummary summarize(std::vector<std::int64_t>& nanos) {
  LatencySummary s;
  if (nanos.empty()) return s;
  std::sort(nanos.begin(), nanos.end());
  auto at = [&](double q) {
    return nanos[std::min(nanos.size() - 1, static_cast<std::size_t>(q * nanos.size()))] / 1e3;
  };
  s.p50us = at(0.50);
  s.p90us = at(0.90);
  s.p99us = at(0.99);
  s.meanUs = std::accumulate(nanos.begin(), nanos.end(), 0.0) / nanos.size() / 1e3;
  s.samples = nanos.size();
  return s;
}

void Report::print(bool json) const {
  if (json) {
    fmt::print("{{\"title\": \"{}\", \"rows\": [", jsonEscape(title));
    for (std::size_t r = 0; r < rows.size(); ++r) {
      fmt::print("{}{{", r ? ", " : "");
      bool first = true;
      for (const auto& [key, value] : rows[r].text) {
        fmt::print("{}\"{}\": \"{}\"", first ? "" : ", ", key, jsonEscape(value));
        first = false;
      }
      for (const auto& [key, value] : rows[r].numbers) {
        fmt::print("{}\"{}\": {:.3f}", first ? "" : ", ", key, value);
        first = false;
      }
      fmt::print("}}");
    }
    fmt::print("], \"notes\": [");
    for (std::size_t n = 0; n < notes.size(); ++n) {
      fmt::print("{}\"{}\"", n ? ", " : "", jsonEscape(notes[n]));
    }
    fmt::print("]}}\n");
    return;
  }
  fmt::print("{}\n", title);
  // A text column is as wide as its longest value in any row, so that rows
  // under one header line up.
  std::map<std::string, std::size_t> textWidths;
  for (const Row& row : rows) {
    for (const auto& [key, value] : row.text) {
      std::size_t& width = textWidths[key];
      width = std::max({width, key.size(), value.size()});
    }
  }
  // Rows may have different columns (latency rows, memory rows): print each
  // group of same-shaped rows under its own header.
  std::string lastHeader;
  for (const Row& row : rows) {
    // Number columns are as wide as their name (at least 12); each column
    // is followed by two spaces.
    std::string header, line;
    for (const auto& [key, value] : row.text) {
      std::size_t width = std::max<std::size_t>(textWidths[key], 12) + 2;
      header += fmt::format("{:<{}}", key, width);
      line += fmt::format("{:<{}}", value, width);
    }
    for (const auto& [key, value] : row.numbers) {
      std::size_t width = std::max<std::size_t>(key.size(), 12) + 2;
      header += fmt::format("{:>{}}", key, width);
      line += fmt::format("{:>{}.1f}", value, width);
    }
    if (header != lastHeader) fmt::print("\n{}\n", header);
    lastHeader = header;
    fmt::print("{}\n", line);
  }
  for (const std::string& note : notes) fmt::print("\n{}", note);
  fmt::print("\n");
}

Status runPinnedToCpu0(const std::function<Status()>& measure) {
  cpu_set_t original, one;
  if (sched_getaffinity(0, sizeof(original), &original) != 0) {
    return internalError("cannot read this process's CPU affinity");
  }
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  if (sched_setaffinity(0, sizeof(one), &one) != 0) {  // children inherit it
    return internalError("cannot pin this process to CPU 0");
  }
  Status measured = measure();
  sched_setaffinity(0, sizeof(original), &original);
  return measured;
}

std::uint64_t residentBytes(int pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

std::string allowedCpus(int pid) {
  // The calling thread's own mask: runPinnedToCpu0 pins a thread, not its process.
  std::ifstream status(pid == 0 ? std::string("/proc/thread-self/status")
                                : fmt::format("/proc/{}/status", pid));
  std::string line;
  constexpr std::string_view kField = "Cpus_allowed_list:";
  while (std::getline(status, line)) {
    if (!line.starts_with(kField)) continue;
    std::string list = line.substr(kField.size());
    list.erase(0, list.find_first_not_of(" \t"));
    return list;
  }
  return {};
}

}  // namespace kiln::bench
