// Session restore (client/session_restore.cpp) against a fake cluster
// (fake_cluster.h): what a lost session's replay sends, in which order,
// where, and what the user sees when it cannot be done.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include <kiln/client/client.h>
#include "client/channel.h"
#include "tests/client/fake_cluster.h"

namespace kiln::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kA = "tcp://a.fake:7800";
constexpr const char* kB = "tcp://b.fake:7800";
constexpr const char* kC = "tcp://c.fake:7800";

class SessionRestoreTest : public ::testing::Test {
 protected:
  // Workers are placed in the order they were added: the first session
  // lands on A.
  std::unique_ptr<Client> connect(ClientOptions options = {}) {
    options.coordinator = fake::FakeCluster::kCoordinator;
    options.requestTimeout = std::chrono::milliseconds(300);
    options.fingerprintEvery = 2;
    auto client = Client::connect(std::move(options), cluster_.channels());
    EXPECT_TRUE(client.ok()) << client.status().toString();
    return client.ok() ? std::move(client).value() : nullptr;
  }

  std::unique_ptr<Session> start(Client& client, const std::string& type = "counter") {
    auto session = client.startSession({.sessionType = type, .benchmark = "bench://crc32"});
    EXPECT_TRUE(session.ok()) << session.status().toString();
    return session.ok() ? std::move(session).value() : nullptr;
  }

  // A session started on the first worker with `actions` stepped, one per step.
  std::unique_ptr<Session> steppedSession(Client& client, std::initializer_list<int> actions) {
    auto session = start(client);
    for (int action : actions) {
      if (!session) break;
      auto stepped = session->step({Value(action)}, std::vector<std::uint32_t>{});
      EXPECT_TRUE(stepped.ok()) << stepped.status().toString();
    }
    return session;
  }

  static std::int64_t stateOf(Session& session) {
    auto stepped = session.step({}, std::vector<std::string>{"state"});
    EXPECT_TRUE(stepped.ok()) << stepped.status().toString();
    return stepped.ok() ? stepped->observations.at(0).as<std::int64_t>() : 0;
  }

  fake::FakeCluster cluster_;  // outlives every client below
};

TEST_F(SessionRestoreTest, ReplaysParametersAndStepsInOrderOnAnotherWorker) {
  auto& a = cluster_.addWorker(kA);
  auto& b = cluster_.addWorker(kB);
  auto client = connect();
  auto session = start(*client);
  ASSERT_TRUE(session);
  ASSERT_EQ(session->endpoint(), kA);
  ASSERT_TRUE(session->setParameter("p", "1").ok());
  ASSERT_TRUE(session->step({Value(1)}, std::vector<std::uint32_t>{}).ok());
  ASSERT_TRUE(session->step({Value(2), Value(3)}, std::vector<std::uint32_t>{}).ok());
  ASSERT_TRUE(session->setParameter("q", "2").ok());
  ASSERT_TRUE(session->step({Value(4)}, std::vector<std::uint32_t>{}).ok());

  a.alive = false;
  auto stepped = session->step({Value(5)}, std::vector<std::string>{"state", "steps"});
  ASSERT_TRUE(stepped.ok()) << stepped.status().toString();

  EXPECT_EQ(session->endpoint(), kB);
  EXPECT_EQ(session->restores(), 1u);
  EXPECT_EQ(client->restoredSessions(), 1u);
  // The fresh session saw the whole history, in its original interleaving,
  // then the step that found the loss.
  EXPECT_THAT(b.log, ElementsAre("start bench://crc32", "param p=1", "step 1", "step 2,3",
                                 "param q=2", "step 4", "step 5"));
  const std::int64_t expected =
      fake::FakeWorker::stateAfter({"p=1", "1", "2", "3", "q=2", "4", "5"});
  EXPECT_EQ(stepped->observations.at(0).as<std::int64_t>(), expected);
  EXPECT_EQ(stepped->observations.at(1).as<std::int64_t>(), 5);
  // Placement was asked to avoid the dead worker.
  ASSERT_FALSE(cluster_.coordinator().avoided.empty());
  EXPECT_THAT(cluster_.coordinator().avoided.back(), ElementsAre(kA));
  // The history is the user's steps alone (the fingerprint fetched every
  // second step is no action).
  EXPECT_EQ(session->history().steps.size(), 4u);
  EXPECT_TRUE(session->history().fingerprint.has_value());
}

