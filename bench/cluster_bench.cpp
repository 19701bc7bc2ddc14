#include "bench/cluster_bench.h"

#include <fmt/format.h>

#include <future>
#include <thread>

#include "bench/placement_probe.h"
#include "bench/socket_floor.h"
#include "bench/zmq_floor.h"
#include "client/client.h"
#include "common/frame.h"
#include "common/wire_convert.h"
#include "testing/child_cluster.h"
#include "testing/net_bed.h"

namespace kiln::bench {

namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

// The size of a noop step request as the client sends it: the floor's payload.
std::size_t stepRequestBytes() {
  capnp::MallocMessageBuilder builder(120);
  auto envelope = initEnvelope(builder, 1);
  envelope.setTimeoutMs(10000);
  std::uint8_t secret[16] = {};
  envelope.setClientSecret(capnp::Data::Reader(secret, sizeof secret));
  auto step = envelope.initRequest().initStep();
  step.setSessionId(~std::uint64_t{0});
  toWire(Value(std::int64_t{1}), step.initActions(1)[0]);
  return encodeFrame(builder).size();
}

struct DelayFigures {
  unsigned delayUs = 0;
  LatencySummary step, floor, zmqFloor, placement;
  double serialStepsPerSecond = 0, pipelinedStepsPerSecond = 0;
};

// Steps every session with `depth` steps in flight each, for `seconds`.
Result<double> stepsPerSecond(std::vector<std::unique_ptr<client::Session>>& sessions,
                              unsigned depth, double seconds) {
  std::uint64_t steps = 0;
  const auto started = Steady::now();
  const auto until =
      started + std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
  while (Steady::now() < until) {
    std::vector<std::pair<client::Session*, std::uint64_t>> sent;
    for (auto& session : sessions) {
      for (unsigned d = 0; d < depth; ++d) {
        KILN_ASSIGN_OR_RETURN(std::uint64_t id, session->sendStep({Value(std::int64_t{1})}, {}));
        sent.emplace_back(session.get(), id);
      }
    }
    for (auto& [session, id] : sent) {
      KILN_RETURN_IF_ERROR(session->awaitStep(id).status());
      ++steps;
    }
  }
  return steps / std::chrono::duration<double>(Steady::now() - started).count();
}

// Everything the client measures, on the client host's network.
Result<std::vector<DelayFigures>> measureFromClientHost(
    testsupport::NetBed& bed, const std::string& coordinator, const std::string& echo,
    const std::string& zmqEcho, const std::string& nearWorker, const ClusterBenchOptions& o,
    unsigned workers) {
  client::ClientOptions clientOptions;
  clientOptions.coordinator = coordinator;
  clientOptions.requestTimeout = 30s;
  KILN_ASSIGN_OR_RETURN(auto client, client::Client::connect(clientOptions));
  const auto deadline = Steady::now() + 30s;
  for (;;) {
    auto listed = client->listCluster();
    if (listed.ok() && listed->size() == workers) break;
    if (Steady::now() > deadline) return timeoutError("the workers did not register in 30 s");
    std::this_thread::sleep_for(50ms);
  }
  client::SessionOptions noop{"noop", "benchmark://cluster/one"};
  KILN_ASSIGN_OR_RETURN(auto single, client->startSessionOn(nearWorker, noop));
  std::vector<client::SessionOptions> many(
      o.sessions, client::SessionOptions{"noop", "benchmark://cluster/many"});
  std::vector<std::unique_ptr<client::Session>> sessions;
  for (auto& started : client->startSessions(many)) {
    KILN_RETURN_IF_ERROR(started.status());
    sessions.push_back(std::move(*started));
  }
  zmq::context_t zmq(1);
  PlacementProbe probe(zmq, coordinator);
  std::vector<DelayFigures> all;
  for (unsigned delay : o.delaysUs) {
    KILN_RETURN_IF_ERROR(bed.setShape(fmt::format("{} 0 0", delay)));
    DelayFigures f;
    f.delayUs = delay;
    StreamFloorOptions floor;
    floor.endpoint = echo;
    floor.payloadBytes = stepRequestBytes();
    floor.samples = o.samples + 100;  // the first 100 warm up
    floor.seconds = 60;
    KILN_ASSIGN_OR_RETURN(StreamFloor measured, measureStreamFloor(floor));
    f.floor = measured.latency;
    KILN_ASSIGN_OR_RETURN(StreamFloor zmqMeasured,
                          measureZmqEchoFloor(zmqEcho, floor.payloadBytes, o.samples, 60));
    f.zmqFloor = zmqMeasured.latency;
    std::vector<std::int64_t> nanos;
    for (unsigned i = 0; i < o.samples + 20; ++i) {
      const auto sent = Steady::now();
      KILN_RETURN_IF_ERROR(
          single->step({Value(std::int64_t{1})}, std::vector<std::uint32_t>{}).status());
      if (i >= 20) nanos.push_back((Steady::now() - sent).count());
    }
    f.step = summarize(nanos);
    nanos.clear();
    for (unsigned i = 0; i < o.samples / 2 + 10; ++i) {
      KILN_ASSIGN_OR_RETURN(ProbePlacement placed, probe.place("noop", 10s));
      if (i >= 10) nanos.push_back(placed.nanos);
    }
    f.placement = summarize(nanos);
    KILN_ASSIGN_OR_RETURN(f.serialStepsPerSecond, stepsPerSecond(sessions, 1, o.throughputSeconds));
    KILN_ASSIGN_OR_RETURN(f.pipelinedStepsPerSecond,
                          stepsPerSecond(sessions, o.pipelined, o.throughputSeconds));
    all.push_back(f);
  }
  return all;
}

}  // namespace

