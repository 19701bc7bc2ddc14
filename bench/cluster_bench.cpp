#include "bench/cluster_bench.h"

#include <fmt/format.h>

#include <future>
#include <thread>
#include <tuple>

#include <kiln/client/client.h>
#include "bench/kiln_executable.h"
#include "bench/placement_probe.h"
#include "bench/socket_floor.h"
#include "bench/zmq_floor.h"
#include "common/base/wire_convert.h"
#include "common/security/identity.h"
#include "common/transport/frame.h"
#include "tests/support/child_cluster.h"
#include "tests/support/net_bed.h"
#include "worker/worker_server.h"

namespace kiln::bench {

namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

constexpr unsigned kSessionsPerCut = 4;  // started on host 2 before each cut

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

struct CutFigures {
  double seconds = 0;
  std::uint64_t onCutHost = 0;  // of the sessions stepping, when the cable was pulled
  StepTally steps;
  std::uint64_t restored = 0;
  std::uint64_t lateSteps = 0, lateStepsRefused = 0;
  double backSeconds = -1;  // heal to host 2 listed again with no session of ours
};

struct DelayFigures {
  unsigned delayUs = 0;
  // step: the default path (a direct TCP channel); zeromqStep: a client
  // with ClientOptions::directAcrossHosts off.
  LatencySummary step, zeromqStep, floor, zmqFloor, placement;
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

// Host 2's cable pulled for `seconds` while every session steps.
Result<CutFigures> measureCut(client::Client& client, testsupport::NetBed& bed,
                              std::vector<client::Session*>& sessions, const std::string& cutWorker,
                              double seconds) {
  CutFigures f;
  f.seconds = seconds;
  std::vector<std::int64_t> sums;
  std::vector<std::pair<std::string, std::uint64_t>> onCutHost;
  for (client::Session* session : sessions) {
    KILN_ASSIGN_OR_RETURN(auto now,
                          session->step({Value(std::int64_t{0})}, std::vector<std::uint32_t>{0}));
    sums.push_back(now.observations.at(0).as<std::int64_t>());
    if (session->endpoint() == cutWorker) onCutHost.emplace_back(cutWorker, session->id().value);
  }
  f.onCutHost = onCutHost.size();
  const std::uint64_t restoredBefore = client.restoredSessions();
  for (int round = 0; round < 3; ++round) stepNoopRound(sessions, sums, f.steps);
  KILN_RETURN_IF_ERROR(bed.cut(2));
  const auto cutAt = Steady::now();
  const auto cut = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
  while (Steady::now() - cutAt < cut) stepNoopRound(sessions, sums, f.steps);
  KILN_RETURN_IF_ERROR(bed.heal(2));
  const auto healedAt = Steady::now();
  for (int round = 0; round < 3; ++round) stepNoopRound(sessions, sums, f.steps);
  f.restored = client.restoredSessions() - restoredBefore;
  // Back with the coordinator, holding none of the sessions that moved.
  while (Steady::now() - healedAt < 60s) {
    auto listed = client.listCluster();
    const bool back = listed.ok() && std::any_of(listed->begin(), listed->end(), [&](auto& w) {
                        return w.endpoint == cutWorker && (f.restored == 0 || w.liveSessions == 0);
                      });
    if (back) {
      f.backSeconds = std::chrono::duration<double>(Steady::now() - healedAt).count();
      break;
    }
    std::this_thread::sleep_for(50ms);
  }
  for (const auto& [endpoint, id] : onCutHost) {
    bool moved = std::none_of(sessions.begin(), sessions.end(), [&](client::Session* s) {
      return s->endpoint() == endpoint && s->id().value == id;
    });
    if (!moved) continue;
    ++f.lateSteps;
    Status late = lateStep(endpoint, id);
    if (late.code() == ErrorCode::kNotFound &&
        late.message().find("was dropped by this worker") != std::string::npos) {
      ++f.lateStepsRefused;
    }
  }
  return f;
}

struct ClientFigures {
  std::vector<DelayFigures> delays;
  std::vector<CutFigures> cuts;
};

// Round trips warmed up as the stream floor's are (measureStreamFloor).
constexpr unsigned kWarmUp = 100;
// The round trips and their floors are measured in this many rounds, each in
// another order: whichever came first after the link's shape changed ran
// slower (a floor measured before its step came out 1.4x over it, and under
// it measured after), so no path may always be first.
constexpr unsigned kRounds = 4;

// Round trips of one step each, after kWarmUp that warm up.
Result<std::vector<std::int64_t>> stepLatency(client::Session& session, unsigned samples) {
  std::vector<std::int64_t> nanos;
  for (unsigned i = 0; i < samples + kWarmUp; ++i) {
    const auto sent = Steady::now();
    KILN_RETURN_IF_ERROR(
        session.step({Value(std::int64_t{1})}, std::vector<std::uint32_t>{}).status());
    if (i >= kWarmUp) nanos.push_back((Steady::now() - sent).count());
  }
  return nanos;
}

// Everything the client measures, on the client host's network.
Result<ClientFigures> measureFromClientHost(testsupport::NetBed& bed,
                                            const std::string& coordinator, const std::string& echo,
                                            const std::string& zmqEcho,
                                            const std::string& nearWorker,
                                            const ClusterBenchOptions& o, unsigned workers) {
  client::ClientOptions clientOptions;
  clientOptions.coordinator = coordinator;
  clientOptions.requestTimeout = 30s;
  KILN_ASSIGN_OR_RETURN(auto client, client::Client::connect(clientOptions));
  KILN_RETURN_IF_ERROR(testsupport::waitForWorkers(*client, workers, 30s));
  client::SessionOptions noop{"noop", "benchmark://cluster/one"};
  KILN_ASSIGN_OR_RETURN(auto single, client->startSessionOn(nearWorker, noop));
  clientOptions.directAcrossHosts = false;
  KILN_ASSIGN_OR_RETURN(auto zeromqClient, client::Client::connect(clientOptions));
  KILN_ASSIGN_OR_RETURN(auto overZeromq, zeromqClient->startSessionOn(nearWorker, noop));
  // A benchmark each: cache affinity would gather one benchmark's sessions on
  // one worker, and the steps/s rows are of every worker.
  std::vector<client::SessionOptions> many;
  for (unsigned i = 0; i < o.sessions; ++i) {
    many.push_back({"noop", fmt::format("benchmark://cluster/many{}", i)});
  }
  std::vector<std::unique_ptr<client::Session>> sessions;
  for (auto& started : client->startSessions(many)) {
    KILN_RETURN_IF_ERROR(started.status());
    sessions.push_back(std::move(*started));
  }
  zmq::context_t zmq(1);
  PlacementProbe probe(zmq, coordinator);
  ClientFigures figures;
  std::vector<DelayFigures>& all = figures.delays;
  for (unsigned delay : o.delaysUs) {
    KILN_RETURN_IF_ERROR(bed.setShape(fmt::format("{} 0 0", delay)));
    DelayFigures f;
    f.delayUs = delay;
    StreamFloorOptions floor;
    floor.endpoint = echo;
    floor.payloadBytes = stepRequestBytes();
    floor.samples = std::max(1u, o.samples / kRounds);  // after its own kWarmUp
    floor.seconds = 60;
    std::vector<std::int64_t> steps, zeromqSteps, floors, zmqFloors, placements;
    auto append = [](std::vector<std::int64_t>& all, const std::vector<std::int64_t>& more) {
      all.insert(all.end(), more.begin(), more.end());
    };
    // Every path judged against a floor takes its turn in every round,
    // the placements (judged against the ZeroMQ echo) too.
    constexpr unsigned kPaths = 5;
    for (unsigned round = 0; round < kRounds; ++round) {
      for (unsigned path = 0; path < kPaths; ++path) {
        switch ((round + path) % kPaths) {
          case 0: {
            KILN_ASSIGN_OR_RETURN(auto nanos, stepLatency(*single, floor.samples));
            append(steps, nanos);
            break;
          }
          case 1: {
            KILN_ASSIGN_OR_RETURN(auto nanos, stepLatency(*overZeromq, floor.samples));
            append(zeromqSteps, nanos);
            break;
          }
          case 2: {
            KILN_ASSIGN_OR_RETURN(StreamFloor measured, measureStreamFloor(floor));
            append(floors, measured.nanos);
            break;
          }
          case 3: {
            KILN_ASSIGN_OR_RETURN(
                StreamFloor measured,
                measureZmqEchoFloor(zmqEcho, floor.payloadBytes, floor.samples, floor.seconds));
            append(zmqFloors, measured.nanos);
            break;
          }
          default: {
            for (unsigned i = 0; i < floor.samples + kWarmUp; ++i) {
              KILN_ASSIGN_OR_RETURN(ProbePlacement placed, probe.place("noop", 10s));
              if (i >= kWarmUp) placements.push_back(placed.nanos);
            }
          }
        }
      }
    }
    f.step = summarize(steps);
    f.zeromqStep = summarize(zeromqSteps);
    f.floor = summarize(floors);
    f.zmqFloor = summarize(zmqFloors);
    f.placement = summarize(placements);
    KILN_ASSIGN_OR_RETURN(f.serialStepsPerSecond, stepsPerSecond(sessions, 1, o.throughputSeconds));
    KILN_ASSIGN_OR_RETURN(f.pipelinedStepsPerSecond,
                          stepsPerSecond(sessions, o.pipelined, o.throughputSeconds));
    all.push_back(f);
  }
  KILN_RETURN_IF_ERROR(bed.setShape("0 0 0"));
  std::vector<client::Session*> stepping{single.get()};
  for (auto& session : sessions) stepping.push_back(session.get());
  std::vector<std::unique_ptr<client::Session>> cutOff;  // live until the end
  for (double seconds : o.cutsSeconds) {
    // Sessions on the host about to be cut off (those of an earlier cut
    // live elsewhere by now).
    for (unsigned i = 0; i < kSessionsPerCut; ++i) {
      // The client may still count the host lost from the cut before.
      auto session = client->startSessionOn(nearWorker, noop);
      for (const auto until = Steady::now() + 20s; !session.ok() && Steady::now() < until;) {
        std::this_thread::sleep_for(200ms);
        session = client->startSessionOn(nearWorker, noop);
      }
      KILN_RETURN_IF_ERROR(session.status());
      stepping.push_back(session->get());
      cutOff.push_back(std::move(*session));
    }
    KILN_ASSIGN_OR_RETURN(CutFigures cut, measureCut(*client, bed, stepping, nearWorker, seconds));
    figures.cuts.push_back(std::move(cut));
  }
  return figures;
}

}  // namespace

Result<Report> runClusterBench(const ClusterBenchOptions& given) {
  ClusterBenchOptions o = given;
  if (o.quick) {
    o.hosts = 4;
    o.cutsSeconds = {4};
    o.delaysUs = {0, 2000};
    o.samples = 60;
    o.sessions = 4;
    o.throughputSeconds = 1;
  }
  if (o.hosts < 4 || o.hosts > 16) {
    return invalidArgument(
        "the cluster bench wants 4-16 hosts: a coordinator, 2 or more workers (one is cut off), "
        "a client");
  }
  if (!std::filesystem::exists(o.netbed)) {
    return notFound(fmt::format(
        "{} not found: run from the repository's root, or pass --netbed PATH", o.netbed.string()));
  }
  const std::filesystem::path kiln = kilnExecutable();
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
  // The TCP echo waits as the worker waits on a direct channel from another
  // host (pollsAfterReply): an echo that polled after each reply while the
  // worker slept took one of the two CPUs the emulated link's switch and the
  // client needed, and came out slower than the step it judged (step 61 us,
  // echo 95 us as is; pinned to one CPU, where nothing polls, 92 against 64).
  const auto spinUs = std::chrono::duration_cast<std::chrono::microseconds>(
      pollsAfterReply(/*acrossHosts=*/true) ? WorkerConfig{}.replySpin : Duration::zero());
  KILN_ASSIGN_OR_RETURN(
      testsupport::ChildProcess * echo,
      children.spawn({"bench", "socket-echo", "--listen", fmt::format("tcp:{}:0", bed->address(2)),
                      "--spin-after-reply-us", std::to_string(spinUs.count())},
                     bed->runOn(2)));
  KILN_ASSIGN_OR_RETURN(
      testsupport::ChildProcess * zmqEcho,
      children.spawn({"bench", "zmq-echo", "--listen", fmt::format("tcp://{}:0", bed->address(2))},
                     bed->runOn(2)));
  auto measured = std::async(std::launch::async, [&]() -> Result<ClientFigures> {
    KILN_RETURN_IF_ERROR(bed->enter(clientHost));
    return measureFromClientHost(*bed, coordinator->endpoint, echo->endpoint, zmqEcho->endpoint,
                                 nearWorker, o, clientHost - 2);
  });
  KILN_ASSIGN_OR_RETURN(ClientFigures measuredFigures, measured.get());
  const std::vector<DelayFigures>& figures = measuredFigures.delays;

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
        {"step_zeromq_p50_us", f.zeromqStep.p50us},
        {"step_zeromq_p99_us", f.zeromqStep.p99us},
        {"zmq_echo_p50_us", f.zmqFloor.p50us},
        {"zmq_echo_p99_us", f.zmqFloor.p99us},
        {"x_zmq_floor_p50", f.zmqFloor.p50us > 0 ? f.zeromqStep.p50us / f.zmqFloor.p50us : 0},
        {"placement_p50_us", f.placement.p50us},
        {"placement_p99_us", f.placement.p99us},
        {"x_zmq_floor_placement_p50",
         f.zmqFloor.p50us > 0 ? f.placement.p50us / f.zmqFloor.p50us : 0},
        {"steps_per_s_1_in_flight", f.serialStepsPerSecond},
        {"steps_per_s_pipelined", f.pipelinedStepsPerSecond},
        {"pipelining_gain",
         f.serialStepsPerSecond > 0 ? f.pipelinedStepsPerSecond / f.serialStepsPerSecond : 0}};
    row.text = {{"judged_against",
                 "step (over the direct TCP channel the client opens by default): a raw TCP "
                 "echo between the same hosts, the step request's size both ways, waiting as "
                 "kiln's sides do across hosts (both sleep in the kernel until the other's bytes "
                 "come: neither polls across hosts), same run, same "
                 "warm-up, measured in rounds taking turns with the step (target <= 1.3x); "
                 "step_zeromq "
                 "(ClientOptions::directAcrossHosts off): a raw ZeroMQ echo there, alike; "
                 "placement (one ZeroMQ round trip to the coordinator on host 1, a request of "
                 "about that size): the same ZeroMQ echo, one emulated hop away as the "
                 "coordinator is, in the same rounds; steps_per_s_pipelined: the same sessions "
                 "with 1 in flight "
                 "(pipelining_gain)"}};
    report.rows.push_back(std::move(row));
    // A path cannot beat the raw transport it runs on: a row clearly under
    // its floor means the floor was measured unlike the row. Equal p50s
    // differ by a few percent from run to run (60-300 samples), hence the
    // margin; a row at its floor within it is at its floor.
    constexpr double kNoise = 0.95;
    for (const auto& [what, value, floor] :
         {std::tuple{"step", f.step.p50us, f.floor.p50us},
          std::tuple{"step_zeromq", f.zeromqStep.p50us, f.zmqFloor.p50us},
          std::tuple{"placement", f.placement.p50us, f.zmqFloor.p50us}}) {
      if (floor > 0 && value < kNoise * floor) {
        report.notes.push_back(fmt::format(
            "BENCH BUG at {} us added delay: {} p50 {:.1f} us is more than 5% under its floor's "
            "{:.1f} us "
            "(the floor is not measured like the row: find why before reading the row)",
            f.delayUs, what, value, floor));
      }
    }
  }
  for (const CutFigures& f : measuredFigures.cuts) {
    Row row;
    row.numbers = {{"cut_seconds", f.seconds},
                   {"sessions_on_cut_host", double(f.onCutHost)},
                   {"steps_attempted", double(f.steps.attempted)},
                   {"steps_answered", double(f.steps.answered)},
                   {"steps_lost", double(f.steps.lost)},
                   {"sessions_restored", double(f.restored)},
                   {"back_on_coordinator_s", f.backSeconds},
                   {"late_steps", double(f.lateSteps)},
                   {"late_steps_refused", double(f.lateStepsRefused)}};
    row.text = {{"judged_against",
                 "host 2's cable pulled while every session steps: steps lost and late steps "
                 "answered by a moved session's old copy must be 0"}};
    report.rows.push_back(std::move(row));
    if (f.steps.lost != 0) {
      report.notes.push_back(
          fmt::format("LOST STEPS in the {} s cut: first: {}", f.seconds, f.steps.firstLoss));
    }
  }
  report.notes.push_back(fmt::format(
      "every frame crosses one emulated link (a user-space switch: scripts/netbed --emulated), "
      "so a round trip pays twice the added delay; {} sessions over {} workers for the steps/s "
      "rows, {} steps in flight per session when pipelined",
      o.sessions, o.hosts - 2, o.pipelined));
  return report;
}

}  // namespace kiln::bench