TEST_F(SessionRestoreTest, StepsInFlightWhenTheWorkerDiesAreSentAgainInOrder) {
  auto& a = cluster_.addWorker(kA);
  auto& b = cluster_.addWorker(kB);
  auto client = connect();
  auto session = start(*client);
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->step({Value(1)}, std::vector<std::uint32_t>{}).ok());
  a.answering = false;  // takes the next steps, answers none, then dies
  auto second = session->sendStep({Value(2)}, {});
  auto third = session->sendStep({Value(3)}, {});
  ASSERT_TRUE(second.ok() && third.ok());
  a.alive = false;

  ASSERT_TRUE(session->awaitStep(*second).ok());
  auto last = session->awaitStep(*third);
  ASSERT_TRUE(last.ok()) << last.status().toString();
  EXPECT_THAT(b.log, ElementsAre("start bench://crc32", "step 1", "step 2", "step 3"));
  EXPECT_EQ(session->restores(), 1u);
  EXPECT_EQ(stateOf(*session), fake::FakeWorker::stateAfter({"1", "2", "3"}));
}

TEST_F(SessionRestoreTest, AStuckWorkerThatLeftTheClusterIsALoss) {
  auto& a = cluster_.addWorker(kA);
  auto& b = cluster_.addWorker(kB);
  auto client = connect();
  auto session = start(*client);
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->step({Value(7)}, std::vector<std::uint32_t>{}).ok());
  // Its connection stays up, it answers nothing, its heartbeats stopped.
  a.answering = false;
  cluster_.coordinator().delisted.insert(kA);
  auto stepped = session->step({Value(8)}, std::vector<std::uint32_t>{});
  ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
  EXPECT_EQ(session->endpoint(), kB);
  EXPECT_THAT(b.log, ElementsAre("start bench://crc32", "step 7", "step 8"));
}

TEST_F(SessionRestoreTest, AStuckWorkerStillListedIsATimeoutNotARestore) {
  auto& a = cluster_.addWorker(kA);
  auto& b = cluster_.addWorker(kB);
  auto client = connect();
  auto session = start(*client);
  ASSERT_TRUE(session);
  a.answering = false;
  auto stepped = session->step({Value(1)}, std::vector<std::uint32_t>{});
  ASSERT_FALSE(stepped.ok());
  EXPECT_EQ(stepped.status().code(), ErrorCode::kTimeout);
  EXPECT_EQ(session->restores(), 0u);
  EXPECT_TRUE(b.log.empty());
}

TEST_F(SessionRestoreTest, AWorkerThatForgotTheSessionMayHostItsRestore) {
  // An isolating nesting host restarts an experiment's crashed child: the
  // host is alive, so it is not avoided.
  auto& a = cluster_.addWorker(kA);
  auto client = connect();
  auto session = start(*client);
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->step({Value(3)}, std::vector<std::uint32_t>{}).ok());
  a.forgetSessions();
  auto stepped = session->step({Value(4)}, std::vector<std::string>{"state"});
  ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
  EXPECT_EQ(session->endpoint(), kA);
  EXPECT_TRUE(cluster_.coordinator().avoided.back().empty());
  EXPECT_EQ(stepped->observations.at(0).as<std::int64_t>(),
            fake::FakeWorker::stateAfter({"3", "4"}));
  EXPECT_EQ(a.liveSessions(), 1u);
}

TEST_F(SessionRestoreTest, AReplayThatDivergesOnceIsTriedOnAFreshSession) {
  auto& a = cluster_.addWorker(kA);
  auto& b = cluster_.addWorker(kB);
  b.salt = 99;
  b.saltedSessions = 1;  // its first session disagrees, the next does not
  auto client = connect();
  auto session = steppedSession(*client, {1, 2});
  ASSERT_TRUE(session);
  a.alive = false;
  auto stepped = session->step({Value(3)}, std::vector<std::uint32_t>{});
  ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
  EXPECT_EQ(session->endpoint(), kB);
  // The diverged session was ended; the second replay was adopted.
  EXPECT_THAT(b.log, ElementsAre("start bench://crc32", "step 1", "step 2", "end",
                                 "start bench://crc32", "step 1", "step 2", "step 3"));
  EXPECT_EQ(b.liveSessions(), 1u);
}

