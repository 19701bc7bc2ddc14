#include "bench/path_floors.h"

#include <fmt/format.h>
#include <unistd.h>

#include <vector>

#include "bench/zmq_floor.h"
#include "common/base/spin_before_sleep.h"

namespace kiln::bench {

namespace {

// One echo process, measured by one or more clients in turn (an echo serves
// one connection at a time), then retired so that it cannot disturb the
// decisions measured after it.
struct EchoRun {
  std::vector<std::string> args;  // after `kiln bench`
  // Floor path and the waiting of the client side that measures it.
  std::vector<std::pair<const char*, Waiting>> clients;
  bool zmq = false;
};

}  // namespace

Result<std::map<std::string, StreamFloor>> measurePathFloors(testsupport::ChildCluster& cluster,
                                                             const PathFloorOptions& o) {
  const bool asIs = pollingFloorsApply(o.mode);
  // Abstract names (a leading '@'): nothing to remove afterwards.
  const std::string name = fmt::format("kiln-path-floor-{}-{}", ::getpid(), o.mode);
  std::vector<EchoRun> runs;
  runs.push_back({{"socket-echo", "--listen", "unix:@" + name + "-block"},
                  {{kUnixBlockingFloor, Waiting::kBlocking}}});
  if (asIs) {
    runs.push_back(
        {{"socket-echo", "--listen", "unix:@" + name + "-poll", "--poll"},
         {{kUnixDecisionFloor, Waiting::kBlocking}, {kUnixPollingFloor, Waiting::kPolling}}});
  }
  runs.push_back({{"zmq-echo", "--listen", "ipc://@" + name + "-zmq"},
                  {{kZmqIpcFloor, Waiting::kBlocking}},
                  true});
  std::map<std::string, StreamFloor> floors;
  for (const EchoRun& run : runs) {
    std::vector<std::string> args{"bench"};
    args.insert(args.end(), run.args.begin(), run.args.end());
    KILN_ASSIGN_OR_RETURN(testsupport::ChildProcess * echo, cluster.spawn(args));
    for (auto [path, waiting] : run.clients) {
      Result<StreamFloor> floor =
          run.zmq
              ? measureZmqEchoFloor(echo->endpoint, o.payloadBytes, o.samples, o.seconds)
              : measureStreamFloor({echo->endpoint, o.payloadBytes, waiting, o.samples, o.seconds});
      if (!floor.ok()) {
        cluster.retire(echo);
        return floor.status();
      }
      floors[path] = *floor;
    }
    cluster.retire(echo);
  }
  return floors;
}

bool pollingFloorsApply(const std::string& mode) { return mode == "as-is" && onSeveralCpus(); }

Result<std::string> judgedFloorPath(client::Client& client, const std::string& workerEndpoint,
                                    const std::string& mode, ReplyWait wait) {
  const bool polling = pollingFloorsApply(mode);
  if (client.usesDirectChannel(workerEndpoint)) {
    if (!polling) return std::string(kUnixBlockingFloor);
    return std::string(wait == ReplyWait::kQuick ? kUnixPollingFloor : kUnixDecisionFloor);
  }
  const std::string route = client.connectedAddress(workerEndpoint);
  if (route.starts_with("ipc://")) return std::string(kZmqIpcFloor);
  if (route.starts_with("tcp://")) return std::string(kZmqTcpFloor);
  return internalError(fmt::format(
      "requests to the worker went over '{}': neither its direct channel, ipc:// nor tcp://",
      route));
}

}  // namespace kiln::bench
