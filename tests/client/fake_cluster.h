// A fake cluster for the client's unit tests: a coordinator and workers that
// answer the client's requests in-process and at once, behind the client's
// channel seam (client/channel.h). Replies are real wire messages, so the
// client's own encoding, matching and decoding run as they do on a cluster;
// only the sockets and the waiting are gone. A test kills a worker, stalls
// it, makes it forget its sessions or disagree on a replay, and reads what
// each server was asked, in order.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "client/channel.h"

namespace kiln::fake {

using client::Channel;
using client::ChannelFactory;
using client::KeepAliveSender;
using client::RequestIdentity;

// A server answers one request with a whole reply frame, or with silence.
class FakeServer {
 public:
  virtual ~FakeServer() = default;
  virtual std::optional<std::string> answer(wire::Envelope::Reader request) = 0;

  bool alive = true;  // false: its process died, every connection dropped
  // What it was asked, one line per request ("start crc32", "step 3", ...).
  std::vector<std::string> log;
};

// Session type "counter" (replayable, fingerprint "state") and "plain" (not
// replayable). A session's state folds in its parameters and its actions
// (integers), in order: a replay that reorders or drops any is seen.
class FakeWorker final : public FakeServer {
 public:
  std::optional<std::string> answer(wire::Envelope::Reader request) override;

  // The state a session has after `events` (parameters "k=v" and actions),
  // in order: what the "state" observation reports.
  static std::int64_t stateAfter(const std::vector<std::string>& events, std::int64_t salt = 0);

  bool answering = true;               // false: takes requests, never replies (a stuck loop)
  std::optional<std::int64_t> refuse;  // an action it fails with a compile error
  std::int64_t salt = 0;               // nonzero: its states differ from everyone else's
  int saltedSessions = -1;             // how many sessions the salt applies to (-1: all)
  void forgetSessions() { sessions_.clear(); }  // as if its process restarted
  std::size_t liveSessions() const { return sessions_.size(); }

 private:
  struct SessionState {
    std::string type;
    std::vector<std::string> events;
    std::int64_t salt = 0;
  };
  std::map<std::uint64_t, SessionState> sessions_;
  std::uint64_t nextSessionId_ = 1;
};

class FakeCluster;

// Places sessions on the listed, live workers in turn, skipping those the
// client asks it to avoid; lists them; takes keep-alives.
class FakeCoordinator final : public FakeServer {
 public:
  explicit FakeCoordinator(FakeCluster& cluster) : cluster_(cluster) {}
  std::optional<std::string> answer(wire::Envelope::Reader request) override;

  std::vector<std::vector<std::string>> avoided;  // each Place's avoid list, in order
  std::set<std::string> delisted;                 // workers it no longer lists (heartbeats stopped)
  std::optional<std::string> placeAt;  // places every session here (even if not a worker)
  int fullFor = 0;  // answers this many placements "overloaded" first (no room yet)

 private:
  FakeCluster& cluster_;
  std::size_t nextPlacement_ = 0;
};

class FakeCluster {
 public:
  static constexpr const char* kCoordinator = "tcp://coordinator.fake:7700";
  FakeCluster();

  // Adds a worker at `endpoint`, placed after those added before.
  FakeWorker& addWorker(const std::string& endpoint);
  FakeWorker& worker(const std::string& endpoint);
  FakeCoordinator& coordinator() { return *coordinator_; }
  FakeServer* find(const std::string& endpoint);
  const std::vector<std::string>& workerEndpoints() const { return order_; }

  // A channel factory that reaches this cluster; it must outlive the client.
  std::unique_ptr<ChannelFactory> channels();

  // Endpoints the client's keep-alives reached, each time (the lease thread).
  std::vector<std::vector<std::string>> keepAlives();
  void recordKeepAlive(std::vector<std::string> endpoints);

 private:
  FakeCoordinator* coordinator_ = nullptr;
  std::map<std::string, std::unique_ptr<FakeServer>> servers_;
  std::vector<std::string> order_;
  std::mutex keepAliveMutex_;
  std::vector<std::vector<std::string>> keepAlives_;
};

}  // namespace kiln::fake
