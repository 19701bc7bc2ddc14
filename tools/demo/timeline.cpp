#include "tools/demo/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "common/base/json_text.h"

namespace kiln::demo {
namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c",
                                   "#9467bd", "#ff7f0e", "#8c564b"};
constexpr std::size_t kColorCount = std::size(kColors);

}  // namespace

std::string htmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string timelineSvg(const std::vector<std::string>& experiments, unsigned slots,
                        const std::vector<Sample>& samples) {
  const double width = 900, height = 260, left = 50, bottom = 30, top = 10;
  double span = samples.empty() ? 1 : std::max(samples.back().seconds, 1.0);
  double maxBusy = std::max<double>(slots, 1);
  auto x = [&](double s) { return left + (width - left - 10) * s / span; };
  auto y = [&](double busy) { return top + (height - top - bottom) * (1 - busy / maxBusy); };
  std::string svg = fmt::format(
      "<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' font-family='sans-serif' "
      "font-size='11'>\n",
      width, height);
  std::size_t k = experiments.size();
  // Lull bands: a thin strip per experiment under the chart area.
  for (std::size_t e = 0; e < k; ++e) {
    for (std::size_t i = 0; i + 1 < samples.size(); ++i) {
      const Sample& s = samples[i];
      if (e >= s.phases.size() || s.phases[e] != Phase::kLull) continue;
      svg += fmt::format(
          "<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{:.1f}' fill='{}' "
          "fill-opacity='0.10'/>\n",
          x(s.seconds), top, std::max(0.5, x(samples[i + 1].seconds) - x(s.seconds)),
          height - top - bottom, kColors[e % kColorCount]);
    }
  }
  for (std::size_t e = 0; e < k; ++e) {
    std::string points;
    for (const Sample& s : samples) {
      if (e < s.busySlots.size())
        points += fmt::format("{:.1f},{:.1f} ", x(s.seconds), y(s.busySlots[e]));
    }
    svg += fmt::format("<polyline fill='none' stroke='{}' stroke-width='2' points='{}'/>\n",
                       kColors[e % kColorCount], points);
    svg += fmt::format("<text x='{}' y='{}' fill='{}'>{} (shaded: its training lulls)</text>\n",
                       left + 10 + 330 * e, height - 5, kColors[e % kColorCount],
                       htmlEscape(experiments[e]));
  }
  for (unsigned slot = 0; slot <= slots; ++slot) {
    svg += fmt::format("<text x='5' y='{:.1f}'>{} slot{}</text>\n", y(slot) + 4, slot,
                       slot == 1 ? "" : "s");
  }
  svg += fmt::format("<line x1='{}' y1='{}' x2='{}' y2='{}' stroke='#888'/>\n", left,
                     height - bottom, width - 10, height - bottom);
  svg +=
      fmt::format("<text x='{}' y='{}'>{:.0f} s</text>\n", width - 40, height - bottom + 14, span);
  return svg + "</svg>\n";
}

std::string lineChartSvg(const std::vector<Series>& series, const std::string& xLabel,
                         const std::string& yLabel) {
  const double width = 900, height = 300, left = 60, right = 10, bottom = 50, top = 10;
  double xMax = 1e-9, yMin = 0, yMax = 1e-9;
  for (const Series& s : series) {
    for (auto [x, y] : s.points) {
      xMax = std::max(xMax, x);
      yMin = std::min(yMin, y);
      yMax = std::max(yMax, y);
    }
  }
  auto px = [&](double x) { return left + (width - left - right) * x / xMax; };
  auto py = [&](double y) {
    return top + (height - top - bottom) * (1 - (y - yMin) / (yMax - yMin));
  };
  std::string svg = fmt::format(
      "<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' font-family='sans-serif' "
      "font-size='11'>\n",
      width, height);
  svg += fmt::format("<line x1='{}' y1='{:.1f}' x2='{}' y2='{:.1f}' stroke='#888'/>\n", left, py(0),
                     width - right, py(0));
  for (double y : {yMin, yMax}) {
    svg += fmt::format("<text x='5' y='{:.1f}'>{:.2f}</text>\n", py(y) + 4, y);
  }
  svg += fmt::format("<text x='5' y='{}'>{}</text>\n", top + 24, htmlEscape(yLabel));
  svg += fmt::format("<text x='{}' y='{}'>{} (0 to {:.1f})</text>\n", width / 2 - 60,
                     height - bottom + 16, htmlEscape(xLabel), xMax);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    std::string points;
    for (auto [x, y] : s.points) points += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    const char* color = kColors[i % kColorCount];
    svg += fmt::format("<polyline fill='none' stroke='{}' stroke-width='2'{} points='{}'/>\n",
                       color, s.dashed ? " stroke-dasharray='5,3'" : "", points);
    svg += fmt::format("<text x='{:.0f}' y='{}' fill='{}'>{}</text>\n",
                       left + 10 + 290.0 * static_cast<double>(i % 3),
                       height - 22 + 12 * static_cast<double>(i / 3), color, htmlEscape(s.label));
  }
  return svg + "</svg>\n";
}

