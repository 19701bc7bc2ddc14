// Fakes for driving a SessionHost (or a frontend) by hand, shared by the
// worker's unit tests and the worker host's fuzzer: pool work waits in a
// queue until the test runs it, and replies are decoded and kept.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "common/base/mailbox.h"
#include "common/transport/frame.h"
#include "worker/session_host.h"

namespace kiln::testsupport {

class QueuedExecutor final : public Executor {
 public:
  void post(const std::string&, UniqueTask task) override { tasks.push_back(std::move(task)); }
  bool idle() const override { return tasks.empty(); }
  std::string stuckNote() const override { return stuck; }
  bool acceptsWork() const override { return accepting; }
  // Runs every queued task, in order; returns how many ran.
  std::size_t runAll();

  std::deque<UniqueTask> tasks;
  // What a pool with threads held by stuck tasks would say (TaskPool).
  std::string stuck;
  bool accepting = true;
};

// Keeps every reply that decodes, counts those that do not.
class CollectingSink final : public ReplySink {
 public:
  void send(const std::string& routingId, zmq::message_t frame) override;

  std::vector<InboundMessage> replies;
  std::size_t undecodable = 0;
  // Sees each decoded reply as it arrives (e.g. to learn session ids).
  std::function<void(const InboundMessage&)> onReply;
};

// One round of pool work: runs the queued tasks, then hands their
// completions to `host` (a completion may queue the next task of a strand).
template <class Host>
void runRound(QueuedExecutor& executor, Mailbox<Completion>& completions, Host& host) {
  executor.runAll();
  std::vector<Completion> done;
  completions.drain(done);
  for (Completion& completion : done) host.onCompletion(std::move(completion));
}

}  // namespace kiln::testsupport
