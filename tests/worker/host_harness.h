// A SessionHost driven by hand, for the worker's unit tests: requests go in
// as decoded frames, pool work waits in a HeldExecutor until runPool(), and
// every reply is recorded.
#pragma once

#include <gtest/gtest.h>

#include <deque>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/wire_convert.h"
#include "tests/support/test_identity.h"
#include "worker/session_host.h"

namespace kiln::testsupport {

class HeldExecutor final : public Executor {
 public:
  void post(const std::string&, UniqueTask task) override { tasks.push_back(std::move(task)); }
  bool idle() const override { return tasks.empty(); }
  std::string stuckNote() const override { return stuck; }
  bool acceptsWork() const override { return accepting; }
  std::deque<UniqueTask> tasks;
  // What a pool with threads held by stuck tasks would say (TaskPool).
  std::string stuck;
  bool accepting = true;
};

class RecordingSink final : public ReplySink {
 public:
  void send(const std::string&, zmq::message_t frame) override {
    auto message = InboundMessage::decode(frame, FrameLimits{});
    ASSERT_TRUE(message.ok()) << message.status().toString();
    replies.push_back(std::move(message).value());
  }
  std::vector<InboundMessage> replies;
};

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
  void runPool(SessionHost& host) {
    while (!executor_.tasks.empty()) {
      UniqueTask task = std::move(executor_.tasks.front());
      executor_.tasks.pop_front();
      task();
    }
    std::vector<Completion> done;
    mailbox_.drain(done);
    for (Completion& c : done) host.onCompletion(std::move(c));
  }
  void runPool() { runPool(host_); }

  wire::Reply::Reader lastReply() { return sink_.replies.back().envelope().getReply(); }
  static Status errorOf(wire::Reply::Reader reply) {
    return reply.isError() ? fromWire(reply.getError()) : okStatus();
  }

  FakeClock clock_;
  BenchmarkCache cache_{1 << 20};
  ContextResources resources_;
  SessionTypeRegistry types_;
  HeldExecutor executor_;
  RecordingSink sink_;
  Mailbox<Completion> mailbox_;
  SessionHost host_;
  std::uint64_t requestId_ = 0;
};

}  // namespace kiln::testsupport