std::string htmlHead(const std::string& title) {
  return fmt::format(
      "<!doctype html>\n<html><head><meta charset='utf-8'><title>{}</title>\n"
      "<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}"
      "td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}"
      "td.l,th.l{{text-align:left}}td.seq{{font-size:10px;max-width:420px;word-break:break-all;"
      "text-align:left}}</style></head><body>\n",
      htmlEscape(title));
}

std::string progressBar(unsigned done, unsigned total, unsigned width) {
  unsigned filled = total == 0 ? 0 : std::min(width, done * width / total);
  return std::string(filled, '#') + std::string(width - filled, '-');
}

const char* phaseName(Phase phase) {
  switch (phase) {
    case Phase::kStarting:
      return "waiting";
    case Phase::kCollecting:
      return "collecting";
    case Phase::kLull:
      return "training lull";
    default:
      return "done";
  }
}

double percentBetter(std::int64_t value, std::int64_t reference) {
  if (reference <= 0) return 0;
  return 100.0 * static_cast<double>(reference - value) / static_cast<double>(reference);
}

Status writeHtmlReport(const DemoRecord& record, const std::string& path) {
  std::ofstream out(path);
  if (!out) return invalidArgument(fmt::format("cannot write the report to '{}'", path));
  out << htmlHead("kiln demo report");
  out << "<h1>kiln demo: two experiments on one nesting host</h1>\n";
  out << fmt::format(
      "<p>{} experiments, {} slots, {:.1f} s. Each experiment alternates collection rounds "
      "with training lulls; the chart shows the slots each one kept busy (sampled from the "
      "coordinator): the lulls of one are filled by the other.</p>\n",
      record.experiments.size(), record.slots, record.seconds);
  out << timelineSvg(record.experiments, record.slots, record.samples);
  out << "<h2>Best pass sequence per benchmark</h2>\n<table><tr><th class='l'>benchmark</th>"
         "<th class='l'>found by</th><th>passes</th><th>IR instructions</th><th>-Oz</th>"
         "<th>vs -Oz</th><th>.text bytes</th><th>-Oz</th><th>vs -Oz</th>"
         "<th class='l'>sequence</th></tr>\n";
  for (const FinalRow& row : record.rows) {
    out << fmt::format(
        "<tr><td class='l'>{}</td><td class='l'>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{:+.1f}%</td><td>{}</td><td>{}</td><td>{:+.1f}%</td><td class='seq'>{}</td></tr>\n",
        htmlEscape(row.best.benchmark), htmlEscape(row.foundBy), row.best.passes.size(),
        row.best.instCount, row.best.instCountOz,
        percentBetter(row.best.instCount, row.best.instCountOz), row.textSize, row.textSizeOz,
        percentBetter(row.textSize, row.textSizeOz),
        htmlEscape(fmt::format("{}", fmt::join(row.passNames, " "))));
  }
  out << "</table>\n<p>Positive percentages are better (smaller) than -Oz.</p></body></html>\n";
  if (!out) return internalError(fmt::format("writing the report to '{}' failed", path));
  return okStatus();
}

}  // namespace kiln::demo
