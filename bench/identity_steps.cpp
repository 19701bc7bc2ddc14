#include "bench/identity_steps.h"

#include <capnp/message.h>
#include <fmt/format.h>

#include <algorithm>
#include <zmq.hpp>

#include "client/channel.h"
#include "common/base/wire_convert.h"
#include "common/security/identity.h"
#include "common/transport/frame.h"

namespace kiln::bench {

namespace {

using Clock = std::chrono::steady_clock;

// Who the requests say they come from.
struct Caller {
  Secret secret;
  ClientId id;
  ClientPass pass{};
  bool byPass = false;

  void stamp(wire::Envelope::Builder envelope) const {
    if (byPass) {
      envelope.setClientId(id.value);
      envelope.setClientPass(capnp::Data::Reader(pass.data(), pass.size()));
    } else {
      envelope.setClientSecret(wireBytes(secret));
    }
  }
};

class RawPeer {
 public:
  RawPeer(zmq::context_t& zmq, const std::string& endpoint)
      : socket_(zmq, zmq::socket_type::dealer) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.set(zmq::sockopt::rcvtimeo, 10000);
    socket_.connect(endpoint);
  }
  // One request built by `fill`, as `caller`; its reply.
  template <class Fill>
  Result<InboundMessage> call(const Caller& caller, Fill fill) {
    capnp::MallocMessageBuilder builder(256);
    auto envelope = initEnvelope(builder, ++requestId_);
    caller.stamp(envelope);
    fill(envelope.initRequest());
    if (!socket_.send(encodeFrame(builder), zmq::send_flags::none)) {
      return disconnected("cannot send");
    }
    zmq::message_t frame;
    if (!socket_.recv(frame)) return timeoutError("no reply within 10 s");
    KILN_ASSIGN_OR_RETURN(InboundMessage reply, InboundMessage::decode(frame, FrameLimits{}));
    if (reply.envelope().getReply().isError()) {
      return fromWire(reply.envelope().getReply().getError());
    }
    return reply;
  }

 private:
  zmq::socket_t socket_;
  std::uint64_t requestId_ = 0;
};

Result<std::uint64_t> startNoop(RawPeer& worker, const Caller& caller) {
  KILN_ASSIGN_OR_RETURN(InboundMessage started, worker.call(caller, [](wire::Request::Builder r) {
    auto start = r.initStartSession();
    start.setSessionType("noop");
    start.initBenchmark().setUri("benchmark://identity/steps");
  }));
  return started.envelope().getReply().getSessionStarted().getSessionId();
}

Result<LatencySummary> stepRun(RawPeer& worker, const Caller& caller, std::uint64_t session,
                               unsigned iterations) {
  std::vector<std::int64_t> nanos;
  nanos.reserve(iterations);
  for (unsigned i = 0; i < iterations + 10; ++i) {
    const auto sent = Clock::now();
    KILN_RETURN_IF_ERROR(worker
                             .call(caller,
                                   [&](wire::Request::Builder r) {
                                     auto step = r.initStep();
                                     step.setSessionId(session);
                                     toWire(Value(std::int64_t{8}), step.initActions(1)[0]);
                                   })
                             .status());
    if (i >= 10) nanos.push_back((Clock::now() - sent).count());
  }
  return summarize(nanos);
}

// ns per ClientIdMemo::of when each request comes from the other of two clients.
double checkNanos(bool byPass, unsigned calls) {
  const PassKey key = PassKey::draw();
  capnp::MallocMessageBuilder a, b;
  for (auto* builder : {&a, &b}) {
    Caller caller{Secret::draw(), {}, {}, byPass};
    caller.id = clientIdOf(wireBytes(caller.secret));
    caller.pass = clientPass(key, caller.id);
    caller.stamp(builder->initRoot<wire::Envelope>());
  }
  const wire::Envelope::Reader envelopes[2] = {a.getRoot<wire::Envelope>().asReader(),
                                               b.getRoot<wire::Envelope>().asReader()};
  ClientIdMemo memo(key);
  std::uint64_t sum = 0;
  const auto started = Clock::now();
  for (unsigned i = 0; i < calls; ++i) sum += memo.of(envelopes[i & 1]).value;
  const auto took = Clock::now() - started;
  if (sum == 0) return -1;  // every call named a client; keeps the loop
  return double(std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()) / calls;
}

// ns per check of an experiment's proof on a nesting host when each request
// comes from another of two experiments: the key against its digest (a
// BLAKE2b of the key, hosts before #48) or the pass for this host (#48).
double experimentCheckNanos(bool byPass, unsigned calls) {
  const std::string host = "tcp://bench-host:1";
  std::string stored[2], presented[2];
  for (int i = 0; i < 2; ++i) {
    const Secret key = Secret::draw();
    stored[i] = byPass ? experimentPassOf(key, host) : keyDigest(key.bytes());
    presented[i] = byPass ? stored[i] : std::string(key.bytes());
  }
  auto data = [](const std::string& bytes) {
    return capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(bytes.data()), bytes.size());
  };
  unsigned matched = 0;
  const auto started = Clock::now();
  for (unsigned i = 0; i < calls; ++i) {
    const std::string& want = stored[i & 1];
    const capnp::Data::Reader got = data(presented[i & 1]);
    matched += byPass ? passMatches(got, want) : keyMatches(got, want);
  }
  const auto took = Clock::now() - started;
  if (matched != calls) return -1;
  return double(std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()) / calls;
}

