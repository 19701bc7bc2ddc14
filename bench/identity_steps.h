// What the step path pays for knowing its client (issue 48): raw noop steps
// to one worker process over ZeroMQ (a DEALER, blocking, one in flight), the
// client named by its secret, as every worker took it before, and by its
// pass for that worker, as kiln's client names it now; runs of the two
// interleaved, so that drift on a shared machine hits both alike. Also the
// check alone, per request, when every request comes from another client
// (the worker's memo never hits: a hash of the secret, or a MAC of the id).
#pragma once

#include <string>
#include <vector>

#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

struct IdentityStepFigures {
  std::vector<LatencySummary> bySecret, byPass;  // one per run
  double secretCheckNs = 0, passCheckNs = 0;     // median over the runs
};

// `coordinator` and `worker`: endpoints of running kiln processes (the
// worker registered with the coordinator, which issues the pass).
Result<IdentityStepFigures> measureIdentitySteps(const std::string& coordinator,
                                                 const std::string& worker, unsigned iterations,
                                                 unsigned runs);

// The bench rows of `figures`: min and median p50 over the runs, the pass
// judged against the secret.
std::vector<Row> identityStepRows(const std::string& mode, const IdentityStepFigures& figures);

}  // namespace kiln::bench
