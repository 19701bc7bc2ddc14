#include "bench/rtt_bench.h"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <thread>
#include <zmq.hpp>

#include "bench/child_cluster.h"
#include "client/client.h"

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

Measurement measureRawZmq(const std::string& endpoint, std::size_t payload, const RttOptions& o) {
  zmq::context_t zmq(1);
  zmq::socket_t socket(zmq, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  socket.connect(endpoint);
  std::string data(payload, 'x');
  std::vector<std::int64_t> samples;
  auto begin = Clock::now();
  auto limit = begin + std::chrono::duration<double>(o.secondsPerMeasurement);
  for (unsigned i = 0; i < o.iterations + 100 && Clock::now() < limit; ++i) {
    auto start = Clock::now();
    socket.send(zmq::buffer(data), zmq::send_flags::none);
    zmq::message_t reply;
    (void)socket.recv(reply);
    if (i >= 100) samples.push_back(nanosSince(start));  // the first ones warm up
  }
  double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  Measurement m;
  m.perSecond = samples.size() / seconds;
  m.latency = summarize(samples);
  return m;
}

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

Status measureMemory(client::Client& client, int coordinatorPid, int workerPid, unsigned count,
                     Report& report) {
  KILN_RETURN_IF_ERROR(waitForLiveSessions(client, 0, std::chrono::seconds(30)));
  std::uint64_t coordinatorIdle = residentBytes(coordinatorPid);
  std::uint64_t workerIdle = residentBytes(workerPid);
  std::vector<std::unique_ptr<client::Session>> sessions;
  for (unsigned i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(auto session,
                          client.startSession({"noop", fmt::format("benchmark://idle/{}", i)}));
    sessions.push_back(std::move(session));
  }
  KILN_RETURN_IF_ERROR(waitForLiveSessions(client, count, std::chrono::seconds(30)));
  std::uint64_t coordinatorFull = residentBytes(coordinatorPid);
  std::uint64_t workerFull = residentBytes(workerPid);
  sessions.clear();  // each destructor sends EndSession
  KILN_RETURN_IF_ERROR(waitForLiveSessions(client, 0, std::chrono::seconds(30)));
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
  KILN_ASSIGN_OR_RETURN(ChildCluster cluster, ChildCluster::create(selfExecutable()));
  KILN_ASSIGN_OR_RETURN(
      ChildProcess * coordinator,
      cluster.spawn({"coordinator", "--listen", "tcp://127.0.0.1:0", "--log-level", "warn"}));
  KILN_ASSIGN_OR_RETURN(ChildProcess * worker,
                        cluster.spawn({"worker", "--coordinator", coordinator->endpoint, "--slots",
                                       std::to_string(o.slots), "--log-level", "warn"}));
  KILN_ASSIGN_OR_RETURN(ChildProcess * echo,
                        cluster.spawn({"bench", "zmq-echo", "--listen", "tcp://127.0.0.1:0"}));
  // The same echo over a Unix-domain socket: the floor for clients on the
  // worker's host. The abstract name (leading '@') leaves no file behind.
  KILN_ASSIGN_OR_RETURN(
      ChildProcess * ipcEcho,
      cluster.spawn({"bench", "zmq-echo", "--listen",
                     fmt::format("ipc://@kiln-bench-echo-{}-{}", ::getpid(), mode)}));
  client::ClientOptions options;
  options.coordinator = coordinator->endpoint;
  options.forceTcp = o.forceTcp;
  KILN_ASSIGN_OR_RETURN(auto client, client::Client::connect(options));
  KILN_RETURN_IF_ERROR(waitForLiveSessions(*client, 0, std::chrono::seconds(30)));
  for (auto [payload, space] : {std::pair<std::size_t, const char*>{16, "Bytes16"},
                                std::pair<std::size_t, const char*>{4096, "Bytes4K"}}) {
    report.rows.push_back(
        latencyRow(mode, "raw zeromq", payload, 1, measureRawZmq(echo->endpoint, payload, o)));
    report.rows.push_back(latencyRow(mode, "raw zeromq ipc", payload, 1,
                                     measureRawZmq(ipcEcho->endpoint, payload, o)));
    for (unsigned sessions : {1u, o.concurrentSessions}) {
      KILN_ASSIGN_OR_RETURN(Measurement m, measureSteps(*client, sessions, space, o));
      report.rows.push_back(latencyRow(mode, "kiln step", payload, sessions, m));
    }
  }
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
      "latency: p50/p90/p99 of one request's round trip; with 64 sessions the client keeps all "
      "64 steps in flight (pipelined), so per_second is the aggregate rate.");
  report.notes.push_back(
      "targets: kiln step p50 <= 1.5x raw zeromq; >= 50000 steps/s with 64 "
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
