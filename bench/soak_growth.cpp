#include "bench/soak_growth.h"

#include <algorithm>

namespace kiln::bench {

namespace {

double mean(const std::vector<RssPoint>& points) {
  double sum = 0;
  for (const RssPoint& p : points) sum += p.mib;
  return sum / static_cast<double>(points.size());
}

// MiB per second of the least-squares line through `points`.
double slope(const std::vector<RssPoint>& points) {
  double meanT = 0, meanM = 0;
  for (const RssPoint& p : points) {
    meanT += p.seconds;
    meanM += p.mib;
  }
  meanT /= static_cast<double>(points.size());
  meanM /= static_cast<double>(points.size());
  double covariance = 0, variance = 0;
  for (const RssPoint& p : points) {
    covariance += (p.seconds - meanT) * (p.mib - meanM);
    variance += (p.seconds - meanT) * (p.seconds - meanT);
  }
  return variance > 0 ? covariance / variance : 0;
}

}  // namespace

GrowthJudgement judgeGrowth(const std::vector<RssPoint>& points, double runSeconds,
                            const GrowthTolerance& tolerance) {
  GrowthJudgement judgement;
  const double third = runSeconds / 3;
  std::vector<RssPoint> middle, last;
  for (const RssPoint& p : points) {
    if (p.seconds >= 2 * third) {
      last.push_back(p);
    } else if (p.seconds >= third) {
      middle.push_back(p);
    }
  }
  if (middle.size() < tolerance.minPointsPerThird || last.size() < tolerance.minPointsPerThird) {
    return judgement;
  }
  judgement.judged = true;
  judgement.middleMib = mean(middle);
  judgement.lastMib = mean(last);
  std::vector<RssPoint> both = middle;
  both.insert(both.end(), last.begin(), last.end());
  judgement.slopeMibPerMinute = 60 * slope(both);
  const double allowed = std::max(tolerance.mib, tolerance.fraction * judgement.middleMib);
  judgement.growing =
      judgement.lastMib - judgement.middleMib > allowed && judgement.slopeMibPerMinute > 0;
  return judgement;
}

}  // namespace kiln::bench
