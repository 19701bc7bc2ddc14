// Every request kind's validation in the coordinator (CoordinatorCore::handle):
// a conversation of frames from up to eight peers (workers, nesting hosts,
// clients), raw or built from fuzzer bytes, with clock advances and ticks
// between them. Properties checked: every frame the coordinator sends decodes,
// and every request is answered with its own request id.
#include <capnp/message.h>

#include <cstdio>
#include <cstdlib>

#include "common/transport/frame.h"
#include "coordinator/coordinator_core.h"
#include "tests/fuzz/envelope_builder.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_coordinator: property violated: %s\n", what);
    std::abort();
  }
}

// Checks what the coordinator sent and learns the ids it hands out, so that
// later heartbeats and requests can name them.
void inspect(std::vector<kiln::Outgoing>& out, kiln::fuzz::KnownIds& known) {
  for (kiln::Outgoing& outgoing : out) {
    auto frame = kiln::InboundMessage::decode(outgoing.frame, kiln::FrameLimits{});
    require(frame.ok(), "the coordinator sent a frame that does not decode");
    auto envelope = frame->envelope();
    if (envelope.isReply() && envelope.getReply().isRegistered()) {
      known.workers.push_back(envelope.getReply().getRegistered().getWorkerId());
    }
    if (envelope.isRequest() && envelope.getRequest().isCreateWorker()) {
      known.workers.push_back(envelope.getRequest().getCreateWorker().getSpec().getWorkerId());
    }
  }
  if (known.workers.size() > 64)
    known.workers.erase(known.workers.begin(), known.workers.end() - 64);
}

bool answered(const std::vector<kiln::Outgoing>& out, const std::string& peer,
              std::uint64_t requestId) {
  for (const kiln::Outgoing& outgoing : out) {
    if (outgoing.routingId != peer) continue;
    auto frame = kiln::InboundMessage::decode(outgoing.frame, kiln::FrameLimits{});
    if (frame.ok() && frame->envelope().isReply() &&
        frame->envelope().getRequestId() == requestId) {
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kiln::FakeClock clock;
  kiln::CoordinatorConfig config;
  config.heartbeatInterval = std::chrono::milliseconds(100);
  config.experimentLease = std::chrono::seconds(2);
  kiln::CoordinatorCore core(config, clock, kiln::makeNullLogger("fuzz"));
  kiln::fuzz::KnownIds known;
  kiln::fuzz::RecordReader records(data, size);
  while (auto record = records.next()) {
    std::vector<kiln::Outgoing> out;
    if (record->kind == kiln::fuzz::RecordKind::kTick) {
      clock.advance(std::chrono::milliseconds(kiln::fuzz::tickMillis(record->payload) % 60000));
      core.tick(out);
      inspect(out, known);
      continue;
    }
    kiln::Result<kiln::InboundMessage> message = kiln::invalidArgument("unset");
    if (record->kind == kiln::fuzz::RecordKind::kRawFrame) {
      message = kiln::InboundMessage::decode(record->payload.data(), record->payload.size(),
                                             config.frames);
    } else {
      FuzzedDataProvider provider(reinterpret_cast<const std::uint8_t*>(record->payload.data()),
                                  record->payload.size());
      capnp::MallocMessageBuilder builder;
      kiln::fuzz::buildEnvelope(provider, known, builder);
      message = kiln::InboundMessage::decode(kiln::encodeFrame(builder), config.frames);
      require(message.ok(), "a built envelope does not decode");
    }
    if (!message.ok()) continue;  // the server answers these itself
    std::string peer = "peer-" + std::to_string(record->peer);
    core.handle(peer, *message, out);
    inspect(out, known);
    auto envelope = message->envelope();
    bool isRequest = false;
    std::uint64_t requestId = 0;
    try {
      isRequest = envelope.isRequest();
      requestId = envelope.getRequestId();
    } catch (const kj::Exception&) {
    }
    if (isRequest) require(answered(out, peer, requestId), "a request got no reply");
  }
  return 0;
}
