// Client::readySteps: one thread waits on the steps of many sessions at
// once, across every worker they went to (a vector env's recv()).
#include <algorithm>
#include <unordered_set>

#include "client/channel.h"
#include "client/client.h"
#include "common/readiness_poll.h"

namespace kiln::client {

std::vector<std::size_t> Client::readySteps(const std::vector<PendingStep>& steps,
                                            TimePoint until) {
  std::vector<std::size_t> ready;
  std::vector<Channel*> channels;
  std::unordered_set<Channel*> seen;
  for (const PendingStep& step : steps) {
    Channel& channel = channelTo(step.session->endpoint());
    if (seen.insert(&channel).second) channels.push_back(&channel);
  }
  ReadinessPoll poll;
  for (;;) {
    // Each channel is read once per round, however many steps wait on it.
    for (Channel* channel : channels) channel->readAvailable();
    TimePoint wake = until;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].session->stepReady(steps[i].requestId)) {
        ready.push_back(i);
      } else {
        wake = std::min(wake, steps[i].session->stepDeadline(steps[i].requestId));
      }
    }
    const TimePoint now = std::chrono::steady_clock::now();
    if (!ready.empty() || now >= until) return ready;
    poll.clear();
    for (Channel* channel : channels) channel->addTo(poll);
    // Rounded up: a step whose deadline passes is ready on the next round.
    poll.wait(std::chrono::ceil<std::chrono::milliseconds>(std::max(wake - now, Duration::zero())));
  }
}

}  // namespace kiln::client
