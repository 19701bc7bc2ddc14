// The link between an isolating nesting host and its child processes
// (nesting/isolation_messages.h): what a child sends its host (hello,
// replies to relay, token requests and returns, loads, released workers) and
// what the host sends a child (requests, createWorker, release, grants,
// lease refreshes, benchmarks), each through its decoder (with the default
// frame limits). Input: a first byte (bit 0: which direction; bit 1: raw
// parts or a structured message), then for raw parts up to 8 records of
// tests/fuzz/fuzz_input.h, one part each, and for a structured message
// FuzzedDataProvider bytes that pick a kind, fields of the right size or
// not, an envelope built by tests/fuzz/envelope_builder.h and a few bytes of it
// overwritten.
//
// Properties checked: decoding never throws and refuses only with
// invalid-argument; an accepted fixed-field message is exactly what its
// sender writes for the decoded values; a reply summary agrees with the
// frame it came from; a request whose frame cannot be read keeps the ids
// its answer goes to; a decoded worker spec survives toWire/fromWire.
#include <fuzzer/FuzzedDataProvider.h>

#include <capnp/message.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <variant>
#include <vector>

#include "common/transport/frame.h"
#include "common/types/underlying_wire.h"
#include "nesting/isolation_messages.h"
#include "tests/fuzz/envelope_builder.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

namespace iso = kiln::nesting::isolation;

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_isolation_link: property violated: %s\n", what);
    std::abort();
  }
}

std::string u64(std::uint64_t value) {
  std::string out;
  iso::putU64(out, value);
  return out;
}

// A field as its sender writes it, or (sometimes) one byte short or long.
std::string u64Field(FuzzedDataProvider& input) {
  std::string field = u64(input.ConsumeBool() ? input.ConsumeIntegralInRange<std::uint64_t>(0, 9)
                                              : input.ConsumeIntegral<std::uint64_t>());
  switch (input.ConsumeIntegralInRange(0, 7)) {
    case 0:
      field.pop_back();
      break;
    case 1:
      field.push_back('\0');
      break;
    default:
      break;
  }
  return field;
}

