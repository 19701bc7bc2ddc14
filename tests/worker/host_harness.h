// A SessionHost driven by hand, for the worker's unit tests: requests go in
// as decoded frames, pool work waits in a QueuedExecutor until runPool(), and
// every reply is recorded (tests/support/host_fakes.h).
#pragma once

#include <gtest/gtest.h>

#include <deque>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/base/wire_convert.h"
#include "tests/support/host_fakes.h"
#include "tests/support/test_identity.h"
#include "worker/session_host.h"

namespace kiln::testsupport {

class HostHarness : public ::testing::Test {
 protected:
  explicit HostHarness(HostLimits limits)
      : resources_{std::filesystem::temp_directory_path(), cache_, makeNullLogger("t"), clock_},
        host_(types_, cache_, limits, clock_, executor_, sink_, mailbox_, makeNullLogger("t")) {}

  // Hands `host` (host_ by default; a test may build another on the same
  // parts) a request built by `fill`, as client `client`.
  void send(SessionHost& host, const std::function<void(wire::Request::Builder)>& fill,
            std::uint64_t client = 1, std::uint32_t timeoutMs = 0) {
    capnp::MallocMessageBuilder builder;
    auto envelope = initEnvelope(builder, ++requestId_);
    setTestClient(envelope, client);
    envelope.setTimeoutMs(timeoutMs);
    fill(envelope.initRequest());
    zmq::message_t frame = encodeFrame(builder);
    host.handle("peer", InboundMessage::decode(frame, FrameLimits{}).value());
  }
  void send(const std::function<void(wire::Request::Builder)>& fill, std::uint64_t client = 1,
            std::uint32_t timeoutMs = 0) {
    send(host_, fill, client, timeoutMs);
  }

  // Runs the held pool work and delivers its completions to `host`.
  void runPool(SessionHost& host) { runRound(executor_, mailbox_, host); }
  void runPool() { runPool(host_); }

  wire::Reply::Reader lastReply() {
    EXPECT_EQ(sink_.undecodable, 0u) << "the host sent a reply that does not decode";
    return sink_.replies.back().envelope().getReply();
  }
  void TearDown() override { EXPECT_EQ(sink_.undecodable, 0u); }
  static Status errorOf(wire::Reply::Reader reply) {
    return reply.isError() ? fromWire(reply.getError()) : okStatus();
  }

  FakeClock clock_;
  BenchmarkCache cache_{1 << 20};
  ContextResources resources_;
  SessionTypeRegistry types_;
  QueuedExecutor executor_;
  CollectingSink sink_;
  Mailbox<Completion> mailbox_;
  SessionHost host_;
  std::uint64_t requestId_ = 0;
};

}  // namespace kiln::testsupport
