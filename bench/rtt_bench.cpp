#include "bench/rtt_bench.h"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <map>
#include <thread>
#include <zmq.hpp>

#include <kiln/client/client.h>
#include "bench/identity_steps.h"
#include "bench/kiln_executable.h"
#include "bench/path_floors.h"
#include "bench/socket_floor.h"
#include "bench/zmq_floor.h"
#include "tests/support/child_cluster.h"

namespace kiln::bench {

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t nanosSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

struct Measurement {
  LatencySummary latency;
  double perSecond = 0;
};

Result<Measurement> measureSteps(client::Client& client, unsigned sessionCount,
                                 const std::string& observation, const RttOptions& o) {
  std::vector<std::unique_ptr<client::Session>> sessions;
  for (unsigned i = 0; i < sessionCount; ++i) {
    KILN_ASSIGN_OR_RETURN(auto session,
                          client.startSession({"noop", fmt::format("benchmark://rtt/{}", i)}));
    sessions.push_back(std::move(session));
  }
  KILN_ASSIGN_OR_RETURN(std::uint32_t index, sessions[0]->observationIndex(observation));
  std::vector<Value> actions{Value(std::int64_t{8})};  // no effect
  std::vector<std::uint32_t> observations{index};
  std::vector<std::int64_t> samples;
  std::vector<std::uint64_t> requests(sessionCount);
  std::vector<Clock::time_point> sent(sessionCount);
  std::uint64_t steps = 0;
  unsigned rounds = std::max(1u, o.iterations / sessionCount);
  auto begin = Clock::now();
  auto limit = begin + std::chrono::duration<double>(o.secondsPerMeasurement);
  for (unsigned round = 0; round < rounds + 10 && Clock::now() < limit; ++round) {
    for (unsigned i = 0; i < sessionCount; ++i) {
      sent[i] = Clock::now();
      KILN_ASSIGN_OR_RETURN(requests[i], sessions[i]->sendStep(actions, observations));
    }
    for (unsigned i = 0; i < sessionCount; ++i) {
      KILN_ASSIGN_OR_RETURN(auto result, sessions[i]->awaitStep(requests[i]));
      if (round >= 10) samples.push_back(nanosSince(sent[i]));
    }
    if (round == 9) begin = Clock::now();
    if (round >= 10) steps += sessionCount;
  }
  double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  Measurement m;
  m.perSecond = steps / seconds;
  m.latency = summarize(samples);
  for (auto& session : sessions) KILN_RETURN_IF_ERROR(session->end());
  return m;
}

Row latencyRow(const std::string& mode, const std::string& path, std::size_t payload,
               unsigned sessions, const Measurement& m) {
  Row row;
  row.text = {{"mode", mode}, {"path", path}, {"payload", fmt::format("{} B", payload)}};
  row.numbers = {{"sessions", double(sessions)},
                 {"p50_us", m.latency.p50us},
                 {"p90_us", m.latency.p90us},
                 {"p99_us", m.latency.p99us},
                 {"per_second", m.perSecond}};
  return row;
}

// A raw stream transport's echo, spawned as its own process.
struct StreamEcho {
  std::string path;  // the row's name, e.g. "raw unix stream, polling"
  Waiting waiting = Waiting::kBlocking;
  testsupport::ChildProcess* process = nullptr;
};

Result<std::vector<StreamEcho>> spawnStreamEchoes(testsupport::ChildCluster& cluster,
                                                  const std::string& mode) {
  std::vector<StreamEcho> echoes;
  for (auto [family, listen] :
       {std::pair<const char*, std::string>{
            "unix stream", fmt::format("unix:@kiln-bench-stream-{}-{}", ::getpid(), mode)},
        std::pair<const char*, std::string>{"tcp loopback", "tcp:127.0.0.1:0"}}) {
    for (Waiting waiting : {Waiting::kBlocking, Waiting::kPolling}) {
      const bool polling = waiting == Waiting::kPolling;
      std::vector<std::string> args{
          "bench", "socket-echo", "--listen",
          polling && listen.starts_with("unix") ? listen + "-poll" : listen};
      if (polling) args.push_back("--poll");
      KILN_ASSIGN_OR_RETURN(testsupport::ChildProcess * process, cluster.spawn(args));
      echoes.push_back(StreamEcho{
          fmt::format("raw {}, {}", family, polling ? "polling" : "blocking"), waiting, process});
    }
  }
  return echoes;
}

Status measureMemory(client::Client& client, int coordinatorPid, int workerPid, unsigned count,
                     Report& report) {
  KILN_RETURN_IF_ERROR(testsupport::waitForLiveSessions(client, 0, std::chrono::seconds(30)));
  std::uint64_t coordinatorIdle = residentBytes(coordinatorPid);
  std::uint64_t workerIdle = residentBytes(workerPid);
  std::vector<std::unique_ptr<client::Session>> sessions;
  for (unsigned i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(auto session,
                          client.startSession({"noop", fmt::format("benchmark://idle/{}", i)}));
    sessions.push_back(std::move(session));
  }
  KILN_RETURN_IF_ERROR(testsupport::waitForLiveSessions(client, count, std::chrono::seconds(30)));
  std::uint64_t coordinatorFull = residentBytes(coordinatorPid);
  std::uint64_t workerFull = residentBytes(workerPid);
  sessions.clear();  // each destructor sends EndSession
  KILN_RETURN_IF_ERROR(testsupport::waitForLiveSessions(client, 0, std::chrono::seconds(30)));
  std::uint64_t coordinatorAfter = residentBytes(coordinatorPid);
  std::uint64_t workerAfter = residentBytes(workerPid);
  auto row = [&](const char* process, std::uint64_t idle, std::uint64_t full, std::uint64_t after) {
    Row r;
    r.text = {{"process", process}};
    r.numbers = {{"idle_mib", idle / 1048576.0},
                 {"sessions", double(count)},
                 {"with_mib", full / 1048576.0},
                 {"per_session_b", (double(full) - double(idle)) / count},
                 {"after_mib", after / 1048576.0}};
    return r;
  };
  report.rows.push_back(row("coordinator", coordinatorIdle, coordinatorFull, coordinatorAfter));
  report.rows.push_back(row("worker", workerIdle, workerFull, workerAfter));
  return okStatus();
}

Status runMode(const std::string& mode, const RttOptions& o, bool withMemory, Report& report) {
  KILN_ASSIGN_OR_RETURN(testsupport::ChildCluster cluster,
                        testsupport::ChildCluster::create(kilnExecutable()));
  // One client holds the idle sessions of the memory figure (more than
  // --max-sessions-per-client's default).
  KILN_ASSIGN_OR_RETURN(testsupport::CoordinatorAndWorker servers,
                        testsupport::spawnCoordinatorAndWorker(
                            cluster, o.slots,
                            {"--max-sessions-per-client",
                             std::to_string(std::max(1u, o.idleSessions + o.concurrentSessions))}));
  testsupport::ChildProcess* coordinator = servers.coordinator;
  testsupport::ChildProcess* worker = servers.worker;
  KILN_ASSIGN_OR_RETURN(testsupport::ChildProcess * echo,
                        cluster.spawn({"bench", "zmq-echo", "--listen", "tcp://127.0.0.1:0"}));
  // The same echo over a Unix-domain socket: the floor for clients on the
  // worker's host. The abstract name (leading '@') leaves no file behind.
  KILN_ASSIGN_OR_RETURN(
      testsupport::ChildProcess * ipcEcho,
      cluster.spawn({"bench", "zmq-echo", "--listen",
                     fmt::format("ipc://@kiln-bench-echo-{}-{}", ::getpid(), mode)}));
  KILN_ASSIGN_OR_RETURN(std::vector<StreamEcho> streamEchoes, spawnStreamEchoes(cluster, mode));
  client::ClientOptions options;
  options.coordinator = coordinator->endpoint;
  options.forceTcp = o.forceTcp;
  KILN_ASSIGN_OR_RETURN(auto client, client::Client::connect(options));
  KILN_RETURN_IF_ERROR(testsupport::waitForLiveSessions(*client, 0, std::chrono::seconds(30)));
  for (auto [payload, space] : {std::pair<std::size_t, const char*>{16, "Bytes16"},
                                std::pair<std::size_t, const char*>{4096, "Bytes4K"}}) {
    // Every floor with the same payload both ways as the kiln rows: a noop
    // step's request is about as large as its reply of `payload` bytes.
    std::map<std::string, Measurement> floors;
    for (auto [path, endpoint] : {std::pair{"raw zeromq", echo->endpoint},
                                  std::pair{"raw zeromq ipc", ipcEcho->endpoint}}) {
      KILN_ASSIGN_OR_RETURN(StreamFloor floor, measureZmqEchoFloor(endpoint, payload, o.iterations,
                                                                   o.secondsPerMeasurement));
      floors[path] = Measurement{floor.latency, floor.perSecond};
    }
    for (const StreamEcho& stream : streamEchoes) {
      // On one CPU a spinning side starves its peer for a whole time slice
      // (ms per round trip): polling is no floor there.
      if (!pollingFloorsApply(mode) && stream.waiting == Waiting::kPolling) continue;
      KILN_ASSIGN_OR_RETURN(StreamFloor floor,
                            measureStreamFloor({stream.process->endpoint, payload, stream.waiting,
                                                o.iterations, o.secondsPerMeasurement}));
      floors[stream.path] = Measurement{floor.latency, floor.perSecond};
    }
    for (const auto& [path, m] : floors) {
      Row row = latencyRow(mode, path, payload, 1, m);
      row.text.push_back({"judged_against", "-"});
      report.rows.push_back(std::move(row));
    }
    for (unsigned sessions : {1u, o.concurrentSessions}) {
      KILN_ASSIGN_OR_RETURN(Measurement m, measureSteps(*client, sessions, space, o));
      Row row = latencyRow(mode, "kiln step", payload, sessions, m);
      if (sessions == 1) {
        KILN_ASSIGN_OR_RETURN(std::string floorPath,
                              judgedFloorPath(*client, worker->endpoint, mode, ReplyWait::kQuick));
        const Measurement& floor = floors.at(floorPath);
        row.text.push_back({"judged_against", floorPath});
        row.numbers.push_back(
            {"x_floor_p50", floor.latency.p50us > 0 ? m.latency.p50us / floor.latency.p50us : 0});
      } else {
        // Pipelined: its latency is queueing, its figure the rate (the target).
        row.text.push_back({"judged_against", "steps/s target"});
        row.numbers.push_back({"x_floor_p50", 0});
      }
      report.rows.push_back(std::move(row));
    }
  }
  // The identity check's share of a step (issue 48): the same raw steps to
  // this worker, the client named by its secret and by its pass.
  KILN_ASSIGN_OR_RETURN(IdentityStepFigures identity,
                        measureIdentitySteps(coordinator->endpoint, worker->endpoint,
                                             std::min(o.iterations, 3000u), 9));
  for (Row& row : identityStepRows(mode, identity)) report.rows.push_back(std::move(row));
  report.notes.push_back(
      fmt::format("{}: kiln steps went over {}", mode, client->connectedAddress(worker->endpoint)));
  if (withMemory) {
    KILN_RETURN_IF_ERROR(measureMemory(*client, coordinator->process.pid(), worker->process.pid(),
                                       o.idleSessions, report));
  }
  (void)worker;
  return okStatus();
}

}  // namespace

