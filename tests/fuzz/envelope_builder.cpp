#include "tests/fuzz/envelope_builder.h"

#include <array>
#include <string>

#include "common/security/identity.h"
#include "tests/support/test_identity.h"

namespace kiln::fuzz {
namespace {

// Values that mean something to the handlers, so the fuzzer need not guess them.
constexpr std::array<const char*, 6> kSessionTypes = {"noop", "llvm", "mlgo-inline",
                                                      "",     "NOOP", "noop\x01"};
constexpr std::array<const char*, 4> kExperiments = {"", "exp-a", "exp-b", "a/b"};

// One of a few fixed 16-byte secrets (client secrets, experiment keys), a
// wrong-sized one, or none: owners and keys then match now and then.
std::string pickSecret(FuzzedDataProvider& data) {
  int which = data.ConsumeIntegralInRange<int>(0, 4);
  if (which == 0) return {};
  if (which == 4) return std::string(5, 'x');
  return std::string(kSecretBytes, static_cast<char>('a' + which));
}

using testsupport::asData;

// The endpoint the fuzzed experiment passes are made for: one fixed host, so
// that a pass and a worker's spec match now and then.
constexpr std::string_view kFuzzHost = "tcp://fuzz-host:1";

constexpr std::array<const char*, 9> kParameterKeys = {
    "service.benchmark_cache.get_size",
    "service.benchmark_cache.set_max_size_in_bytes",
    "service.benchmark_cache.evict_to_capacity",
    "service.benchmark_cache.get_counters",
    "service.benchmark_cache.",
    "noop.sum",
    "noop.unknown",
    "",
    "llvm.unknown"};
constexpr std::array<const char*, 5> kUris = {"benchmark://kiln-bench-v0/crc32",
                                              "benchmark://test/a", "generator://csmith-v0/1",
                                              "file:///tmp/x.bc", ""};

std::string pickText(FuzzedDataProvider& data, const auto& choices) {
  if (data.ConsumeBool()) return data.ConsumeRandomLengthString(64);
  return choices[data.ConsumeIntegralInRange<std::size_t>(0, choices.size() - 1)];
}

std::uint64_t pickId(FuzzedDataProvider& data, const std::vector<std::uint64_t>& known) {
  if (!known.empty() && data.ConsumeBool()) {
    return known[data.ConsumeIntegralInRange<std::size_t>(0, known.size() - 1)];
  }
  return data.ConsumeBool() ? data.ConsumeIntegralInRange<std::uint64_t>(0, 4)
                            : data.ConsumeIntegral<std::uint64_t>();
}

// A small count, occasionally a large one (lists the handlers must bound).
unsigned pickCount(FuzzedDataProvider& data) {
  return data.ConsumeIntegralInRange<unsigned>(0, 8) == 8
             ? data.ConsumeIntegralInRange<unsigned>(0, 2000)
             : data.ConsumeIntegralInRange<unsigned>(0, 3);
}

std::uint32_t pickSmall32(FuzzedDataProvider& data) {
  return data.ConsumeBool() ? data.ConsumeIntegralInRange<std::uint32_t>(0, 8)
                            : data.ConsumeIntegral<std::uint32_t>();
}

void fillTensorShape(FuzzedDataProvider& data, capnp::List<std::int64_t>::Builder shape) {
  for (unsigned i = 0; i < shape.size(); ++i) {
    shape.set(i, data.ConsumeBool() ? data.ConsumeIntegralInRange<std::int64_t>(-1, 4)
                                    : data.ConsumeIntegral<std::int64_t>());
  }
}

void fillValue(FuzzedDataProvider& data, wire::Value::Builder value, int depth) {
  switch (data.ConsumeIntegralInRange<int>(0, depth > 3 ? 5 : 10)) {
    case 0:
      return value.setNone();
    case 1:
      return value.setBoolean(data.ConsumeBool());
    case 2:
      return value.setInt64(data.ConsumeBool() ? data.ConsumeIntegralInRange<std::int64_t>(-2, 12)
                                               : data.ConsumeIntegral<std::int64_t>());
    case 3:
      return value.setDouble(data.ConsumeFloatingPoint<double>());
    case 4:
      return value.setString(data.ConsumeRandomLengthString(32));
    case 5: {
      std::string bytes = data.ConsumeRandomLengthString(32);
      return value.setBytes(
          kj::arrayPtr(reinterpret_cast<const kj::byte*>(bytes.data()), bytes.size()));
    }
    case 6: {
      auto tensor = value.initInt64Tensor();
      fillTensorShape(data, tensor.initShape(pickCount(data) % 4));
      auto values = tensor.initValues(pickCount(data));
      for (unsigned i = 0; i < values.size(); ++i) values.set(i, data.ConsumeIntegral<int64_t>());
      return;
    }
    case 7: {
      auto tensor = value.initFloatTensor();
      fillTensorShape(data, tensor.initShape(pickCount(data) % 4));
      auto values = tensor.initValues(pickCount(data));
      for (unsigned i = 0; i < values.size(); ++i) {
        values.set(i, data.ConsumeFloatingPoint<float>());
      }
      return;
    }
    case 8: {
      auto tensor = value.initDoubleTensor();
      fillTensorShape(data, tensor.initShape(pickCount(data) % 4));
      auto values = tensor.initValues(pickCount(data));
      for (unsigned i = 0; i < values.size(); ++i) {
        values.set(i, data.ConsumeFloatingPoint<double>());
      }
      return;
    }
    case 9: {
      auto list = value.initList(pickCount(data) % 4);
      for (auto item : list) fillValue(data, item, depth + 1);
      return;
    }
    default: {
      auto dict = value.initDict(pickCount(data) % 4);
      for (auto entry : dict) {
        entry.setName(data.ConsumeRandomLengthString(8));
        fillValue(data, entry.initValue(), depth + 1);
      }
      return;
    }
  }
}

void fillTexts(FuzzedDataProvider& data, capnp::List<capnp::Text>::Builder list,
               const auto& choices) {
  for (unsigned i = 0; i < list.size(); ++i) list.set(i, pickText(data, choices));
}

void fillLoad(FuzzedDataProvider& data, wire::Load::Builder load) {
  load.setLiveSessions(pickSmall32(data));
  load.setBusySlots(pickSmall32(data));
  load.setQueuedRequests(pickSmall32(data));
  load.setStepsTotal(data.ConsumeIntegral<std::uint64_t>());
}

void fillSpec(FuzzedDataProvider& data, const KnownIds& known, wire::UnderlyingSpec::Builder spec) {
  spec.setWorkerId(pickId(data, known.workers));
  spec.setExperiment(pickText(data, kExperiments));
  spec.setWeight(pickSmall32(data));
  spec.setMaxSessions(pickSmall32(data));
  fillTexts(data, spec.initSessionTypes(pickCount(data) % 4), kSessionTypes);
  std::string key = pickSecret(data);
  if (!key.empty()) spec.setExperimentPass(asData(experimentPass(keyDigest(key), kFuzzHost)));
}

void fillUnderlying(FuzzedDataProvider& data, const KnownIds& known,
                    capnp::List<wire::UnderlyingStatus>::Builder list) {
  for (auto status : list) {
    fillSpec(data, known, status.initSpec());
    fillLoad(data, status.initLoad());
  }
}

void fillExperimentSpec(FuzzedDataProvider& data, wire::ExperimentSpec::Builder spec) {
  spec.setName(pickText(data, kExperiments));
  spec.setWorkers(pickSmall32(data));
  spec.setWeight(pickSmall32(data));
  spec.setMaxSessions(pickSmall32(data));
  fillTexts(data, spec.initSessionTypes(pickCount(data) % 4), kSessionTypes);
  spec.setPack(data.ConsumeBool());
}

void fillBenchmark(FuzzedDataProvider& data, wire::Benchmark::Builder benchmark) {
  benchmark.setUri(pickText(data, kUris));
  std::string program = data.ConsumeRandomLengthString(64);
  benchmark.setProgram(
      kj::arrayPtr(reinterpret_cast<const kj::byte*>(program.data()), program.size()));
}

void fillRequest(FuzzedDataProvider& data, const KnownIds& known, wire::Request::Builder request) {
  switch (data.ConsumeIntegralInRange<int>(0, 17)) {
    case 0:
      request.initGetVersion();
      return;
    case 1:
      request.initGetSpaces().setSessionType(pickText(data, kSessionTypes));
      return;
    case 2: {
      auto start = request.initStartSession();
      start.setSessionType(pickText(data, kSessionTypes));
      fillBenchmark(data, start.initBenchmark());
      start.setActionSpace(pickSmall32(data));
      auto observations = start.initObservationSpaces(pickCount(data));
      for (unsigned i = 0; i < observations.size(); ++i) observations.set(i, pickSmall32(data));
      return;
    }
    case 3: {
      auto step = request.initStep();
      step.setSessionId(pickId(data, known.sessions));
      auto actions = step.initActions(pickCount(data));
      for (auto action : actions) fillValue(data, action, 0);
      auto observations = step.initObservationSpaces(pickCount(data));
      for (unsigned i = 0; i < observations.size(); ++i) observations.set(i, pickSmall32(data));
      return;
    }
    case 4:
      request.initFork().setSessionId(pickId(data, known.sessions));
      return;
    case 5:
      request.initEndSession().setSessionId(pickId(data, known.sessions));
      return;
    case 6: {
      auto benchmarks = request.initAddBenchmark().initBenchmarks(pickCount(data) % 5);
      for (auto benchmark : benchmarks) fillBenchmark(data, benchmark);
      return;
    }
    case 7: {
      auto parameter = request.initSendSessionParameter();
      parameter.setSessionId(data.ConsumeBool() ? 0 : pickId(data, known.sessions));
      parameter.setKey(pickText(data, kParameterKeys));
      parameter.setValue(data.ConsumeRandomLengthString(24));
      return;
    }
    case 8:
      request.initKeepAlive();
      return;
    case 9: {
      auto registration = request.initRegisterWorker();
      registration.setEndpoint(data.ConsumeBool() ? std::string("tcp://127.0.0.1:7000")
                                                  : data.ConsumeRandomLengthString(48));
      registration.setSlots(pickSmall32(data));
      registration.setMaxSessions(pickSmall32(data));
      fillTexts(data, registration.initSessionTypes(pickCount(data)), kSessionTypes);
      registration.setVersion(data.ConsumeRandomLengthString(16));
      registration.setHostname(data.ConsumeRandomLengthString(16));
      registration.setPid(data.ConsumeIntegral<std::uint32_t>());
      registration.setNesting(data.ConsumeBool());
      // A well-formed pass key mostly (else registration stops there); a
      // token, sometimes.
      registration.setPassKey(asData(data.ConsumeBytesAsString(
          data.ConsumeIntegralInRange<int>(0, 7) == 0 ? 3 : kPassKeyBytes)));
      if (data.ConsumeBool()) registration.setToken(asData(pickSecret(data)));
      fillUnderlying(data, known, registration.initUnderlying(pickCount(data) % 6));
      return;
    }
    case 10:
      request.initListCluster();
      return;
    case 11: {
      auto place = request.initPlace();
      place.setSessionType(pickText(data, kSessionTypes));
      fillTexts(data, place.initAvoid(pickCount(data) % 4), std::array{"tcp://127.0.0.1:7000"});
      return;
    }
    case 12:
      fillSpec(data, known, request.initCreateWorker().initSpec());
      return;
    case 13:
      request.initReleaseWorker().setWorkerId(pickId(data, known.workers));
      return;
    case 14:
      request.initListUnderlying();
      return;
    case 15:
      fillExperimentSpec(data, request.initOpenExperiment().initSpec());
      return;
    case 16:
      request.initCloseExperiment().setName(pickText(data, kExperiments));
      return;
    default:
      request.initGetExperiment().setName(pickText(data, kExperiments));
      return;
  }
}

}  // namespace

void buildEnvelope(FuzzedDataProvider& data, const KnownIds& known,
                   capnp::MessageBuilder& message) {
  auto envelope = message.initRoot<wire::Envelope>();
  envelope.setProtocolVersion(data.ConsumeIntegralInRange<int>(0, 15) == 0
                                  ? data.ConsumeIntegral<std::uint16_t>()
                                  : wire::PROTOCOL_VERSION);
  envelope.setRequestId(data.ConsumeIntegral<std::uint64_t>());
  envelope.setTimeoutMs(data.ConsumeBool() ? 0 : pickSmall32(data));
  envelope.setClientSecret(asData(pickSecret(data)));
  if (data.ConsumeIntegralInRange<int>(0, 3) == 0) {
    // A client pass (common/security/identity.h): one no worker made, or malformed.
    envelope.setClientId(data.ConsumeIntegral<std::uint64_t>());
    envelope.setClientPass(
        asData(data.ConsumeBytesAsString(data.ConsumeBool() ? kClientPassBytes : 5)));
  }
  envelope.setTarget(data.ConsumeBool() ? 0 : pickId(data, known.workers));
  envelope.setExperiment(pickText(data, kExperiments));
  envelope.setExperimentKey(asData(pickSecret(data)));
  if (std::string key = pickSecret(data); !key.empty()) {
    envelope.setExperimentPass(asData(experimentPass(keyDigest(key), kFuzzHost)));
  }
  switch (data.ConsumeIntegralInRange<int>(0, 11)) {
    case 0: {
      auto heartbeat = envelope.initHeartbeat();
      heartbeat.setWorkerId(pickId(data, known.workers));
      fillLoad(data, heartbeat.initLoad());
      fillUnderlying(data, known, heartbeat.initUnderlying(pickCount(data) % 6));
      return;
    }
    case 1: {
      auto error = envelope.initReply().initError();
      error.setCode(static_cast<wire::ErrorCode>(data.ConsumeIntegralInRange<int>(0, 12)));
      error.setMessage(data.ConsumeRandomLengthString(32));
      return;
    }
    case 2:
      envelope.initReply().initWorkerCreated().setWorkerId(pickId(data, known.workers));
      return;
    case 3:
      envelope.initDisconnect().setMessage(data.ConsumeRandomLengthString(16));
      return;
    default:
      fillRequest(data, known, envelope.initRequest());
      return;
  }
}

}  // namespace kiln::fuzz
