// SessionHost without sockets: a fake executor that holds tasks until the test
// releases them, a fake clock, and a reply sink that records what was sent.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <deque>
#include <functional>

#include "tests/worker/host_harness.h"
#include "worker/noop_session.h"

namespace kiln {
namespace {

using testsupport::HostHarness;

class SessionHostTest : public HostHarness {
 protected:
  SessionHostTest() : HostHarness(limits()) {
    types_.add<NoopSession>("noop");
    EXPECT_TRUE(types_.start(resources_).ok());
  }

  static HostLimits limits() {
    HostLimits l;
    l.maxSessions = 3;
    l.leaseTimeout = std::chrono::seconds(10);
    l.inlineStepBudget = std::chrono::milliseconds(20);
    return l;
  }

  // Sends a request built by `fill` and returns the decoded reply after all
  // work ran (or the last reply sent so far if `run` is false).
  wire::Reply::Reader call(const std::function<void(wire::Request::Builder)>& fill,
                           std::uint64_t client = 1, std::uint32_t timeoutMs = 0, bool run = true) {
    send(fill, client, timeoutMs);
    if (run) drain();
    return lastReply();
  }

  void drain() { runPool(); }

  std::uint64_t start(std::uint64_t client = 1) {
    auto reply = call(
        [](wire::Request::Builder r) {
          auto s = r.initStartSession();
          s.setSessionType("noop");
          s.initBenchmark().setUri("benchmark://test/a");
        },
        client);
    EXPECT_TRUE(reply.isSessionStarted());
    return reply.getSessionStarted().getSessionId();
  }

