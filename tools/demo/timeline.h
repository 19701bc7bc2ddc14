// What the demo records while it runs and how it is reported: per-experiment
// phases and busy slots sampled from the coordinator, the best results, and
// the HTML report (inline SVG, no external resources).
#pragma once

#include <string>
#include <vector>

#include <kiln/status.h>
#include "tools/demo/search.h"

namespace kiln::demo {

enum class Phase { kStarting, kCollecting, kLull, kDone };

struct Sample {
  double seconds = 0;             // since the start
  std::vector<double> busySlots;  // per experiment
  std::vector<Phase> phases;      // per experiment
  double totalBusy = 0;           // every worker's busy slots
};

struct FinalRow {
  SearchResult best;
  std::string foundBy;
  std::int64_t textSize = -1;    // .text bytes after the best sequence
  std::int64_t textSizeOz = -1;  // after -Oz
  std::vector<std::string> passNames;
};

struct DemoRecord {
  std::vector<std::string> experiments;
  unsigned slots = 0;
  std::vector<Sample> samples;
  std::vector<FinalRow> rows;
  double seconds = 0;
};

// Percent by which `value` is better (smaller) than `reference`.
double percentBetter(std::int64_t value, std::int64_t reference);

// Pieces both demos' progress lines and reports use.
std::string progressBar(unsigned done, unsigned total, unsigned width = 24);
const char* phaseName(Phase phase);
std::string htmlEscape(const std::string& text);
// An HTML page's start, through the opening <body>, with the reports' style.
std::string htmlHead(const std::string& title);
// Busy slots per experiment over time, each experiment's lulls shaded.
std::string timelineSvg(const std::vector<std::string>& experiments, unsigned slots,
                        const std::vector<Sample>& samples);
// Lines of (x, y) points with a legend, for learning curves.
struct Series {
  std::string label;
  std::vector<std::pair<double, double>> points;
  bool dashed = false;
};
std::string lineChartSvg(const std::vector<Series>& series, const std::string& xLabel,
                         const std::string& yLabel);

Status writeHtmlReport(const DemoRecord& record, const std::string& path);

}  // namespace kiln::demo