Result<Report> runClusterBench(const ClusterBenchOptions& given) {
  ClusterBenchOptions o = given;
  if (o.quick) {
    o.hosts = 3;
    o.delaysUs = {0, 2000};
    o.samples = 60;
    o.sessions = 4;
    o.throughputSeconds = 1;
  }
  if (o.hosts < 3 || o.hosts > 16) {
    return invalidArgument("the cluster bench wants 3-16 hosts: a coordinator, workers, a client");
  }
  if (!std::filesystem::exists(o.netbed)) {
    return notFound(fmt::format(
        "{} not found: run from the repository's root, or pass --netbed PATH", o.netbed.string()));
  }
  const std::filesystem::path kiln = testsupport::selfExecutable();
  KILN_ASSIGN_OR_RETURN(auto bed, testsupport::NetBed::create(o.netbed, o.hosts, kiln));
  KILN_ASSIGN_OR_RETURN(testsupport::ChildCluster children,
                        testsupport::ChildCluster::create(kiln));
  KILN_ASSIGN_OR_RETURN(
      testsupport::ChildProcess * coordinator,
      children.spawn({"coordinator", "--listen", fmt::format("tcp://{}:0", bed->address(1)),
                      "--log-level", "warn"},
                     bed->runOn(1)));
  const unsigned clientHost = o.hosts;
  std::string nearWorker;
  for (unsigned host = 2; host < clientHost; ++host) {
    KILN_ASSIGN_OR_RETURN(testsupport::ChildProcess * worker,
                          children.spawn({"worker", "--coordinator", coordinator->endpoint,
                                          "--listen", fmt::format("tcp://{}:0", bed->address(host)),
                                          "--slots", "2", "--log-level", "warn"},
                                         bed->runOn(host)));
    if (nearWorker.empty()) nearWorker = worker->endpoint;
  }
  // The floors' echoes run on the host of the worker the round trips go to.
  KILN_ASSIGN_OR_RETURN(
      testsupport::ChildProcess * echo,
      children.spawn({"bench", "socket-echo", "--listen", fmt::format("tcp:{}:0", bed->address(2))},
                     bed->runOn(2)));
  KILN_ASSIGN_OR_RETURN(
      testsupport::ChildProcess * zmqEcho,
      children.spawn({"bench", "zmq-echo", "--listen", fmt::format("tcp://{}:0", bed->address(2))},
                     bed->runOn(2)));
  auto measured = std::async(std::launch::async, [&]() -> Result<std::vector<DelayFigures>> {
    KILN_RETURN_IF_ERROR(bed->enter(clientHost));
    return measureFromClientHost(*bed, coordinator->endpoint, echo->endpoint, zmqEcho->endpoint,
                                 nearWorker, o, clientHost - 2);
  });
  KILN_ASSIGN_OR_RETURN(std::vector<DelayFigures> figures, measured.get());

  Report report;
  report.title = fmt::format(
      "kiln bench cluster: {} hosts on emulated links (coordinator, {} workers, the client)",
      o.hosts, o.hosts - 2);
  for (const DelayFigures& f : figures) {
    Row row;
    row.numbers = {
        {"added_one_way_delay_us", double(f.delayUs)},
        {"step_p50_us", f.step.p50us},
        {"step_p99_us", f.step.p99us},
        {"tcp_echo_p50_us", f.floor.p50us},
        {"tcp_echo_p99_us", f.floor.p99us},
        {"x_floor_p50", f.floor.p50us > 0 ? f.step.p50us / f.floor.p50us : 0},
        {"zmq_echo_p50_us", f.zmqFloor.p50us},
        {"zmq_echo_p99_us", f.zmqFloor.p99us},
        {"x_zmq_floor_p50", f.zmqFloor.p50us > 0 ? f.step.p50us / f.zmqFloor.p50us : 0},
        {"placement_p50_us", f.placement.p50us},
        {"placement_p99_us", f.placement.p99us},
        {"steps_per_s_1_in_flight", f.serialStepsPerSecond},
        {"steps_per_s_pipelined", f.pipelinedStepsPerSecond},
        {"pipelining_gain",
         f.serialStepsPerSecond > 0 ? f.pipelinedStepsPerSecond / f.serialStepsPerSecond : 0}};
    row.text = {{"judged_against",
                 "step: a raw TCP echo between the same hosts, same payload, blocking reads, "
                 "same run (target <= 1.3x), and a raw ZeroMQ echo there (the transport the "
                 "step takes); pipelined: 1 in flight"}};
    report.rows.push_back(std::move(row));
  }
  report.notes.push_back(fmt::format(
      "every frame crosses one emulated link (a user-space switch: scripts/netbed --emulated), "
      "so a round trip pays twice the added delay; {} sessions over {} workers for the steps/s "
      "rows, {} steps in flight per session when pipelined",
      o.sessions, o.hosts - 2, o.pipelined));
  return report;
}

}  // namespace kiln::bench
