#include "tools/demo/learning_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "common/base/json_text.h"

namespace kiln::demo {
namespace {

const LayoutFigures* findLayout(const Comparison& c, const char* name) {
  for (const LayoutFigures& f : c.layouts)
    if (f.layout == name) return &f;
  return nullptr;
}

double ratio(double a, double b) { return b > 0 ? a / b : 0; }

std::string orDash(double value, const char* format) {
  return value > 0 ? fmt::format(fmt::runtime(format), value) : std::string("-");
}

// Table rows as text cells: the console and the HTML report print the same.
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

Table layoutTable(const Comparison& c) {
  Table t{
      {"LAYOUT", "HOST BUDGET", "COLLECT STEPS/S", "vs DEDICATED", "ENV STEPS/S", "vs DEDICATED",
       "vs SHARED", "FAIRNESS", "CPU", "UPDATES' CPU", "HOSTS' BUDGET USED", "SLOTS BUSY"},
      {}};
  for (const LayoutFigures& f : c.layouts) {
    t.rows.push_back(
        {f.layout, f.hostBudget, fmt::format("{:.0f}", f.collectStepsPerSecond),
         orDash(f.collectVsDedicated, "{:.2f}x"), fmt::format("{:.0f}", f.stepsPerSecond),
         orDash(f.vsDedicated, "{:.2f}x"), orDash(f.vsShared, "{:.2f}x"),
         orDash(f.fairness, "{:.2f}"), fmt::format("{:.0f}%", 100 * f.cpuShare),
         fmt::format("{:.0f}%", 100 * f.updateCpuShare), orDash(100 * f.hostBudgetUse, "{:.0f}%"),
         fmt::format("{:.0f}%", 100 * f.slotUse)});
  }
  return t;
}

Table experimentTable(const LearningRecord& r, const Comparison& c) {
  Table t{{"LAYOUT", "EXPERIMENT", "WALL S", "vs DEDICATED", "COLLECTING S", "UPDATING S",
           "TO REWARD S"},
          {}};
  for (const LayoutFigures& f : c.layouts) {
    for (std::size_t e = 0; e < f.experiments.size(); ++e) {
      const ExperimentFigures& x = f.experiments[e];
      t.rows.push_back({f.layout, r.experiments[e].name, fmt::format("{:.2f}", x.wallSeconds),
                        orDash(x.vsDedicated, "{:.2f}x"), fmt::format("{:.2f}", x.collectSeconds),
                        fmt::format("{:.2f}", x.updateSeconds),
                        x.rewardSeconds >= 0 ? fmt::format("{:.2f}", x.rewardSeconds) : "-"});
    }
  }
  return t;
}

constexpr const char* kGreedyCaption =
    "the trained policies' greedy episodes, IR instructions: the best state of each episode "
    "(as CompilerGym's leaderboard took it), with its drop as a share of -Oz's (100% matches "
    "-Oz), the passes that reach it, and its validity (run against -O0 on the benchmark's "
    "inputs; an invalid state counts as unoptimized); the episode's final state beside it. "
    "'trained on': a benchmark the policy learned on (in-sample); 'held-out': never seen in "
    "training";

// A count's IR instruction drop from the unoptimized program as a share of
// -Oz's (the learners' return; 100% matches -Oz).
double shareOfOzDrop(const GreedyEpisode& g, std::int64_t count) {
  const double ozDrop = static_cast<double>(g.initialCount - g.countOz);
  return ozDrop > 0 ? 100.0 * static_cast<double>(g.initialCount - count) / ozDrop : 0;
}

// The best state's cell: its count, its share of -Oz's drop, the passes
// that reach it, and its validity; an invalid state counts as unoptimized.
std::string bestCell(const GreedyEpisode& g) {
  if (g.validation.validity == eval::Validity::kInvalid) {
    return fmt::format("INVALID, counted {} (0%)", g.initialCount);
  }
  return fmt::format("{} ({:.0f}%) after {}, {}", g.bestCount, shareOfOzDrop(g, g.bestCount),
                     g.bestLength, eval::validityName(g.validation.validity));
}

// The final state's cell: only the best state was validated, so a final
// state past it is shown as unvalidated, and one that is the best refers
// to it (an invalid one is not shown as a gain).
std::string finalCell(const GreedyEpisode& g) {
  if (g.bestLength == g.passes.size()) return "= best";
  return fmt::format("{} ({:.0f}%), unvalidated", g.finalCount, shareOfOzDrop(g, g.finalCount));
}

// With `passes`, a column per experiment with its pass sequence too.
Table greedyTable(const LearningRecord& r, bool passes) {
  Table t{{"BENCHMARK", "SET", "UNOPTIMIZED", "-Oz"}, {}};
  if (r.layouts.empty() || r.layouts.front().greedy.empty()) return t;
  const auto& greedy = r.layouts.front().greedy;
  for (const auto& e : r.experiments) {
    t.header.push_back(e.name + " BEST (of -Oz's drop) after N, VALID");
    t.header.push_back(e.name + " FINAL");
  }
  if (passes) {
    for (const auto& e : r.experiments) t.header.push_back(e.name + " passes");
  }
  for (std::size_t b = 0; b < greedy.front().size(); ++b) {
    const GreedyEpisode& first = greedy.front()[b];
    std::vector<std::string> row{first.benchmark, first.heldOut ? "held-out" : "trained on",
                                 fmt::format("{}", first.initialCount),
                                 fmt::format("{}", first.countOz)};
    for (const auto& episodes : greedy) {
      const GreedyEpisode& g = episodes.at(b);
      row.push_back(bestCell(g));
      row.push_back(finalCell(g));
    }
    if (passes) {
      for (const auto& episodes : greedy)
        row.push_back(fmt::format("{}", fmt::join(episodes.at(b).passes, " ")));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

void printTable(const Table& t, std::FILE* out) {
  std::vector<std::size_t> widths;
  for (const auto& h : t.header) widths.push_back(h.size());
  for (const auto& row : t.rows)
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i == 0) {
        fmt::print(out, "{:<{}}", cells[i], widths[i]);
      } else {
        fmt::print(out, "  {:>{}}", cells[i], widths[i]);
      }
    }
    fmt::print(out, "\n");
  };
  line(t.header);
  for (const auto& row : t.rows) line(row);
}

std::string htmlTable(const Table& t) {
  std::string html = "<table><tr>";
  for (std::size_t i = 0; i < t.header.size(); ++i)
    html += fmt::format("<th{}>{}</th>", i == 0 ? " class='l'" : "", htmlEscape(t.header[i]));
  html += "</tr>\n";
  for (const auto& row : t.rows) {
    html += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i)
      html += fmt::format("<td{}>{}</td>", i == 0 ? " class='l'" : "", htmlEscape(row[i]));
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

std::string targetsNote(const LearningRecord& r, const Comparison& c) {
  std::string note = "reward targets (60% of the best smoothed mean return of the nested run):";
  for (std::size_t e = 0; e < c.rewardTargets.size(); ++e) {
    note += fmt::format(" {} {:.3f}", r.experiments[e].name, c.rewardTargets[e]);
  }
  note += c.sameCurves ? "; every layout walked the same learning curve (seeded learners)"
                       : "; the learning curves differ between layouts (see the report)";
  return note;
}

// What the layouts are judged against, and why those figures: the lull the
// dedicated learners left and the gain it allows at most.
std::string judgementNote(const LearningRecord& r, const Comparison& c) {
  if (c.idealWallGain <= 0) return "no dedicated layout ran: nothing to judge the others against";
  const bool machines = std::all_of(r.layouts.begin(), r.layouts.end(),
                                    [](const LayoutResult& l) { return l.hostBudget != "none"; });
  return fmt::format(
      "judged against the dedicated halves. Their learners spent {:.0f}% of their time "
      "updating (the lull L), so sharing the {} machines can gain at most {:.2f}x in "
      "collection steps/s and {:.2f}x in env steps per wall second, where every update still "
      "takes as long (docs: install). The goal: nested >= 1.5x the dedicated collection rate "
      "(at L near 50% two experiments allow 2x), >= 1.0x the shared pool, no experiment > 10% "
      "slower. {}",
      100 * c.lullFraction, r.experiments.size(), c.idealCollectionGain, c.idealWallGain,
      machines ? "Each worker host is a machine with its own CPU budget (HOST BUDGET) and the "
                 "learners train outside it, as on a cluster: a dedicated host's idle CPU is lost"
               : "This machine's layouts share its cores: its dedicated halves already lend each "
                 "other their lulls, which separate machines could not");
}

std::string upperFirst(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text;
}

}  // namespace

std::uint64_t totalSteps(const LayoutResult& result) {
  std::uint64_t steps = 0;
  for (const auto& records : result.records)
    for (const IterationRecord& i : records) steps += i.steps;
  return steps;
}

std::vector<double> smoothedReturns(const std::vector<IterationRecord>& records, unsigned window) {
  std::vector<double> smoothed;
  for (std::size_t i = 0; i < records.size(); ++i) {
    double sum = 0;
    unsigned n = 0;
    for (std::size_t j = i + 1 - std::min<std::size_t>(i + 1, std::max(1u, window)); j <= i; ++j) {
      if (records[j].episodes == 0) continue;
      sum += records[j].meanReturn;
      ++n;
    }
    smoothed.push_back(n > 0 ? sum / n : 0);
  }
  return smoothed;
}

Comparison compare(const LearningRecord& r, unsigned cores) {
  Comparison c;
  c.cores = cores;
  if (r.layouts.empty()) return c;
  const LayoutResult& nested = r.layouts.front();
  for (const auto& records : nested.records) {
    auto smoothed = smoothedReturns(records);
    double best = smoothed.empty() ? 0 : *std::max_element(smoothed.begin(), smoothed.end());
    // Well below the best, so that the time to it tells layouts apart
    // before the last iteration.
    c.rewardTargets.push_back(best - 0.4 * std::abs(best));
  }
  for (const LayoutResult& l : r.layouts) {
    LayoutFigures f;
    f.layout = layoutName(l.layout);
    f.stepsPerSecond = ratio(static_cast<double>(totalSteps(l)), l.seconds);
    f.cpuShare = ratio(l.cpuSeconds, l.seconds * cores);
    f.hostBudget = l.hostBudget;
    f.hostBudgetUse = ratio(l.workerCpuSeconds, l.seconds * l.budgetCpus);
    double busy = 0;
    for (const Sample& s : l.samples) busy += s.totalBusy;
    f.slotUse = l.samples.empty() ? 0 : ratio(busy / l.samples.size(), l.slots);
    double updateCpu = 0;
    for (std::size_t e = 0; e < l.records.size(); ++e) {
      const auto& records = l.records[e];
      ExperimentFigures x;
      if (!records.empty()) x.wallSeconds = records.back().endSeconds - l.starts.at(e);
      auto smoothed = smoothedReturns(records);
      for (std::size_t i = 0; i < records.size(); ++i) {
        x.collectSeconds += records[i].collectSeconds;
        x.updateSeconds += records[i].updateSeconds;
        x.updateCpuSeconds += records[i].updateCpuSeconds;
        if (x.rewardSeconds < 0 && smoothed[i] >= c.rewardTargets.at(e)) {
          x.rewardSeconds = records[i].endSeconds - l.starts.at(e);
        }
        if (e < nested.records.size() &&
            (i >= nested.records[e].size() ||
             nested.records[e][i].meanReturn != records[i].meanReturn)) {
          c.sameCurves = false;
        }
      }
      updateCpu += x.updateCpuSeconds;
      f.experiments.push_back(x);
    }
    f.updateCpuShare = ratio(updateCpu, l.seconds * cores);
    for (std::size_t e = 0; e < l.records.size(); ++e) {
      std::uint64_t steps = 0;
      for (const IterationRecord& i : l.records[e]) steps += i.steps;
      f.collectStepsPerSecond += ratio(static_cast<double>(steps), f.experiments[e].collectSeconds);
    }
    c.layouts.push_back(std::move(f));
  }
  const LayoutFigures* dedicated = findLayout(c, "dedicated");
  const LayoutFigures* shared = findLayout(c, "shared");
  const double dedicatedRate = dedicated ? dedicated->stepsPerSecond : 0;
  if (dedicated) {
    double updating = 0, wall = 0;
    for (const ExperimentFigures& x : dedicated->experiments) {
      updating += x.updateSeconds;
      wall += x.wallSeconds;
    }
    c.lullFraction = ratio(updating, wall);
    c.idealWallGain = idealWallGain(c.lullFraction, dedicated->experiments.size());
    c.idealCollectionGain = idealCollectionGain(c.lullFraction, dedicated->experiments.size());
  }
  const double sharedRate = shared ? shared->stepsPerSecond : 0;
  std::vector<double> dedicatedWall;
  if (dedicated) {
    for (const auto& x : dedicated->experiments) dedicatedWall.push_back(x.wallSeconds);
  }
  for (LayoutFigures& f : c.layouts) {
    f.vsDedicated = ratio(f.stepsPerSecond, dedicatedRate);
    f.collectVsDedicated =
        ratio(f.collectStepsPerSecond, dedicated ? dedicated->collectStepsPerSecond : 0);
    f.vsShared = ratio(f.stepsPerSecond, sharedRate);
    double low = 0, high = 0;
    for (std::size_t e = 0; e < f.experiments.size(); ++e) {
      ExperimentFigures& x = f.experiments[e];
      if (e < dedicatedWall.size()) x.vsDedicated = ratio(dedicatedWall[e], x.wallSeconds);
      low = e == 0 ? x.vsDedicated : std::min(low, x.vsDedicated);
      high = std::max(high, x.vsDedicated);
    }
    f.fairness = ratio(low, high);
  }
  return c;
}

void printComparison(const LearningRecord& r, const Comparison& c, std::FILE* out) {
  fmt::print(out, "\nthe layouts compared on the same work ({}):\n", judgementNote(r, c));
  printTable(layoutTable(c), out);
  fmt::print(out, "\n");
  printTable(experimentTable(r, c), out);
  fmt::print(out,
             "(CPU: this process's (learners, clients, coordinator, and the hosts when they are "
             "not budgeted) of {} cores; UPDATES' CPU: the learners' updates, each on one "
             "thread; HOSTS' BUDGET USED: the worker hosts' processes' CPU over their budget)\n"
             "{}\n",
             c.cores, targetsNote(r, c));
  const Table greedy = greedyTable(r, false);
  if (!greedy.rows.empty()) {
    fmt::print(out, "\n{}:\n", kGreedyCaption);
    printTable(greedy, out);
  }
}

Status writeLearningReport(const LearningRecord& r, const Comparison& c, const std::string& path) {
  std::ofstream out(path);
  if (!out) return invalidArgument(fmt::format("cannot write the report to '{}'", path));
  out << htmlHead("kiln demo report");
  out << "<h1>kiln demo: two learning experiments on one nesting host</h1>\n";
  std::vector<std::string> names;
  for (const auto& e : r.experiments) names.push_back(e.name);
  if (!r.layouts.empty()) {
    const LayoutResult& nested = r.layouts.front();
    out << fmt::format(
        "<p>Two PPO learners of LLVM pass orderings ({}), each alternating collection through "
        "kiln sessions with its training update (the lull, shaded). The chart shows the slots "
        "of the nesting host ({}) each one kept busy, sampled from the coordinator.</p>\n",
        htmlEscape(fmt::format("{}", fmt::join(names, ", "))), nested.slots);
    out << timelineSvg(names, nested.slots, nested.samples);
    std::vector<Series> byIteration, byTime;
    for (std::size_t e = 0; e < nested.records.size(); ++e) {
      Series s{names[e], {}, false};
      for (std::size_t i = 0; i < nested.records[e].size(); ++i) {
        if (nested.records[e][i].episodes > 0)
          s.points.emplace_back(static_cast<double>(i + 1), nested.records[e][i].meanReturn);
      }
      byIteration.push_back(std::move(s));
    }
    for (const LayoutResult& l : r.layouts) {
      for (std::size_t e = 0; e < l.records.size(); ++e) {
        Series s{fmt::format("{} {}", names[e], layoutName(l.layout)),
                 {},
                 l.layout != r.layouts.front().layout};
        auto smoothed = smoothedReturns(l.records[e]);
        for (std::size_t i = 0; i < smoothed.size(); ++i)
          s.points.emplace_back(l.records[e][i].endSeconds, smoothed[i]);
        byTime.push_back(std::move(s));
      }
    }
    out << "<h2>Learning curves</h2>\n<p>Mean episode return per iteration (1.0 = the IR "
           "instruction count drop of -Oz):</p>\n";
    out << lineChartSvg(byIteration, "iteration", "mean return");
    out << "<p>The same, smoothed over 3 iterations, against wall time in each layout:</p>\n";
    out << lineChartSvg(byTime, "seconds", "mean return");
  }
  out << fmt::format("<h2>The layouts compared</h2>\n<p>{}.</p>\n",
                     htmlEscape(upperFirst(judgementNote(r, c))));
  out << htmlTable(layoutTable(c)) << "<p></p>" << htmlTable(experimentTable(r, c));
  out << fmt::format(
      "<p>CPU: the demo process's (learners, clients, coordinator, and the hosts when they are "
      "not budgeted) of {} cores; hosts' budget used: the worker hosts' processes' CPU over "
      "their budget. {}.</p>\n",
      c.cores, htmlEscape(targetsNote(r, c)));
  out << "<h2>Utilization of each layout over time</h2>\n";
  for (const LayoutResult& l : r.layouts) {
    out << fmt::format("<p>{} ({} slots; host budget: {}):</p>\n", layoutName(l.layout), l.slots,
                       htmlEscape(l.hostBudget));
    out << timelineSvg(names, l.slots, l.samples);
  }
  const Table greedy = greedyTable(r, true);
  if (!greedy.rows.empty()) {
    out << "<h2>The trained policies' greedy episodes</h2>\n<p>" << htmlEscape(kGreedyCaption)
        << ".</p>\n"
        << htmlTable(greedy);
  }
  out << "</body></html>\n";
  if (!out) return internalError(fmt::format("writing the report to '{}' failed", path));
  return okStatus();
}

Status writeLearningJson(const LearningRecord& r, const Comparison& c, const std::string& path) {
  std::ofstream out(path);
  if (!out) return invalidArgument(fmt::format("cannot write the figures to '{}'", path));
  out << fmt::format(
      "{{\"cores\": {}, \"same_curves\": {}, \"lull_fraction\": {:.4f}, "
      "\"ideal_wall_gain\": {:.4f}, \"ideal_collection_gain\": {:.4f}, \"layouts\": [",
      c.cores, c.sameCurves ? "true" : "false", c.lullFraction, c.idealWallGain,
      c.idealCollectionGain);
  for (std::size_t l = 0; l < c.layouts.size(); ++l) {
    const LayoutFigures& f = c.layouts[l];
    out << fmt::format(
        "{}\n  {{\"layout\": \"{}\", \"seconds\": {:.4f}, \"steps_per_second\": {:.2f}, "
        "\"vs_dedicated\": {:.4f}, \"vs_shared\": {:.4f}, \"fairness\": {:.4f}, "
        "\"cpu_share\": {:.4f}, \"update_cpu_share\": {:.4f}, \"slot_use\": {:.4f}, "
        "\"host_budget\": \"{}\", \"host_budget_use\": {:.4f}, \"collect_steps_per_second\": "
        "{:.2f}, \"collect_vs_dedicated\": {:.4f}, \"experiments\": [",
        l == 0 ? "" : ",", jsonEscape(f.layout), r.layouts[l].seconds, f.stepsPerSecond,
        f.vsDedicated, f.vsShared, f.fairness, f.cpuShare, f.updateCpuShare, f.slotUse,
        jsonEscape(f.hostBudget), f.hostBudgetUse, f.collectStepsPerSecond, f.collectVsDedicated);
    for (std::size_t e = 0; e < f.experiments.size(); ++e) {
      const ExperimentFigures& x = f.experiments[e];
      std::string returns;
      for (const IterationRecord& i : r.layouts[l].records[e])
        returns += fmt::format("{}{:.5f}", returns.empty() ? "" : ", ", i.meanReturn);
      out << fmt::format(
          "{}{{\"name\": \"{}\", \"wall_seconds\": {:.4f}, \"vs_dedicated\": {:.4f}, "
          "\"reward_target\": {:.5f}, \"reward_seconds\": {:.4f}, \"collect_seconds\": {:.4f}, "
          "\"update_seconds\": {:.4f}, \"update_cpu_seconds\": {:.4f}, \"mean_returns\": [{}]}}",
          e == 0 ? "" : ", ", jsonEscape(r.experiments[e].name), x.wallSeconds, x.vsDedicated,
          c.rewardTargets.at(e), x.rewardSeconds, x.collectSeconds, x.updateSeconds,
          x.updateCpuSeconds, returns);
    }
    out << "]}";
  }
  out << "\n]}\n";
  if (!out) return internalError(fmt::format("writing the figures to '{}' failed", path));
  return okStatus();
}

}  // namespace kiln::demo
