// Does a process's memory keep growing? A pure judgement over RSS samples of
// one process (no /proc here, so it is tested on made-up series). The run is
// cut into thirds: the first is warm-up (caches filling, pools growing to
// their working size); the process grows when the last third's mean RSS
// exceeds the middle third's by more than the tolerance and the fitted slope
// over those two thirds is positive.
#pragma once

#include <vector>

namespace kiln::bench {

struct RssPoint {
  double seconds = 0;  // since the run started
  double mib = 0;
};

struct GrowthTolerance {
  double mib = 4;          // absorbs allocator noise on small processes
  double fraction = 0.05;  // of the middle third's mean
  unsigned minPointsPerThird = 2;
};

struct GrowthJudgement {
  bool judged = false;                // false: too few samples in the middle or last third
  double middleMib = 0, lastMib = 0;  // means over each third
  double slopeMibPerMinute = 0;       // least squares over the middle and last thirds
  bool growing = false;
};

// `points` of one process, in any order; `runSeconds` is the whole run.
GrowthJudgement judgeGrowth(const std::vector<RssPoint>& points, double runSeconds,
                            const GrowthTolerance& tolerance = {});

}  // namespace kiln::bench
