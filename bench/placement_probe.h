// One DEALER to the coordinator that asks for placements one at a time, as
// a client's placement does, and times each: `kiln bench coordinator`'s
// placers. No session is started (the bench's hosts are simulated), so the
// time is the coordinator's alone, plus the socket's.
#pragma once

#include <cstdint>
#include <string>
#include <zmq.hpp>

#include <kiln/clock.h>
#include <kiln/secret.h>
#include <kiln/status.h>

namespace kiln::bench {

struct ProbePlacement {
  std::string endpoint;
  std::uint64_t target = 0;  // the experiment's underlying worker; 0 = the host itself
  std::int64_t nanos = 0;    // request sent to answer received
};

class PlacementProbe {
 public:
  PlacementProbe(zmq::context_t& zmq, const std::string& coordinator);
  // An experiment's placement (name and key), or a plain one (empty name).
  Result<ProbePlacement> place(const std::string& sessionType, Duration timeout,
                               const std::string& experiment = {}, const Secret* key = nullptr);
  // Answers that came for a request already answered (a request placed twice).
  std::uint64_t duplicateAnswers() const { return duplicates_; }

 private:
  zmq::socket_t socket_;
  std::uint64_t nextRequest_ = 1;
  std::uint64_t lastAnswered_ = 0;
  std::uint64_t duplicates_ = 0;
};

}  // namespace kiln::bench
