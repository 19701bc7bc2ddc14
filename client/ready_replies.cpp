// Client::readyReplies: one thread waits on the steps and starts of many
// sessions at once, across every worker they went to (a vector env's recv()).
#include <algorithm>
#include <unordered_set>

#include <kiln/client/client.h>
#include "client/channel.h"
#include "common/transport/readiness_poll.h"

namespace kiln::client {

ReadyReplies Client::readyReplies(const std::vector<PendingStep>& steps,
                                  const std::vector<const PendingStart*>& starts, TimePoint until) {
  std::vector<Channel*> channels;
  std::unordered_set<Channel*> seen;
  auto watch = [&](const std::string& endpoint) {
    Channel& channel = channelTo(endpoint);
    if (seen.insert(&channel).second) channels.push_back(&channel);
  };
  for (const PendingStep& step : steps) watch(step.session->endpoint());
  for (const PendingStart* start : starts) {
    if (start->request.ok()) watch(start->endpoint);
  }
  ReadyReplies ready;
  ReadinessPoll poll;
  for (;;) {
    // Each channel is read once per round, however many replies wait on it.
    for (Channel* channel : channels) channel->readAvailable();
    TimePoint wake = until;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].session->stepReady(steps[i].requestId)) {
        ready.steps.push_back(i);
      } else {
        wake = std::min(wake, steps[i].session->stepDeadline(steps[i].requestId));
      }
    }
    for (std::size_t i = 0; i < starts.size(); ++i) {
      if (startReady(*starts[i])) {
        ready.starts.push_back(i);
      } else {
        wake = std::min(wake, starts[i]->deadline);
      }
    }
    const TimePoint now = std::chrono::steady_clock::now();
    if (!ready.empty() || now >= until) return ready;
    poll.clear();
    for (Channel* channel : channels) channel->addTo(poll);
    // Rounded up: a reply whose deadline passes is ready on the next round.
    poll.wait(std::chrono::ceil<std::chrono::milliseconds>(std::max(wake - now, Duration::zero())));
  }
}

}  // namespace kiln::client