Result<Report> runRttBench(const RttOptions& o) {
  Report report;
  report.title =
      "kiln bench rtt: noop step round trip through real coordinator and worker "
      "processes on loopback";
  KILN_RETURN_IF_ERROR(runMode("as-is", o, true, report));
  if (o.pinned) {
    KILN_RETURN_IF_ERROR(runPinnedToCpu0([&] { return runMode("pinned-cpu0", o, false, report); }));
  }
  report.notes.push_back(
      "identity (issue 48): 'raw step, client by secret / by pass' are noop steps to the same "
      "worker from a raw ZeroMQ DEALER over TCP, one in flight, 9 runs of each interleaved: "
      "p50 min and median over the runs; check_ns_other_client is the worker's identity check "
      "alone when every request comes from another client than the one before (no memo hit): "
      "BLAKE2b of the secret, or SipHash-2-4 of the id under the worker's pass key.");
  report.notes.push_back(
      "latency: p50/p90/p99 of one request's round trip; with 64 sessions the client keeps all "
      "64 steps in flight (pipelined), so per_second is the aggregate rate.");
  report.notes.push_back(
      "floors: the same payload both ways between two processes over each transport kiln uses "
      "(ZeroMQ over TCP and ipc, a raw Unix stream socket as a same-host client's direct "
      "channel, raw TCP loopback), blocking (both sides sleep in the kernel) and polling (both "
      "spin); each kiln step row names the floor of the path its requests took (as is: the "
      "polling floor; pinned to one CPU: the blocking floor) and x_floor_p50 is its p50 over "
      "that floor's (pipelined rows with 64 sessions are judged by their rate; on one CPU the "
      "polling floors are not measured: a spinner starves its peer).");
  report.notes.push_back(
      "targets: kiln step p50 <= 1.5x its floor; >= 150000 steps/s with 64 "
      "sessions; <= 1 KiB/session coordinator, <= 16 KiB/session worker.");
  return report;
}

int runZmqEchoServer(const std::string& listen) {
  zmq::context_t zmq(1);
  zmq::socket_t router(zmq, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  router.bind(listen);
  fmt::print("echo {}\n", router.get(zmq::sockopt::last_endpoint));
  std::fflush(stdout);
  for (;;) {
    zmq::message_t id, frame;
    if (!router.recv(id) || !router.recv(frame)) continue;
    router.send(id, zmq::send_flags::sndmore);
    router.send(frame, zmq::send_flags::none);
  }
}

}  // namespace kiln::bench
