// What the coordinator knows about one registered worker or nesting host,
// and the outgoing-message type its logic produces (the server sends them).
#pragma once

#include <algorithm>
#include <deque>
#include <string>
#include <vector>
#include <zmq.hpp>

#include <kiln/clock.h>
#include "common/security/identity.h"
#include "common/types/underlying_wire.h"
#include "coordinator/placement.h"

namespace kiln {

struct Outgoing {
  std::string routingId;
  zmq::message_t frame;
};

// The last `capacity` samples of a utilization figure (0..1), oldest first.
class SampleRing {
 public:
  explicit SampleRing(std::size_t capacity = 60) : capacity_(capacity) {}
  void push(float sample) {
    samples_.push_back(std::clamp(sample, 0.0f, 1.0f));
    if (samples_.size() > capacity_) samples_.pop_front();
  }
  const std::deque<float>& samples() const { return samples_; }

 private:
  std::size_t capacity_;
  std::deque<float> samples_;
};

struct WorkerRecord {
  WorkerSnapshot snapshot;
  std::string routingId;
  std::string endpoint;
  std::string localEndpoint;  // same-host clients' shortcut (common/transport/local_transport.h)
  std::string hostIdentity;
  std::string version;
  std::string hostname;
  std::uint32_t pid = 0;
  bool nesting = false;
  PassKey passKey;                           // makes the client passes that placements here carry
  std::uint64_t maxMessageBytes = 0;         // its --max-message-bytes, passed on in placements
  std::vector<UnderlyingStatus> underlying;  // as last reported (nesting hosts)
  std::uint32_t queuedRequests = 0;
  std::uint64_t stepsTotal = 0;
  TimePoint lastHeard;
  TimePoint nextPing;
  std::deque<TimePoint> placements;  // recent, not yet in a load report
  // Arrivals of its last two load reports: a placement made before the
  // earlier one is in the later one's count (its start had a whole interval).
  TimePoint lastReport{}, reportBefore{};
  SampleRing utilization;
};

}  // namespace kiln
