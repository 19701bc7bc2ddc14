#include "nesting/isolation_messages.h"

#include "common/security/identity.h"

#include <fmt/format.h>

#include <limits>

namespace kiln::nesting::isolation {

void putU64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(value >> (8 * i)));
}

std::uint64_t getU64(std::string_view in, std::size_t at) {
  if (in.size() < at + 8) return 0;
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) {
    value |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  }
  return value;
}

namespace {

constexpr std::size_t kLoadRecordBytes = 5 * 8;

Status malformed(char kind, std::string_view what) {
  return invalidArgument(fmt::format("isolation message '{}': {}", kind, what));
}

Status expectParts(char kind, const std::vector<std::string_view>& parts, std::size_t count) {
  if (parts.size() != count) {
    return malformed(kind, fmt::format("{} parts, expected {}", parts.size(), count));
  }
  return okStatus();
}

Result<std::uint64_t> u64Field(char kind, std::string_view field) {
  if (field.size() != 8) {
    return malformed(kind, fmt::format("a field of {} bytes, expected 8", field.size()));
  }
  return getU64(field, 0);
}

Result<std::uint32_t> u32Count(char kind, std::uint64_t value) {
  if (value > std::numeric_limits<std::uint32_t>::max()) {
    return malformed(kind, fmt::format("count {} does not fit 32 bits", value));
  }
  return static_cast<std::uint32_t>(value);
}

// Everything the host reads of a reply, read here where a malformed pointer
// deep in the frame throws into a catch rather than out of the host's loop.
std::optional<ReplySummary> summarize(std::string_view frame, const FrameLimits& limits) {
  auto message = InboundMessage::decode(frame.data(), frame.size(), limits);
  if (!message.ok()) return std::nullopt;
  try {
    auto envelope = message->envelope();
    if (!envelope.isReply()) return std::nullopt;
    ReplySummary summary;
    summary.requestId = envelope.getRequestId();
    auto reply = envelope.getReply();
    if (reply.isSessionStarted()) {
      summary.kind = ReplySummary::Kind::kSessionStarted;
      summary.sessionId = reply.getSessionStarted().getSessionId();
    } else if (reply.isForked()) {
      summary.kind = ReplySummary::Kind::kForked;
      summary.sessionId = reply.getForked().getSessionId();
    }
    return summary;
  } catch (const kj::Exception&) {
    return std::nullopt;
  }
}

Result<InboundMessage> decodeFrame(char kind, std::string_view frame, const FrameLimits& limits) {
  auto message = InboundMessage::decode(frame.data(), frame.size(), limits);
  if (!message.ok()) return malformed(kind, message.status().message());
  return message;
}

Result<HostMessage> decodeCreate(std::string_view frame, const FrameLimits& limits) {
  KILN_ASSIGN_OR_RETURN(InboundMessage message, decodeFrame(kCreate, frame, limits));
  try {
    auto envelope = message.envelope();
    if (!envelope.isRequest() || !envelope.getRequest().isCreateWorker()) {
      return malformed(kCreate, "the frame is not a createWorker request");
    }
    return HostMessage(CreateWorker{fromWire(envelope.getRequest().getCreateWorker().getSpec())});
  } catch (const kj::Exception& e) {
    return malformed(kCreate, e.getDescription().cStr());
  }
}

Result<HostMessage> decodeBenchmarks(std::string_view frame, const FrameLimits& limits,
                                     const PassKey& passKey) {
  KILN_ASSIGN_OR_RETURN(InboundMessage message, decodeFrame(kBenchmark, frame, limits));
  try {
    auto envelope = message.envelope();
    if (!envelope.isRequest() || !envelope.getRequest().isAddBenchmark()) {
      return malformed(kBenchmark, "the frame is not an addBenchmark request");
    }
    AddBenchmarks add;
    add.client = clientOf(envelope, passKey);
    if (!add.client.valid()) {
      return malformed(kBenchmark, "the request carries no client secret, or no pass of this host");
    }
    for (auto benchmark : envelope.getRequest().getAddBenchmark().getBenchmarks()) {
      auto bytes = benchmark.getProgram();
      add.programs.emplace_back(benchmark.getUri().cStr(),
                                std::make_shared<const std::string>(
                                    reinterpret_cast<const char*>(bytes.begin()), bytes.size()));
    }
    return HostMessage(std::move(add));
  } catch (const kj::Exception& e) {
    return malformed(kBenchmark, e.getDescription().cStr());
  }
}

// The routing and request ids travel beside the frame, so that a frame the
// child cannot read still gets its answer.
Result<HostMessage> decodeRequest(const std::vector<std::string_view>& parts,
                                  const FrameLimits& limits) {
  KILN_RETURN_IF_ERROR(expectParts(kRequest, parts, 4));
  KILN_ASSIGN_OR_RETURN(std::uint64_t requestId, u64Field(kRequest, parts[2]));
  auto message = decodeFrame(kRequest, parts[3], limits);
  if (!message.ok()) {
    return HostMessage(UnreadableRequest{std::string(parts[1]), requestId, message.status()});
  }
  return HostMessage(ForwardedRequest{std::string(parts[1]), std::move(message).value()});
}

}  // namespace

