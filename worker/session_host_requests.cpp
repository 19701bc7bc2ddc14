// SessionHost's answers to the requests about the host rather than a
// session: its version, a type's spaces, benchmarks a client adds, and
// worker-level parameters.
#include <fmt/format.h>

#include <kiln/kit/cache_parameters.h>
#include <kiln/version.h>
#include "common/base/wire_convert.h"
#include "common/security/identity.h"
#include "worker/session_host.h"

namespace kiln {

void SessionHost::replyVersion(const std::string& routingId, std::uint64_t requestId) {
  capnp::MallocMessageBuilder builder(256);
  auto version = initEnvelope(builder, requestId).initReply().initVersion();
  version.setProtocolVersion(wire::PROTOCOL_VERSION);
  version.setServiceVersion(std::string("kiln ") + kKilnVersion);
  auto names = typeNames();
  std::string compilers;
  auto list = version.initSessionTypes(names.size());
  for (unsigned i = 0; i < names.size(); ++i) {
    list.set(i, names[i]);
    if (const auto* type = types_.find(names[i])) {
      compilers += fmt::format("{}{}: {}", i ? "; " : "", names[i], type->info.compilerVersion);
    }
  }
  version.setCompilerVersion(compilers);
  replies_.send(routingId, encodeFrame(builder));
}

void SessionHost::replySpaces(const std::string& routingId, std::uint64_t requestId,
                              const std::string& typeName) {
  const ReadySessionType* type = findType(typeName);
  if (type == nullptr) {
    return reply(routingId, requestId,
                 notFound(fmt::format("session type '{}' is not hosted here (hosted: {})", typeName,
                                      fmt::join(typeNames(), ", "))));
  }
  capnp::MallocMessageBuilder builder;
  auto spaces = initEnvelope(builder, requestId).initReply().initSpaces();
  auto actions = spaces.initActionSpaces(type->info.actionSpaces.size());
  for (unsigned i = 0; i < type->info.actionSpaces.size(); ++i) {
    toWire(type->info.actionSpaces[i], actions[i]);
  }
  auto observations = spaces.initObservationSpaces(type->info.observationSpaces.size());
  for (unsigned i = 0; i < type->info.observationSpaces.size(); ++i) {
    toWire(type->info.observationSpaces[i], observations[i]);
  }
  auto replay = spaces.initReplay();
  replay.setDeterministic(type->info.replay.deterministic);
  replay.setFingerprint(type->info.replay.fingerprint);
  replies_.send(routingId, encodeFrame(builder));
}

void SessionHost::addBenchmarks(const std::string& routingId, const InboundMessage& message,
                                ClientId client) {
  auto envelope = message.envelope();
  if (!client.valid()) return reply(routingId, envelope.getRequestId(), anonymousClient());
  for (auto benchmark : envelope.getRequest().getAddBenchmark().getBenchmarks()) {
    auto bytes = benchmark.getProgram();
    std::string uri = benchmark.getUri().cStr();
    if (uri.empty() || bytes.size() == 0) {
      return reply(routingId, envelope.getRequestId(),
                   invalidArgument("AddBenchmark needs a URI and the program bytes"));
    }
    if (bytes.size() > limits_.maxBenchmarkBytes) {
      return reply(routingId, envelope.getRequestId(),
                   invalidArgument(fmt::format("benchmark '{}' is {} bytes, over the limit of {}",
                                               uri, bytes.size(), limits_.maxBenchmarkBytes)));
    }
    // Under the client's own name: its bytes never answer another client's URI.
    cache_.insert(privateCacheKey(client, uri),
                  std::make_shared<const std::string>(reinterpret_cast<const char*>(bytes.begin()),
                                                      bytes.size()));
  }
  capnp::MallocMessageBuilder builder(64);
  initEnvelope(builder, envelope.getRequestId()).initReply().setBenchmarkAdded();
  replies_.send(routingId, encodeFrame(builder));
}

void SessionHost::handleWorkerParameter(const std::string& routingId, std::uint64_t requestId,
                                        const std::string& key, const std::string& value) {
  if (!limits_.clientTuning &&
      (isCacheSetter(kCacheParameterPrefix, key) || types_.changesSharedState(key))) {
    return reply(routingId, requestId,
                 permissionDenied(fmt::format(
                     "'{}' changes what every session of this worker shares, other clients' "
                     "too; its operator allows that with --allow-client-tuning (safe where a "
                     "process serves one experiment: kiln nest, isolated)",
                     key)));
  }
  auto answer = key.starts_with(kCacheParameterPrefix) ? handleCacheParameter(cache_, key, value)
                                                       : types_.handleContextParameter(key, value);
  if (!answer.ok()) return reply(routingId, requestId, answer.status());
  capnp::MallocMessageBuilder builder(256);
  initEnvelope(builder, requestId).initReply().initParameterReply().setReply(*answer);
  replies_.send(routingId, encodeFrame(builder));
}

}  // namespace kiln