// ns per request the client spends stamping its experiment's proof for a
// worker, each request to another of two hosts: the key (before #48), or the
// pass for that host, made once per host and key (#48).
double experimentStampNanos(bool byPass, unsigned calls) {
  client::RequestIdentity identity;
  identity.experiment = "bench";
  identity.experimentKey = Secret::draw();
  const std::string hosts[2] = {"tcp://bench-host:1", "tcp://bench-host:2"};
  capnp::MallocMessageBuilder builder(1024);
  auto envelope = builder.initRoot<wire::Envelope>();
  std::size_t sum = 0;
  const auto started = Clock::now();
  for (unsigned i = 0; i < calls; ++i) {
    if (byPass) {
      identity.stampForWorker(envelope, hosts[i & 1]);
      sum += envelope.getExperimentPass().size();
    } else {
      envelope.setExperiment(identity.experiment);  // what stampForWorker did before #48
      envelope.setExperimentKey(wireBytes(identity.experimentKey));
      sum += envelope.getExperimentKey().size();
    }
    if ((i & 1023) == 1023) envelope = builder.initRoot<wire::Envelope>();  // bounds the arena
  }
  const auto took = Clock::now() - started;
  if (sum == 0) return -1;
  return double(std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()) / calls;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

}  // namespace

Result<IdentityStepFigures> measureIdentitySteps(const std::string& coordinatorEndpoint,
                                                 const std::string& workerEndpoint,
                                                 unsigned iterations, unsigned runs) {
  zmq::context_t zmq(1);
  RawPeer coordinator(zmq, coordinatorEndpoint), worker(zmq, workerEndpoint);
  Caller bySecret{Secret::draw()};
  bySecret.id = clientIdOf(wireBytes(bySecret.secret));
  // The pass as a client gets it: a placement on this worker.
  KILN_ASSIGN_OR_RETURN(InboundMessage placed,
                        coordinator.call(bySecret, [&](wire::Request::Builder r) {
                          auto place = r.initPlace();
                          place.setSessionType("noop");
                          place.setWorker(workerEndpoint);
                        }));
  auto pass = placed.envelope().getReply().getPlacement().getClientPass();
  if (pass.size() != kClientPassBytes) return internalError("the placement carried no pass");
  Caller byPass = bySecret;
  byPass.byPass = true;
  std::copy(pass.begin(), pass.end(), byPass.pass.begin());
  KILN_ASSIGN_OR_RETURN(std::uint64_t secretSession, startNoop(worker, bySecret));
  KILN_ASSIGN_OR_RETURN(std::uint64_t passSession, startNoop(worker, byPass));
  IdentityStepFigures figures;
  std::vector<double> secretNs, passNs;
  std::vector<double> experimentCheckNs[2], experimentStampNs[2];  // [by pass]
  for (unsigned run = 0; run < runs; ++run) {
    KILN_ASSIGN_OR_RETURN(LatencySummary s, stepRun(worker, bySecret, secretSession, iterations));
    KILN_ASSIGN_OR_RETURN(LatencySummary p, stepRun(worker, byPass, passSession, iterations));
    figures.bySecret.push_back(s);
    figures.byPass.push_back(p);
    secretNs.push_back(checkNanos(false, 200000));
    passNs.push_back(checkNanos(true, 200000));
    for (bool byPass : {false, true}) {
      experimentCheckNs[byPass].push_back(experimentCheckNanos(byPass, 200000));
      experimentStampNs[byPass].push_back(experimentStampNanos(byPass, 200000));
    }
  }
  figures.secretCheckNs = median(secretNs);
  figures.passCheckNs = median(passNs);
  for (bool byPass : {false, true}) {
    figures.experimentCheckNs[byPass] = median(experimentCheckNs[byPass]);
    figures.experimentStampNs[byPass] = median(experimentStampNs[byPass]);
  }
  for (auto [caller, session] : {std::pair{&bySecret, secretSession}, {&byPass, passSession}}) {
    (void)worker.call(*caller,
                      [&](wire::Request::Builder r) { r.initEndSession().setSessionId(session); });
  }
  return figures;
}

