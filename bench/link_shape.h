// The policy of the test bed's emulated links (bench/link_switch.h), apart
// from the taps and the clock: where an Ethernet frame goes (a learning
// switch), and when it leaves or whether it is lost. The kernel's netem
// would do the timing, but not every kernel has it (this project's VM does
// not): a switch in user space adds the same delay, jitter and loss to
// real TCP between namespaces.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <kiln/clock.h>
#include <kiln/status.h>

namespace kiln::bench {

// One way, per frame: a frame leaves `delay` after it arrived, plus a
// uniform draw from [0, jitter]; it is dropped with probability `loss`.
// Frames from one port to another never overtake each other (TCP would
// take reordering for loss), so jitter delays a burst as a whole.
struct LinkShape {
  std::chrono::microseconds delay{0};
  std::chrono::microseconds jitter{0};
  double loss = 0;  // in [0, 1]
};

// Parses "delay_us jitter_us loss", e.g. "200 20 0.001".
Result<LinkShape> parseLinkShape(const std::string& text);

class LinkTiming {
 public:
  LinkTiming(unsigned ports, LinkShape shape, std::uint64_t seed);

  void setShape(LinkShape shape) { shape_ = shape; }
  const LinkShape& shape() const { return shape_; }
  // A cut port neither sends nor receives (its cable pulled).
  void setCut(unsigned port, bool cut) { cut_.at(port) = cut; }
  bool cut(unsigned port) const { return cut_.at(port); }

  // When a frame from `from` that arrived `now` leaves for `to`; nullopt if
  // it is lost (or either port is cut).
  std::optional<TimePoint> departure(unsigned from, unsigned to, TimePoint now);

 private:
  LinkShape shape_;
  std::vector<bool> cut_;
  std::mt19937_64 random_;
  std::map<std::pair<unsigned, unsigned>, TimePoint> lastDeparture_;
};

// Which ports a frame goes to: the port its destination address was last
// seen on, else every other port (broadcast, multicast, unknown).
class LearningSwitch {
 public:
  explicit LearningSwitch(unsigned ports) : ports_(ports) {}
  // Frames shorter than an Ethernet header go nowhere.
  std::vector<unsigned> destinations(unsigned from, std::span<const std::uint8_t> frame);

 private:
  unsigned ports_;
  std::map<std::uint64_t, unsigned> portOf_;  // MAC address -> port
};

}  // namespace kiln::bench
