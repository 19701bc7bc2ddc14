// Every session RPC's validation on a worker: a conversation of frames (raw
// bytes or envelopes built from fuzzer bytes) goes through decode() into a
// SessionHost serving the `noop` type, with compile work run in place and a
// fake clock that the input advances. Properties checked: every request gets
// exactly the replies the host sends (each one a decodable envelope that
// echoes a request id), and the host's books balance when the input ends.
#include <capnp/message.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>

#include "common/transport/frame.h"
#include "tests/fuzz/envelope_builder.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/support/host_fakes.h"
#include "worker/noop_session.h"
#include "worker/session_host.h"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_worker_host: property violated: %s\n", what);
    std::abort();
  }
}

// For triage (KILN_FUZZ_DEBUG=1): the envelope as text, or why it is unreadable.
std::string shown(kiln::wire::Envelope::Reader envelope) {
  try {
    return envelope.toString().flatten().cStr();
  } catch (const kj::Exception& e) {
    return std::string("(malformed: ") + e.getDescription().cStr() + ")";
  }
}

// Checks a reply and remembers the session ids it hands out.
void checkReply(const kiln::InboundMessage& reply, kiln::fuzz::KnownIds& known) {
  auto envelope = reply.envelope();
  require(envelope.isReply(), "the worker sent something other than a reply");
  auto body = envelope.getReply();
  if (body.isSessionStarted()) known.sessions.push_back(body.getSessionStarted().getSessionId());
  if (body.isForked()) known.sessions.push_back(body.getForked().getSessionId());
  if (std::getenv("KILN_FUZZ_DEBUG") != nullptr) {
    std::fprintf(stderr, "<- %s\n", shown(envelope).c_str());
  }
}

// noop.busy_us spins each step for up to 10 s: a fuzzer that found it would
// only rediscover it. The crash and hang hooks are sent: without the
// operator's --enable-fault-injection (none here) they must be refused.
bool injectsFault(const kiln::InboundMessage& message) {
  auto envelope = message.envelope();
  if (!envelope.isRequest() || !envelope.getRequest().isSendSessionParameter()) return false;
  std::string_view key = envelope.getRequest().getSendSessionParameter().getKey().cStr();
  return key == "noop.busy_us";
}

struct Fixture {
  Fixture()
      : resources{std::filesystem::temp_directory_path(), cache, kiln::makeNullLogger("fuzz"),
                  clock} {
    types.add<kiln::NoopSession>("noop");
    require(types.start(resources).ok(), "the noop type does not start");
  }
  kiln::FakeClock clock;
  kiln::BenchmarkCache cache{1 << 20};
  kiln::ContextResources resources;
  kiln::SessionTypeRegistry types;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Fixture* fixture = new Fixture();  // the types' contexts start once per process
  kiln::fuzz::KnownIds known;
  kiln::testsupport::QueuedExecutor executor;
  kiln::testsupport::CollectingSink sink;
  sink.onReply = [&known](const kiln::InboundMessage& reply) { checkReply(reply, known); };
  kiln::Mailbox<kiln::Completion> mailbox;
  kiln::HostLimits limits;
  limits.maxSessions = 8;
  limits.maxSessionsPerClient = 4;
  limits.maxBenchmarkBytes = 4096;
  kiln::BenchmarkCache cache{1 << 16};  // per input, so that runs do not depend on each other
  auto host =
      std::make_unique<kiln::SessionHost>(fixture->types, cache, limits, fixture->clock, executor,
                                          sink, mailbox, kiln::makeNullLogger("fuzz"));
  static const bool debug = std::getenv("KILN_FUZZ_DEBUG") != nullptr;  // triage: print requests
  kiln::fuzz::RecordReader records(data, size);
  while (auto record = records.next()) {
    if (record->kind == kiln::fuzz::RecordKind::kTick) {
      // At most ten minutes at a time: far past every deadline and lease.
      fixture->clock.advance(
          std::chrono::milliseconds(kiln::fuzz::tickMillis(record->payload) % (10 * 60 * 1000)));
      host->tick();
      continue;
    }
    kiln::Result<kiln::InboundMessage> message = kiln::invalidArgument("unset");
    if (record->kind == kiln::fuzz::RecordKind::kRawFrame) {
      message = kiln::InboundMessage::decode(record->payload.data(), record->payload.size(),
                                             kiln::FrameLimits{});
    } else {
      FuzzedDataProvider provider(reinterpret_cast<const std::uint8_t*>(record->payload.data()),
                                  record->payload.size());
      capnp::MallocMessageBuilder builder;
      kiln::fuzz::buildEnvelope(provider, known, builder);
      message = kiln::InboundMessage::decode(kiln::encodeFrame(builder), kiln::FrameLimits{});
      require(message.ok(), "a built envelope does not decode");
    }
    if (!message.ok()) continue;  // the server answers these itself (worker_server.cpp)
    try {
      if (injectsFault(*message)) continue;
    } catch (const kj::Exception&) {
      // A malformed key: the host must cope with it below.
    }
    if (debug) std::fprintf(stderr, "-> %s\n", shown(message->envelope()).c_str());
    std::size_t before = sink.replies.size();
    std::string peer = "peer-" + std::to_string(record->peer);
    host->handle(peer, std::move(message).value());
    // A completion may start the next request of its strand: run to quiescence.
    for (int round = 0; round < 8 && !executor.tasks.empty(); ++round) {
      kiln::testsupport::runRound(executor, mailbox, *host);
    }
    require(sink.undecodable == 0, "the worker sent a frame that does not decode");
    require(executor.tasks.empty(), "work is left after a request completed");
    require(sink.replies.size() > before, "a request got no reply");
    sink.replies.clear();  // bounded memory over a long input
  }
  require(host->inflight() == 0, "a request is still in flight at the end");
  host->clear();
  return 0;
}