std::string envelopeFrame(FuzzedDataProvider& input) {
  capnp::MallocMessageBuilder builder;
  std::string bytes = input.ConsumeBytesAsString(input.ConsumeIntegralInRange<std::size_t>(0, 512));
  FuzzedDataProvider envelope(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  kiln::fuzz::buildEnvelope(envelope, kiln::fuzz::KnownIds{}, builder);
  zmq::message_t frame = kiln::encodeFrame(builder);
  std::string out(frame.data<char>(), frame.size());
  // A damaged child's frame: a valid message with a few bytes overwritten,
  // which reaches pointers deep inside that a raw frame rarely would.
  for (int overwrites = input.ConsumeIntegralInRange(0, 3); overwrites > 0 && !out.empty();
       --overwrites) {
    out[input.ConsumeIntegralInRange<std::size_t>(0, out.size() - 1)] =
        static_cast<char>(input.ConsumeIntegral<std::uint8_t>());
  }
  return out;
}

std::vector<std::string> structuredParts(FuzzedDataProvider& input, bool fromChild) {
  static constexpr char kChildKinds[] = {iso::kHello,     iso::kReply, iso::kAcquire,
                                         iso::kTokenBack, iso::kLoad,  iso::kReleased};
  static constexpr char kHostKinds[] = {iso::kRequest, iso::kCreate,    iso::kRelease,
                                        iso::kGrant,   iso::kKeepAlive, iso::kBenchmark};
  const char kind =
      fromChild ? input.PickValueInArray(kChildKinds) : input.PickValueInArray(kHostKinds);
  std::vector<std::string> parts{std::string(1, kind)};
  switch (kind) {
    case iso::kReply:
      parts.push_back(input.ConsumeRandomLengthString(16));
      parts.push_back(envelopeFrame(input));
      break;
    case iso::kRequest:
      parts.push_back(input.ConsumeRandomLengthString(16));
      parts.push_back(u64Field(input));
      parts.push_back(envelopeFrame(input));
      break;
    case iso::kCreate:
    case iso::kBenchmark:
      parts.push_back(envelopeFrame(input));
      break;
    case iso::kTokenBack:
    case iso::kRelease:
    case iso::kKeepAlive:
      parts.push_back(u64Field(input));
      break;
    case iso::kReleased:
      parts.push_back(u64Field(input));
      parts.push_back(u64Field(input));
      break;
    case iso::kLoad: {
      std::string records;
      for (int n = input.ConsumeIntegralInRange(0, 4) * 5; n > 0; --n) records += u64Field(input);
      parts.push_back(records);
      break;
    }
    default:
      break;
  }
  // Now and then a part too many.
  if (input.ConsumeIntegralInRange(0, 15) == 0) parts.push_back(input.ConsumeRandomLengthString(8));
  return parts;
}

using Parts = std::vector<std::string_view>;

void requireCanonical(const Parts& parts, const std::vector<std::string>& written) {
  require(parts.size() == written.size(), "an accepted message has another part count");
  for (std::size_t i = 0; i < parts.size(); ++i) {
    require(parts[i] == written[i], "an accepted message is not what its sender writes");
  }
}

void checkChildMessage(const Parts& parts) {
  auto decoded = iso::decodeChildMessage(parts, kiln::FrameLimits{});
  if (!decoded.ok()) {
    require(decoded.status().code() == kiln::ErrorCode::kInvalidArgument,
            "a refused child message is not invalid-argument");
    return;
  }
  const std::string kind(parts[0]);
  if (std::holds_alternative<iso::Hello>(*decoded) ||
      std::holds_alternative<iso::AcquireToken>(*decoded)) {
    requireCanonical(parts, {kind});
  } else if (auto* back = std::get_if<iso::TokenBack>(&*decoded)) {
    require(back->ran.count() >= 0, "a token came back with a negative run time");
    requireCanonical(parts, {kind, u64(static_cast<std::uint64_t>(back->ran.count()))});
  } else if (auto* loads = std::get_if<iso::Loads>(&*decoded)) {
    std::string records;
    for (const iso::WorkerLoad& w : loads->workers) {
      for (std::uint64_t field :
           {w.workerId, std::uint64_t{w.load.liveSessions}, std::uint64_t{w.load.busySlots},
            std::uint64_t{w.load.queuedRequests}, w.load.stepsTotal}) {
        records += u64(field);
      }
    }
    requireCanonical(parts, {kind, records});
  } else if (auto* released = std::get_if<iso::Released>(&*decoded)) {
    requireCanonical(parts, {kind, u64(released->workerId), u64(released->sessionsEnded)});
  } else if (auto* reply = std::get_if<iso::ChildReply>(&*decoded)) {
    require(parts.size() == 3 && reply->routingId == parts[1], "a reply lost its routing id");
    if (reply->summary) {
      auto frame = kiln::InboundMessage::decode(parts[2].data(), parts[2].size(), {});
      require(frame.ok() && frame->envelope().isReply() &&
                  frame->envelope().getRequestId() == reply->summary->requestId,
              "a reply summary does not come from a reply frame with its request id");
    }
  }
}

void checkHostMessage(const Parts& parts) {
  auto decoded = iso::decodeHostMessage(parts, kiln::FrameLimits{});
  if (!decoded.ok()) {
    require(decoded.status().code() == kiln::ErrorCode::kInvalidArgument,
            "a refused host message is not invalid-argument");
    return;
  }
  const std::string kind(parts[0]);
  if (std::holds_alternative<iso::GrantToken>(*decoded)) {
    requireCanonical(parts, {kind});
  } else if (auto* release = std::get_if<iso::ReleaseWorker>(&*decoded)) {
    requireCanonical(parts, {kind, u64(release->workerId)});
  } else if (auto* keepAlive = std::get_if<iso::KeepAlive>(&*decoded)) {
    requireCanonical(parts, {kind, u64(keepAlive->clientId)});
  } else if (auto* request = std::get_if<iso::ForwardedRequest>(&*decoded)) {
    require(parts.size() == 4 && request->routingId == parts[1], "a request lost its routing id");
    // What the child reads before handing the request to the worker's host.
    (void)request->message.envelope().getTarget();
    (void)request->message.envelope().getRequestId();
  } else if (auto* unreadable = std::get_if<iso::UnreadableRequest>(&*decoded)) {
    // The child answers it: it must be told whom, and to which request.
    require(parts.size() == 4 && unreadable->routingId == parts[1] &&
                parts[2] == u64(unreadable->requestId),
            "an unreadable request lost the ids it is answered with");
    require(!unreadable->why.ok(), "an unreadable request carries no reason");
  } else if (auto* create = std::get_if<iso::CreateWorker>(&*decoded)) {
    require(create->spec.weight >= 1, "a decoded worker spec has weight 0");
    capnp::MallocMessageBuilder builder;
    kiln::toWire(create->spec, builder.initRoot<kiln::wire::UnderlyingSpec>());
    kiln::UnderlyingSpec again =
        kiln::fromWire(builder.getRoot<kiln::wire::UnderlyingSpec>().asReader());
    require(
        again.workerId == create->spec.workerId && again.experiment == create->spec.experiment &&
            again.weight == create->spec.weight && again.maxSessions == create->spec.maxSessions &&
            again.sessionTypes == create->spec.sessionTypes,
        "a decoded worker spec does not survive toWire/fromWire");
  } else if (auto* add = std::get_if<iso::AddBenchmarks>(&*decoded)) {
    for (const auto& [uri, program] : add->programs) {
      require(program != nullptr, "a decoded benchmark has no bytes");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool fromChild = (data[0] & 1) != 0;
  std::vector<std::string> owned;
  if ((data[0] & 2) != 0) {
    FuzzedDataProvider input(data + 1, size - 1);
    owned = structuredParts(input, fromChild);
  } else {
    kiln::fuzz::RecordReader records(data + 1, size - 1);
    while (auto record = records.next()) {
      if (owned.size() == 8) break;
      owned.emplace_back(record->payload);
    }
  }
  Parts parts(owned.begin(), owned.end());
  if (fromChild) {
    checkChildMessage(parts);
  } else {
    checkHostMessage(parts);
  }
  return 0;
}