namespace kiln::bench {

void stepNoopRound(const std::vector<client::Session*>& sessions, std::vector<std::int64_t>& sums,
                   StepTally& tally) {
  std::vector<std::optional<std::uint64_t>> sent(sessions.size());
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    ++tally.attempted;
    auto id = sessions[i]->sendStep({Value(std::int64_t{1})}, {0});
    if (id.ok()) {
      sent[i] = *id;
      continue;
    }
    ++tally.lost;
    if (tally.firstLoss.empty()) tally.firstLoss = id.status().toString();
  }
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    if (!sent[i]) continue;
    auto stepped = sessions[i]->awaitStep(*sent[i]);
    if (stepped.ok() && stepped->observations.at(0).as<std::int64_t>() == sums[i] + 1) {
      ++sums[i];
      ++tally.answered;
      continue;
    }
    ++tally.lost;
    if (tally.firstLoss.empty()) {
      tally.firstLoss = stepped.ok() ? "a wrong sum" : stepped.status().toString();
    }
  }
}

Status lateStep(const std::string& endpoint, std::uint64_t session,
                const UnderlyingAddress& underlying) {
  zmq::context_t zmq(1);
  zmq::socket_t socket(zmq, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::rcvtimeo, 5000);
  socket.connect(endpoint);
  capnp::MallocMessageBuilder builder(128);
  auto envelope = initEnvelope(builder, 1);
  envelope.setClientSecret(capnp::Data::Reader(reinterpret_cast<const kj::byte*>("late"), 4));
  if (underlying.target != 0) {
    KILN_ASSIGN_OR_RETURN(Secret key, Secret::fromHex(underlying.experimentKey));
    envelope.setTarget(underlying.target);
    envelope.setExperiment(underlying.experiment);
    // A host is shown the experiment's pass for itself, never the key.
    const std::string pass = experimentPassOf(key, endpoint);
    envelope.setExperimentPass(
        capnp::Data::Reader(reinterpret_cast<const kj::byte*>(pass.data()), pass.size()));
  }
  auto step = envelope.initRequest().initStep();
  step.setSessionId(session);
  toWire(Value(std::int64_t{1}), step.initActions(1)[0]);
  if (!socket.send(encodeFrame(builder), zmq::send_flags::none)) {
    return internalError("the late step could not be sent");
  }
  zmq::message_t frame;
  if (!socket.recv(frame)) return timeoutError("no answer to the late step in 5 s");
  KILN_ASSIGN_OR_RETURN(InboundMessage reply, InboundMessage::decode(frame, FrameLimits{}));
  auto answer = reply.envelope().getReply();
  if (answer.isError()) return fromWire(answer.getError());
  return okStatus();
}

}  // namespace kiln::bench
