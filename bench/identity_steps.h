// What the step path pays for knowing its client (issue 48): raw noop steps
// to one worker process over ZeroMQ (a DEALER, blocking, one in flight), the
// client named by its secret, as every worker took it before, and by its
// pass for that worker, as kiln's client names it now; runs of the two
// interleaved, so that drift on a shared machine hits both alike. Also the
// check alone, per request, when every request comes from another client
// (the worker's memo never hits: a hash of the secret, or a MAC of the id).
// And an experiment's proof on a nesting host, checks alone: the key a host
// hashed before issue 48 against the pass for that host it compares now.
#pragma once

#include <string>
#include <vector>

#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

struct IdentityStepFigures {
  std::vector<LatencySummary> bySecret, byPass;  // one per run
  double secretCheckNs = 0, passCheckNs = 0;     // median over the runs
  // An experiment's proof on a nesting host, [0] by key (before #48), [1] by
  // the pass for that host: the host's check and the client's stamp, per
  // request, median over the runs.
  double experimentCheckNs[2] = {0, 0};
  double experimentStampNs[2] = {0, 0};
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