TEST_F(SessionRestoreTest, AReplayThatKeepsDivergingFailsAndSaysSo) {
  auto& a = cluster_.addWorker(kA);
  auto& b = cluster_.addWorker(kB);
  b.salt = 5;
  auto client = connect();
  auto session = steppedSession(*client, {1, 2});
  ASSERT_TRUE(session);
  a.alive = false;
  auto stepped = session->step({Value(3)}, std::vector<std::uint32_t>{});
  ASSERT_FALSE(stepped.ok());
  EXPECT_EQ(stepped.status().code(), ErrorCode::kDisconnected);
  EXPECT_THAT(stepped.status().message(), HasSubstr("diverged"));
  EXPECT_THAT(stepped.status().message(), HasSubstr("state after 2 steps"));
  EXPECT_EQ(b.liveSessions(), 0u);  // both fresh sessions were ended
  EXPECT_EQ(session->restores(), 0u);
}

TEST_F(SessionRestoreTest, AStepTheReplayRefusesEndsTheEpisode) {
  auto& a = cluster_.addWorker(kA);
  auto& b = cluster_.addWorker(kB);
  b.refuse = 2;
  auto client = connect();
  auto session = steppedSession(*client, {1, 2});
  ASSERT_TRUE(session);
  a.alive = false;
  auto stepped = session->step({Value(3)}, std::vector<std::uint32_t>{});
  ASSERT_FALSE(stepped.ok());
  EXPECT_EQ(stepped.status().code(), ErrorCode::kCompileError);
  EXPECT_THAT(stepped.status().message(), HasSubstr("could not be restored"));
  EXPECT_THAT(stepped.status().message(), HasSubstr("refused action 2"));
  EXPECT_TRUE(session->endedInRestore());
  EXPECT_TRUE(session->ended());
  // Final: no other worker is tried, and the session stays over.
  EXPECT_THAT(b.log, ElementsAre("start bench://crc32", "step 1", "step 2"));
  auto after = session->step({Value(4)}, std::vector<std::uint32_t>{});
  EXPECT_EQ(after.status().code(), ErrorCode::kNotFound);
}

TEST_F(SessionRestoreTest, ASessionTypeThatCannotBeReplayedIsReportedLost) {
  auto& a = cluster_.addWorker(kA);
  auto& b = cluster_.addWorker(kB);
  auto client = connect();
  auto session = start(*client, "plain");
  ASSERT_TRUE(session);
  a.alive = false;
  auto stepped = session->step({Value(1)}, std::vector<std::uint32_t>{});
  ASSERT_FALSE(stepped.ok());
  EXPECT_EQ(stepped.status().code(), ErrorCode::kDisconnected);
  EXPECT_THAT(stepped.status().message(), HasSubstr("cannot be replayed elsewhere"));
  EXPECT_THAT(b.log, ::testing::Not(::testing::Contains(HasSubstr("start"))));
}

TEST_F(SessionRestoreTest, RestoreCanBeTurnedOff) {
  auto& a = cluster_.addWorker(kA);
  cluster_.addWorker(kB);
  auto client = connect({.restoreLostSessions = false});
  auto session = start(*client);
  ASSERT_TRUE(session);
  a.alive = false;
  auto stepped = session->step({Value(1)}, std::vector<std::uint32_t>{});
  ASSERT_FALSE(stepped.ok());
  EXPECT_THAT(stepped.status().message(), HasSubstr("restoreLostSessions is off"));
}

