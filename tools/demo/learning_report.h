// What the learning demo measured per layout, the comparison between
// layouts (pure functions of the records, tested without a cluster), and
// how it is reported: a console table, an HTML report (the nested host's
// utilization timeline, the learning curves) and the same figures as JSON.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <kiln/status.h>
#include "common/types/cluster_layout.h"
#include "tools/demo/pass_learner.h"
#include "tools/demo/timeline.h"

namespace kiln::demo {

// Where the two experiments run (Layout: common/types/cluster_layout.h).

struct LayoutResult {
  Layout layout{};
  unsigned slots = 0;
  double seconds = 0;     // from the start until every experiment finished
  double cpuSeconds = 0;  // this process's CPU meanwhile (clients, learners, in-process hosts)
  double workerCpuSeconds = 0;      // the budgeted worker hosts' processes' (0: not budgeted)
  std::string hostBudget = "none";  // each worker host's CPU budget
  double budgetCpus = 0;            // the worker hosts' CPUs together (0: not budgeted)
  std::vector<double> starts;       // per experiment: its start, seconds after the layout's
  std::vector<std::vector<IterationRecord>> records;  // per experiment
  std::vector<Sample> samples;
  std::vector<std::vector<GreedyEpisode>> greedy;  // nested only: per experiment
};

struct LearningRecord {
  std::vector<LearnerSettings> experiments;
  std::vector<LayoutResult> layouts;  // the nested one first
};

struct ExperimentFigures {
  double wallSeconds = 0;     // its start to its last iteration's end
  double vsDedicated = 0;     // dedicated wall time / this one (> 1: faster)
  double rewardSeconds = -1;  // to its reward target; -1: not reached
  double collectSeconds = 0;  // summed over iterations
  double updateSeconds = 0;
  double updateCpuSeconds = 0;
};

struct LayoutFigures {
  std::string layout;
  double stepsPerSecond = 0;  // both experiments' env steps / the layout's wall time
  double vsDedicated = 0;     // stepsPerSecond / the dedicated layout's (0: not run)
  // Steps per second of collection (each experiment's steps over its
  // collection time, summed), and that over the dedicated layout's.
  double collectStepsPerSecond = 0;
  double collectVsDedicated = 0;
  double vsShared = 0;
  double fairness = 0;        // min / max of the experiments' vsDedicated (1: equal)
  double cpuShare = 0;        // process CPU / (wall time x cores)
  double updateCpuShare = 0;  // the learners' updates' part of it
  double hostBudgetUse = 0;   // the worker hosts' CPU / (wall time x their budget); 0: none
  std::string hostBudget;     // each worker host's budget, or "none"
  double slotUse = 0;         // mean busy slots / slots
  std::vector<ExperimentFigures> experiments;
};

struct Comparison {
  unsigned cores = 0;
  std::vector<double> rewardTargets;  // per experiment, from the nested learning curve
  bool sameCurves = true;             // every layout walked the nested layout's curve
  // The dedicated layout's lull: the learners' update time over their wall
  // time (0: no dedicated layout), and the most sharing could gain over it
  // (common/types/cluster_layout.h): in steps per wall second, and in
  // collection steps per second.
  double lullFraction = 0;
  double idealWallGain = 0;
  double idealCollectionGain = 0;
  std::vector<LayoutFigures> layouts;
};

std::uint64_t totalSteps(const LayoutResult& result);
// The mean return per iteration, smoothed over `window` iterations.
std::vector<double> smoothedReturns(const std::vector<IterationRecord>& records,
                                    unsigned window = 3);
Comparison compare(const LearningRecord& record, unsigned cores);

void printComparison(const LearningRecord& record, const Comparison& comparison, std::FILE* out);
Status writeLearningReport(const LearningRecord& record, const Comparison& comparison,
                           const std::string& path);
Status writeLearningJson(const LearningRecord& record, const Comparison& comparison,
                         const std::string& path);

}  // namespace kiln::demo
