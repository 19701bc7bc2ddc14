#include "tests/support/host_fakes.h"

namespace kiln::testsupport {

std::size_t QueuedExecutor::runAll() {
  std::size_t ran = 0;
  while (!tasks.empty()) {
    UniqueTask task = std::move(tasks.front());
    tasks.pop_front();
    task();
    ++ran;
  }
  return ran;
}

void CollectingSink::send(const std::string&, zmq::message_t frame) {
  auto message = InboundMessage::decode(frame, FrameLimits{});
  if (!message.ok()) {
    ++undecodable;
    return;
  }
  if (onReply) onReply(*message);
  replies.push_back(std::move(message).value());
}

}  // namespace kiln::testsupport