TEST_F(SessionRestoreTest, WithNoOtherWorkerTheLossIsReportedAfterOneTimeout) {
  auto& a = cluster_.addWorker(kA);
  auto client = connect();
  auto session = start(*client);
  ASSERT_TRUE(session);
  a.alive = false;
  const auto began = std::chrono::steady_clock::now();
  auto stepped = session->step({Value(1)}, std::vector<std::uint32_t>{});
  const auto took = std::chrono::steady_clock::now() - began;
  ASSERT_FALSE(stepped.ok());
  EXPECT_EQ(stepped.status().code(), ErrorCode::kDisconnected);
  EXPECT_THAT(stepped.status().message(), HasSubstr("not restored"));
  EXPECT_THAT(stepped.status().message(), HasSubstr("no ready worker"));
  EXPECT_LT(took, std::chrono::seconds(5));  // waited out one request timeout (300 ms), no more
}

TEST_F(SessionRestoreTest, AForkCarriesItsParentsHistoryIntoItsRestore) {
  auto& a = cluster_.addWorker(kA);
  auto& b = cluster_.addWorker(kB);
  auto client = connect();
  auto parent = start(*client);
  ASSERT_TRUE(parent);
  ASSERT_TRUE(parent->step({Value(1)}, std::vector<std::uint32_t>{}).ok());
  auto child = parent->fork();
  ASSERT_TRUE(child.ok()) << child.status().toString();
  ASSERT_TRUE((*child)->step({Value(2)}, std::vector<std::uint32_t>{}).ok());
  a.alive = false;
  EXPECT_EQ(stateOf(**child), fake::FakeWorker::stateAfter({"1", "2"}));
  EXPECT_EQ(stateOf(*parent), fake::FakeWorker::stateAfter({"1"}));
  EXPECT_EQ((*child)->endpoint(), kB);
  EXPECT_EQ(parent->endpoint(), kB);
  EXPECT_EQ(b.liveSessions(), 2u);
}

TEST_F(SessionRestoreTest, KeepAlivesFollowTheRestoredSession) {
  auto& a = cluster_.addWorker(kA);
  cluster_.addWorker(kB);
  auto client = connect({.leasePeriod = std::chrono::milliseconds(5)});
  auto session = start(*client);
  ASSERT_TRUE(session);
  a.alive = false;
  ASSERT_TRUE(session->step({Value(1)}, std::vector<std::uint32_t>{}).ok());
  const std::size_t before = cluster_.keepAlives().size();
  // Bounded: a few lease periods, at most two seconds.
  std::vector<std::string> latest;
  for (int i = 0; i < 400; ++i) {
    auto pings = cluster_.keepAlives();
    if (pings.size() > before + 1) {
      latest = pings.back();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_THAT(latest, ElementsAre(kB));
}

TEST_F(SessionRestoreTest, AnUnusableWorkerAddressFailsTheStartClearly) {
  cluster_.addWorker(kA);
  cluster_.coordinator().placeAt = "no address at all";
  auto client = connect();
  auto session = client->startSession({.sessionType = "counter", .benchmark = "bench://crc32"});
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(session.status().message(), HasSubstr("not a tcp:// address"));
}

TEST_F(SessionRestoreTest, AStartWaitsForRoomWithinItsTimeout) {
  // No room for a moment (a worker started again after a crash in compile
  // work): a reset must not fail for it. Found with kiln.make: the reset
  // after a step that crashed LLVM raised "no capacity".
  cluster_.addWorker(kA);
  auto client = connect();
  cluster_.coordinator().fullFor = 2;
  auto session = client->startSession({.sessionType = "counter", .benchmark = "bench://crc32"});
  ASSERT_TRUE(session.ok()) << session.status().toString();
  EXPECT_EQ((*session)->endpoint(), kA);
}

TEST_F(SessionRestoreTest, AStartOnAClusterThatStaysFullFailsAtItsTimeout) {
  cluster_.addWorker(kA);
  auto client = connect();  // 300 ms requests
  cluster_.coordinator().fullFor = 1000;
  const auto started = std::chrono::steady_clock::now();
  auto session = client->startSession({.sessionType = "counter", .benchmark = "bench://crc32"});
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), ErrorCode::kOverloaded) << session.status().toString();
  EXPECT_GE(took, std::chrono::milliseconds(150));
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_GT(cluster_.coordinator().fullFor, 990) << "placements must back off, not spin";
}

}  // namespace
}  // namespace kiln::client