Result<ChildMessage> decodeChildMessage(const std::vector<std::string_view>& parts,
                                        const FrameLimits& limits) {
  if (parts.empty() || parts[0].size() != 1) {
    return invalidArgument("isolation message without a one-byte kind");
  }
  const char kind = parts[0][0];
  switch (kind) {
    case kHello:
      KILN_RETURN_IF_ERROR(expectParts(kind, parts, 1));
      return ChildMessage(Hello{});
    case kReply:
      KILN_RETURN_IF_ERROR(expectParts(kind, parts, 3));
      return ChildMessage(ChildReply{std::string(parts[1]), summarize(parts[2], limits)});
    case kAcquire:
      KILN_RETURN_IF_ERROR(expectParts(kind, parts, 1));
      return ChildMessage(AcquireToken{});
    case kTokenBack: {
      KILN_RETURN_IF_ERROR(expectParts(kind, parts, 2));
      KILN_ASSIGN_OR_RETURN(std::uint64_t nanos, u64Field(kind, parts[1]));
      if (nanos > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return malformed(kind, "a negative run time");
      }
      return ChildMessage(TokenBack{std::chrono::nanoseconds(static_cast<std::int64_t>(nanos))});
    }
    case kLoad: {
      KILN_RETURN_IF_ERROR(expectParts(kind, parts, 2));
      std::string_view records = parts[1];
      if (records.size() % kLoadRecordBytes != 0) {
        return malformed(kind, fmt::format("{} bytes of load records, not a multiple of {}",
                                           records.size(), kLoadRecordBytes));
      }
      Loads loads;
      for (std::size_t at = 0; at < records.size(); at += kLoadRecordBytes) {
        WorkerLoad worker;
        worker.workerId = getU64(records, at);
        KILN_ASSIGN_OR_RETURN(worker.load.liveSessions, u32Count(kind, getU64(records, at + 8)));
        KILN_ASSIGN_OR_RETURN(worker.load.busySlots, u32Count(kind, getU64(records, at + 16)));
        KILN_ASSIGN_OR_RETURN(worker.load.queuedRequests, u32Count(kind, getU64(records, at + 24)));
        worker.load.stepsTotal = getU64(records, at + 32);
        loads.workers.push_back(worker);
      }
      return ChildMessage(std::move(loads));
    }
    case kReleased: {
      KILN_RETURN_IF_ERROR(expectParts(kind, parts, 3));
      KILN_ASSIGN_OR_RETURN(std::uint64_t worker, u64Field(kind, parts[1]));
      KILN_ASSIGN_OR_RETURN(std::uint64_t ended, u64Field(kind, parts[2]));
      KILN_ASSIGN_OR_RETURN(std::uint32_t sessions, u32Count(kind, ended));
      return ChildMessage(Released{worker, sessions});
    }
    default:
      return invalidArgument(fmt::format("unknown isolation message kind {:#04x} from a child",
                                         static_cast<unsigned char>(kind)));
  }
}

Result<HostMessage> decodeHostMessage(const std::vector<std::string_view>& parts,
                                      const FrameLimits& limits, const PassKey& passKey) {
  if (parts.empty() || parts[0].size() != 1) {
    return invalidArgument("isolation message without a one-byte kind");
  }
  const char kind = parts[0][0];
  switch (kind) {
    case kRequest:
      return decodeRequest(parts, limits);
    case kCreate:
      KILN_RETURN_IF_ERROR(expectParts(kind, parts, 2));
      return decodeCreate(parts[1], limits);
    case kRelease: {
      KILN_RETURN_IF_ERROR(expectParts(kind, parts, 2));
      KILN_ASSIGN_OR_RETURN(std::uint64_t worker, u64Field(kind, parts[1]));
      return HostMessage(ReleaseWorker{worker});
    }
    case kGrant:
      KILN_RETURN_IF_ERROR(expectParts(kind, parts, 1));
      return HostMessage(GrantToken{});
    case kKeepAlive: {
      KILN_RETURN_IF_ERROR(expectParts(kind, parts, 2));
      KILN_ASSIGN_OR_RETURN(std::uint64_t client, u64Field(kind, parts[1]));
      return HostMessage(KeepAlive{client});
    }
    case kBenchmark:
      KILN_RETURN_IF_ERROR(expectParts(kind, parts, 2));
      return decodeBenchmarks(parts[1], limits, passKey);
    case kDropSilentClients: {
      KILN_RETURN_IF_ERROR(expectParts(kind, parts, 3));
      KILN_ASSIGN_OR_RETURN(std::uint64_t nanoseconds, u64Field(kind, parts[1]));
      if (nanoseconds > static_cast<std::uint64_t>(std::chrono::nanoseconds::max().count())) {
        return invalidArgument("isolation message 'F': the silence span is out of range");
      }
      return HostMessage(DropSilentClients{
          std::chrono::nanoseconds(static_cast<std::int64_t>(nanoseconds)), std::string(parts[2])});
    }
    default:
      return invalidArgument(fmt::format("unknown isolation message kind {:#04x} from the host",
                                         static_cast<unsigned char>(kind)));
  }
}

zmq::message_t refuseOversizedReply(zmq::message_t frame, const FrameLimits& limits) {
  FrameLimits own = limits;  // the child's own reply: only its request id is read
  own.maxMessageBytes = std::numeric_limits<std::size_t>::max();
  auto message = InboundMessage::decode(frame.data(), frame.size(), own);
  if (!message.ok()) return frame;
  return encodeErrorReply(
      message->envelope().getRequestId(),
      invalidArgument(fmt::format("the reply is {} bytes, over this nesting host's limit of {} "
                                  "bytes (its operator's --max-message-bytes)",
                                  frame.size(), limits.maxMessageBytes)));
}

std::vector<std::string_view> partViews(const std::vector<zmq::message_t>& parts) {
  std::vector<std::string_view> views;
  views.reserve(parts.size());
  for (const zmq::message_t& part : parts) views.emplace_back(part.data<char>(), part.size());
  return views;
}

}  // namespace kiln::nesting::isolation