std::vector<Row> identityStepRows(const std::string& mode, const IdentityStepFigures& figures) {
  auto p50s = [](const std::vector<LatencySummary>& runs) {
    std::vector<double> values;
    for (const LatencySummary& run : runs) values.push_back(run.p50us);
    return values;
  };
  const std::vector<double> secret = p50s(figures.bySecret), pass = p50s(figures.byPass);
  auto row = [&](const char* path, const std::vector<double>& p50, double checkNs,
                 const char* judged, double ratio) {
    Row r;
    r.text = {{"mode", mode}, {"path", path}, {"judged_against", judged}};
    r.numbers = {{"runs", double(p50.size())},
                 {"p50_us_min", p50.empty() ? 0 : *std::min_element(p50.begin(), p50.end())},
                 {"p50_us_median", median(p50)},
                 {"check_ns_other_client", checkNs},
                 {"x_judged_p50_median", ratio}};
    return r;
  };
  const double ratio = median(secret) > 0 ? median(pass) / median(secret) : 0;
  // The experiment's proof on a nesting host: checks alone, no steps.
  auto experimentRow = [&](const char* path, bool byPass, const char* judged) {
    Row r;
    r.text = {{"mode", mode}, {"path", path}, {"judged_against", judged}};
    const double before = figures.experimentCheckNs[0];
    r.numbers = {
        {"runs", double(figures.bySecret.size())},
        {"check_ns_other_client", figures.experimentCheckNs[byPass]},
        {"client_stamp_ns", figures.experimentStampNs[byPass]},
        {"x_judged_check", byPass && before > 0 ? figures.experimentCheckNs[1] / before : 0}};
    return r;
  };
  return {
      row("raw step, client by secret (workers before #48)", secret, figures.secretCheckNs, "-", 0),
      row("raw step, client by pass (#48)", pass, figures.passCheckNs, "raw step, client by secret",
          ratio),
      experimentRow("experiment request, by key (hosts before #48)", false, "-"),
      experimentRow("experiment request, by pass (#48)", true, "experiment request, by key")};
}

}  // namespace kiln::bench