  wire::Reply::Reader step(std::uint64_t session, std::int64_t action, std::uint32_t observation,
                           std::uint64_t client = 1, bool run = true) {
    return call(
        [&](wire::Request::Builder r) {
          auto s = r.initStep();
          s.setSessionId(session);
          toWire(Value(action), s.initActions(1)[0]);
          s.initObservationSpaces(1).set(0, observation);
        },
        client, 0, run);
  }
};

// A cache bound is the whole worker's: lowering it lowers it for every
// client of the worker. The operator decides whether clients may.
TEST_F(SessionHostTest, SettingsEverySessionSharesNeedTheOperatorsLeave) {
  auto parameter = [&](SessionHost& host, const std::string& key, const std::string& value) {
    send(host, [&](wire::Request::Builder r) {
      auto p = r.initSendSessionParameter();
      p.setKey(key);
      p.setValue(value);
    });
    return errorOf(lastReply());
  };
  for (const char* setter : {"set_max_size_in_bytes", "evict_to_capacity"}) {
    Status refused = parameter(host_, std::string("service.benchmark_cache.") + setter, "4096");
    EXPECT_EQ(refused.code(), ErrorCode::kPermissionDenied) << refused.toString();
    EXPECT_NE(refused.message().find("--allow-client-tuning"), std::string::npos);
  }
  EXPECT_EQ(cache_.maxSizeInBytes(), std::uint64_t{1} << 20);
  EXPECT_TRUE(parameter(host_, "service.benchmark_cache.get_counters", "").ok());

  HostLimits allowed = limits();
  allowed.clientTuning = true;
  SessionHost tunable(types_, cache_, allowed, clock_, executor_, sink_, mailbox_,
                      makeNullLogger("t"));
  EXPECT_TRUE(parameter(tunable, "service.benchmark_cache.set_max_size_in_bytes", "4096").ok());
  EXPECT_EQ(cache_.maxSizeInBytes(), 4096u);
}

TEST_F(SessionHostTest, StartStepForkEnd) {
  std::uint64_t id = start();
  auto stepped = step(id, 5, 0);
  ASSERT_TRUE(stepped.isStepped()) << errorOf(stepped).toString();
  EXPECT_EQ(stepped.getStepped().getObservations()[0].getInt64(), 5);
  auto forked = call([&](wire::Request::Builder r) { r.initFork().setSessionId(id); });
  ASSERT_TRUE(forked.isForked());
  std::uint64_t child = forked.getForked().getSessionId();
  EXPECT_EQ(step(child, 2, 0).getStepped().getObservations()[0].getInt64(), 7);
  EXPECT_EQ(step(id, 0, 0).getStepped().getObservations()[0].getInt64(), 5);
  auto ended = call([&](wire::Request::Builder r) { r.initEndSession().setSessionId(id); });
  EXPECT_TRUE(ended.isEnded());
  EXPECT_EQ(host_.load().liveSessions, 1u);
  EXPECT_EQ(errorOf(step(id, 1, 0)).code(), ErrorCode::kNotFound);
}

TEST_F(SessionHostTest, EndOfEpisodeAndNoEffectAreReported) {
  std::uint64_t id = start();
  auto noEffect = step(id, NoopSession::kNoEffectAction, 0).getStepped();
  EXPECT_TRUE(noEffect.getActionHadNoEffect());
  auto end = step(id, NoopSession::kEndAction, 1).getStepped();
  EXPECT_TRUE(end.getEndOfEpisode());
}

TEST_F(SessionHostTest, BadRequestsGetClearErrorsAndChangeNothing) {
  std::uint64_t id = start();
  Status outOfRange = errorOf(step(id, 99, 0));
  EXPECT_EQ(outOfRange.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(outOfRange.message().find("out of range"), std::string::npos);
  Status unknownObservation = errorOf(step(id, 1, 42));
  EXPECT_NE(unknownObservation.message().find("observation space 42 does not exist"),
            std::string::npos);
  EXPECT_EQ(errorOf(step(12345, 1, 0)).code(), ErrorCode::kNotFound);
  // Another client's session is answered as an id that never existed: the
  // answer does not confirm that it does (issue 48).
  Status stranger = errorOf(step(id, 1, 0, /*client=*/2));
  EXPECT_EQ(stranger.code(), ErrorCode::kNotFound);
  Status never = errorOf(step(id ^ 1, 1, 0, /*client=*/2));
  EXPECT_EQ(stranger.message(), fmt::format("session {:x} does not exist on this worker (ended, "
                                            "expired, or never started here)",
                                            id));
  EXPECT_EQ(never.message(), fmt::format("session {:x} does not exist on this worker (ended, "
                                         "expired, or never started here)",
                                         id ^ 1));
  auto unknownType =
      call([](wire::Request::Builder r) { r.initStartSession().setSessionType("gcc"); });
  EXPECT_EQ(errorOf(unknownType).code(), ErrorCode::kNotFound);
  // The session is untouched by all of the above.
  EXPECT_EQ(step(id, 0, 1).getStepped().getObservations()[0].getInt64(), 1);
}

// A session type answers an unknown key with not found; on the wire that
// would say the session is gone, and a client would replay it under a new id
// (issue 48). The worker answers invalid argument and keeps the session.
TEST_F(SessionHostTest, AnUnknownSessionParameterIsInvalidAndTheSessionStays) {
  std::uint64_t id = start();
  Status unknown = errorOf(call([&](wire::Request::Builder r) {
    auto parameter = r.initSendSessionParameter();
    parameter.setSessionId(id);
    parameter.setKey("noop.mistyped");
    parameter.setValue("1");
  }));
  EXPECT_EQ(unknown.code(), ErrorCode::kInvalidArgument) << unknown.toString();
  EXPECT_NE(unknown.message().find("'noop.mistyped'"), std::string::npos) << unknown.toString();
  EXPECT_EQ(host_.load().liveSessions, 1u);
  EXPECT_EQ(step(id, 0, 1).getStepped().getObservations()[0].getInt64(), 1);
}

TEST_F(SessionHostTest, SessionLimitIsARetryableOverload) {
  start();
  start();
  start();
  auto full = call([](wire::Request::Builder r) {
    auto s = r.initStartSession();
    s.setSessionType("noop");
    s.initBenchmark().setUri("x");
  });
  EXPECT_EQ(errorOf(full).code(), ErrorCode::kOverloaded);
}

TEST_F(SessionHostTest, RequestsOfOneSessionRunInOrderNeverTogether) {
  std::uint64_t id = start();
  step(id, 3, 0, 1, /*run=*/false);
  step(id, 4, 0, 1, /*run=*/false);
  EXPECT_EQ(executor_.tasks.size(), 1u);  // the second waits on the strand
  drain();
  drain();
  ASSERT_GE(sink_.replies.size(), 2u);
  EXPECT_EQ(sink_.replies.back().envelope().getReply().getStepped().getObservations()[0].getInt64(),
            7);
}

TEST_F(SessionHostTest, OverrunningStepTimesOutAndRetiresItsSession) {
  std::uint64_t id = start();
  std::size_t before = sink_.replies.size();
  call(
      [&](wire::Request::Builder r) {
        auto s = r.initStep();
        s.setSessionId(id);
        toWire(Value(std::int64_t{1}), s.initActions(1)[0]);
      },
      1, /*timeoutMs=*/100, /*run=*/false);
  clock_.advance(std::chrono::milliseconds(150));
  host_.tick();
  ASSERT_EQ(sink_.replies.size(), before + 1);
  EXPECT_EQ(errorOf(sink_.replies.back().envelope().getReply()).code(), ErrorCode::kTimeout);
  drain();  // the late result is dropped, not sent
  EXPECT_EQ(sink_.replies.size(), before + 1);
  EXPECT_EQ(errorOf(step(id, 1, 0)).code(), ErrorCode::kNotFound);
}

TEST_F(SessionHostTest, SilentClientsSessionsEndWhenTheLeaseRunsOut) {
  start(/*client=*/7);
  std::uint64_t kept = start(/*client=*/8);
  clock_.advance(std::chrono::seconds(6));
  step(kept, 1, 0, 8);  // client 8 is alive
  clock_.advance(std::chrono::seconds(6));
  host_.tick();
  EXPECT_EQ(host_.load().liveSessions, 1u);
  EXPECT_TRUE(step(kept, 1, 0, 8).isStepped());
}

TEST_F(SessionHostTest, ACutOffWorkerDropsTheSessionsOfClientsSilentSinceAndSaysWhy) {
  std::uint64_t silent = start(/*client=*/7);
  std::uint64_t kept = start(/*client=*/8);
  clock_.advance(std::chrono::seconds(2));
  const TimePoint cut = clock_.now();
  clock_.advance(std::chrono::seconds(1));
  step(kept, 1, 0, 8);  // client 8 still reaches this worker
  EXPECT_EQ(host_.dropSessionsOfClientsSilentSince(cut, "cut off"), 1u);
  EXPECT_EQ(host_.load().liveSessions, 1u);
  EXPECT_TRUE(step(kept, 1, 0, 8).isStepped());
  // A late step for the dropped copy is refused, with the reason.
  Status refused = errorOf(step(silent, 1, 0, 7));
  EXPECT_EQ(refused.code(), ErrorCode::kNotFound);
  EXPECT_NE(refused.message().find("was dropped by this worker: cut off"), std::string::npos)
      << refused.toString();
}

TEST_F(SessionHostTest, WorkerParametersReachTheBenchmarkCache) {
  // (Setters need the operator's leave: SettingsEverySessionSharesNeedTheOperatorsLeave.)
  auto reply = call([](wire::Request::Builder r) {
    auto p = r.initSendSessionParameter();
    p.setKey("service.benchmark_cache.get_max_size_in_bytes");
  });
  ASSERT_TRUE(reply.isParameterReply());
  EXPECT_EQ(std::string(reply.getParameterReply().getReply().cStr()),
            std::to_string(cache_.maxSizeInBytes()));
}

TEST_F(SessionHostTest, InlineBenchmarkIsCachedForTheNextSession) {
  auto startWith = [&](bool inlineProgram) {
    return call([&](wire::Request::Builder r) {
      auto s = r.initStartSession();
      s.setSessionType("noop");
      auto b = s.initBenchmark();
      b.setUri("benchmark://inline/p");
      if (inlineProgram) b.setProgram(kj::StringPtr("program-bytes").asBytes());
    });
  };
  EXPECT_FALSE(startWith(true).getSessionStarted().getBenchmarkCached());
  EXPECT_TRUE(startWith(false).getSessionStarted().getBenchmarkCached());
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST_F(SessionHostTest, CheapStepsRunOnTheLoopAndCostlyOnesOnThePool) {
  // limits(): an inline budget (20 ms) no noop step exceeds even in a
  // sanitizer build; the costly step below (100 ms) exceeds it by far.
  std::uint64_t id = start();
  step(id, 1, 0);
  step(id, 1, 0);  // two timed steps on the pool
  std::size_t replies = sink_.replies.size();
  auto inlineStep = step(id, 1, 0, 1, /*run=*/false);
  EXPECT_EQ(executor_.tasks.size(), 0u);  // answered without a thread hop
  ASSERT_EQ(sink_.replies.size(), replies + 1);
  EXPECT_EQ(inlineStep.getStepped().getObservations()[0].getInt64(), 3);

  // The session becomes expensive: after one costly step (measured on the
  // loop), its steps go to the pool again.
  auto busy = call([&](wire::Request::Builder r) {
    auto p = r.initSendSessionParameter();
    p.setSessionId(id);
    p.setKey("noop.busy_us");
    p.setValue("100000");
  });
  ASSERT_TRUE(busy.isParameterReply()) << errorOf(busy).toString();
  step(id, 1, 0, 1, /*run=*/false);
  EXPECT_EQ(executor_.tasks.size(), 0u);
  step(id, 1, 0, 1, /*run=*/false);
  EXPECT_EQ(executor_.tasks.size(), 1u);
  drain();
  EXPECT_EQ(sink_.replies.back().envelope().getReply().getStepped().getObservations()[0].getInt64(),
            5);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST_F(SessionHostTest, OneClientCannotTakeTheWholeWorker) {
  // limits(): 3 sessions in all; here at most 2 per client.
  HostLimits limits = SessionHostTest::limits();
  limits.maxSessionsPerClient = 2;
  SessionHost host(types_, cache_, limits, clock_, executor_, sink_, mailbox_, makeNullLogger("t"));
  // Sends a request built by `fill` from `client` to `host` and runs its work.
  auto callHost = [&](std::uint64_t client,
                      const std::function<void(wire::Request::Builder)>& fill) {
    send(host, fill, client);
    runPool(host);
    return lastReply();
  };
  auto startOn = [&](std::uint64_t client) {
    return callHost(client, [](wire::Request::Builder r) {
      auto s = r.initStartSession();
      s.setSessionType("noop");
      s.initBenchmark().setUri("benchmark://test/a");
    });
  };
  EXPECT_TRUE(startOn(1).isSessionStarted());
  auto second = startOn(1);
  ASSERT_TRUE(second.isSessionStarted());
  std::uint64_t id = second.getSessionStarted().getSessionId();
  auto third = startOn(1);
  EXPECT_EQ(errorOf(third).code(), ErrorCode::kOverloaded);
  EXPECT_NE(errorOf(third).message().find("already holds 2 sessions"), std::string::npos);
  EXPECT_NE(errorOf(third).message().find("--max-sessions-per-client"), std::string::npos);
  EXPECT_TRUE(startOn(2).isSessionStarted());  // another client is still served
  // Ending one gives the place back.
  callHost(1, [&](wire::Request::Builder r) { r.initEndSession().setSessionId(id); });
  EXPECT_EQ(host.load().liveSessions, 2u);
  // limits() caps the worker at 3 sessions: one place is free again.
  EXPECT_TRUE(startOn(1).isSessionStarted());
}

// Found by fuzz_worker_host: a StartSession whose envelope has a malformed
// `experiment` used to throw after its slot was reserved, so each such frame
// held one of the worker's session places forever.
TEST_F(SessionHostTest, MalformedStartSessionHoldsNoPlace) {
  for (int i = 0; i < 4; ++i) {  // more than limits().maxSessions
    capnp::MallocMessageBuilder builder;
    auto envelope = initEnvelope(builder, 100 + i);
    testsupport::setTestClient(envelope, 1);
    auto start = envelope.initRequest().initStartSession();
    start.setSessionType("noop");
    start.initBenchmark().setUri("benchmark://test/a");
    // A struct where the schema has text: `experiment` is the second pointer
    // (after clientSecret).
    wire::Envelope::Builder raw = envelope;
    capnp::AnyStruct::Builder(kj::mv(raw)).getPointerSection()[1].initAs<wire::Load>();
    zmq::message_t frame = encodeFrame(builder);
    auto message = InboundMessage::decode(frame, FrameLimits{});
    ASSERT_TRUE(message.ok());
    EXPECT_ANY_THROW(message->envelope().getExperiment());
    host_.handle("peer", std::move(message).value());
    drain();
    ASSERT_FALSE(sink_.replies.empty());
    EXPECT_EQ(errorOf(sink_.replies.back().envelope().getReply()).code(),
              ErrorCode::kInvalidArgument);
    EXPECT_EQ(host_.inflight(), 0u);
  }
  EXPECT_NE(start(), 0u);  // every place is still free
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// Envelope.timeoutMs is the client's: it may shorten the request's deadline,
// never extend it past the operator's longest (--max-deadline-seconds).
TEST_F(SessionHostTest, AClientsDeadlineIsCappedAtTheOperatorsLongest) {
  HostLimits limits = SessionHostTest::limits();
  limits.defaultDeadline = std::chrono::seconds(1);
  limits.maxDeadline = std::chrono::seconds(2);
  EXPECT_EQ(requestTimeout(limits, 0), std::chrono::seconds(1));
  EXPECT_EQ(requestTimeout(limits, 500), std::chrono::milliseconds(500));
  EXPECT_EQ(requestTimeout(limits, 4'000'000'000u), std::chrono::seconds(2));
  limits.maxDeadline = Duration::zero();  // unset: the default deadline is the longest
  EXPECT_EQ(requestTimeout(limits, 4'000'000'000u), std::chrono::seconds(1));
  limits.maxDeadline = std::chrono::seconds(2);

  SessionHost host(types_, cache_, limits, clock_, executor_, sink_, mailbox_, makeNullLogger("t"));
  send(host, [](wire::Request::Builder r) {
    auto s = r.initStartSession();
    s.setSessionType("noop");
    s.initBenchmark().setUri("benchmark://test/a");
  });
  runPool(host);
  std::uint64_t id = lastReply().getSessionStarted().getSessionId();
  auto stepAsking = [&](std::uint32_t timeoutMs) {
    send(
        host,
        [&](wire::Request::Builder r) {
          auto s = r.initStep();
          s.setSessionId(id);
          toWire(Value(std::int64_t{1}), s.initActions(1)[0]);
        },
        1, timeoutMs);
  };
  // 46 days asked: the request times out at the operator's 2 s, and says why.
  std::size_t before = sink_.replies.size();
  stepAsking(4'000'000'000u);
  clock_.advance(std::chrono::milliseconds(1900));
  host.tick();
  EXPECT_EQ(sink_.replies.size(), before);
  clock_.advance(std::chrono::milliseconds(200));
  host.tick();
  ASSERT_EQ(sink_.replies.size(), before + 1);
  Status timedOut = errorOf(lastReply());
  EXPECT_EQ(timedOut.code(), ErrorCode::kTimeout);
  EXPECT_NE(timedOut.message().find("longest deadline, 2000 ms"), std::string::npos)
      << timedOut.toString();
  EXPECT_NE(timedOut.message().find("--max-deadline-seconds"), std::string::npos);
  executor_.tasks.clear();
  host.clear();
}

TEST_F(SessionHostTest, WorkBehindStuckThreadsIsToldWhyAndRefusedWhenNoneIsLeft) {
  std::uint64_t id = start();
  executor_.stuck = "1 of this worker's 1 compile threads are stuck";
  step(id, 1, 0, 1, /*run=*/false);
  clock_.advance(std::chrono::seconds(301));
  host_.tick();
  Status timedOut = errorOf(lastReply());
  EXPECT_EQ(timedOut.code(), ErrorCode::kTimeout);
  EXPECT_NE(timedOut.message().find("compile threads are stuck"), std::string::npos)
      << timedOut.toString();
  executor_.tasks.clear();

  // Every thread held: new work is refused at once, not queued forever.
  executor_.accepting = false;
  auto refused = call([](wire::Request::Builder r) {
    auto s = r.initStartSession();
    s.setSessionType("noop");
    s.initBenchmark().setUri("benchmark://test/a");
  });
  EXPECT_EQ(errorOf(refused).code(), ErrorCode::kOverloaded);
  EXPECT_NE(errorOf(refused).message().find("compile threads are stuck"), std::string::npos)
      << errorOf(refused).toString();
  EXPECT_NE(errorOf(refused).message().find("another worker"), std::string::npos);
  EXPECT_TRUE(executor_.tasks.empty());
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// Sessions of a type whose footprint is a compiler process (as the mlgo
// types declare) count against the compiler quotas, per client and in all.
class CompilerQuotaTest : public testsupport::HostHarness {
 protected:
  CompilerQuotaTest() : HostHarness(limits()) {
    types_.add<NoopSession>("noop");
    types_.add<NoopSession>("compiling", SessionFootprint{.compilerProcesses = 1});
    EXPECT_TRUE(types_.start(resources_).ok());
  }
  static HostLimits limits() {
    HostLimits l;
    l.maxSessions = 100;
    l.maxSessionsPerClient = 3;
    l.maxCompilersPerClient = 2;
    l.maxCompilers = 3;
    l.maxBenchmarkBytesPerClient = 1000;
    return l;
  }
  // Starts a noop session on `bytes` of program sent inline.
  wire::Reply::Reader startInline(const std::string& uri, std::size_t bytes, std::uint64_t client) {
    send(
        [&](wire::Request::Builder r) {
          auto s = r.initStartSession();
          s.setSessionType("noop");
          auto benchmark = s.initBenchmark();
          benchmark.setUri(uri);
          benchmark.setProgram(kj::heapArray<kj::byte>(bytes));
        },
        client);
    runPool();
    return lastReply();
  }
  wire::Reply::Reader start(const std::string& type, std::uint64_t client) {
    send(
        [&](wire::Request::Builder r) {
          auto s = r.initStartSession();
          s.setSessionType(type);
          s.initBenchmark().setUri("benchmark://test/a");
        },
        client);
    runPool();
    return lastReply();
  }
  wire::Reply::Reader call(const std::function<void(wire::Request::Builder)>& fill,
                           std::uint64_t client) {
    send(fill, client);
    runPool();
    return lastReply();
  }
  static void expectRefused(wire::Reply::Reader reply, const std::string& flag) {
    Status refused = errorOf(reply);
    EXPECT_EQ(refused.code(), ErrorCode::kOverloaded) << refused.toString();
    EXPECT_NE(refused.message().find("(limit " + flag + ")"), std::string::npos)
        << refused.toString();
  }
};

TEST_F(CompilerQuotaTest, CompilerProcessesAreBoundedPerClientAndInAll) {
  ASSERT_TRUE(start("compiling", 1).isSessionStarted());
  auto second = start("compiling", 1);
  ASSERT_TRUE(second.isSessionStarted());
  const std::uint64_t secondId = second.getSessionStarted().getSessionId();
  expectRefused(start("compiling", 1), "--max-compilers-per-client");
  // A session that runs no compiler is still served, up to the session quota.
  ASSERT_TRUE(start("noop", 1).isSessionStarted());
  expectRefused(start("noop", 1), "--max-sessions-per-client");

  // The worker's own bound holds whoever asks: clients 2 and 3 share one place.
  auto third = start("compiling", 2);
  ASSERT_TRUE(third.isSessionStarted());
  expectRefused(start("compiling", 3), "--max-compilers");
  // A fork runs a compiler too.
  expectRefused(call(
                    [&](wire::Request::Builder r) {
                      r.initFork().setSessionId(third.getSessionStarted().getSessionId());
                    },
                    2),
                "--max-compilers");
  EXPECT_EQ(host_.load().liveSessions, 4u);

  // Ending a compiling session gives its place back.
  ASSERT_FALSE(call([&](wire::Request::Builder r) { r.initEndSession().setSessionId(secondId); }, 1)
                   .isError());
  EXPECT_TRUE(start("compiling", 3).isSessionStarted());
  expectRefused(start("compiling", 1), "--max-compilers");
}

// The benchmark bytes a client's sessions hold count once per program,
// however many sessions (forks) share it.
TEST_F(CompilerQuotaTest, BenchmarkBytesAreBoundedPerClient) {
  auto first = startInline("benchmark://test/six-hundred", 600, 1);
  ASSERT_TRUE(first.isSessionStarted()) << errorOf(first).toString();
  const std::uint64_t firstId = first.getSessionStarted().getSessionId();
  expectRefused(startInline("benchmark://test/another", 600, 1),
                "--max-benchmark-bytes-per-client");
  EXPECT_EQ(host_.load().liveSessions, 1u);
  // A fork shares its parent's program: nothing more is held.
  auto fork = call([&](wire::Request::Builder r) { r.initFork().setSessionId(firstId); }, 1);
  ASSERT_TRUE(fork.isForked()) << errorOf(fork).toString();
  const std::uint64_t forkId = fork.getForked().getSessionId();
  EXPECT_TRUE(startInline("benchmark://test/another", 600, 2).isSessionStarted());
  auto end = [&](std::uint64_t id) {
    return call([&](wire::Request::Builder r) { r.initEndSession().setSessionId(id); }, 1);
  };
  // Ending one of the two leaves the other holding the program.
  ASSERT_FALSE(end(firstId).isError());
  expectRefused(startInline("benchmark://test/third", 600, 1), "--max-benchmark-bytes-per-client");
  ASSERT_FALSE(end(forkId).isError());
  EXPECT_TRUE(startInline("benchmark://test/third", 600, 1).isSessionStarted());
}

}  // namespace
}  // namespace kiln
