#include "bench/link_shape.h"

#include <fmt/format.h>

#include <sstream>

namespace kiln::bench {

namespace {

constexpr std::size_t kEthernetHeader = 14;

std::uint64_t macAt(std::span<const std::uint8_t> frame, std::size_t offset) {
  std::uint64_t mac = 0;
  for (std::size_t i = 0; i < 6; ++i) mac = (mac << 8) | frame[offset + i];
  return mac;
}

}  // namespace

Result<LinkShape> parseLinkShape(const std::string& text) {
  std::istringstream in(text);
  long long delay = -1, jitter = -1;
  double loss = -1;
  std::string rest;
  if (!(in >> delay >> jitter >> loss) || (in >> rest) || delay < 0 || jitter < 0 ||
      delay > 10'000'000 || jitter > 10'000'000 || !(loss >= 0 && loss <= 1)) {
    return invalidArgument(fmt::format(
        "a link shape is 'delay_us jitter_us loss' (each us in [0, 10000000], loss in [0, 1]), "
        "not '{}'",
        text));
  }
  return LinkShape{std::chrono::microseconds(delay), std::chrono::microseconds(jitter), loss};
}

LinkTiming::LinkTiming(unsigned ports, LinkShape shape, std::uint64_t seed)
    : shape_(shape), cut_(ports, false), random_(seed) {}

std::optional<TimePoint> LinkTiming::departure(unsigned from, unsigned to, TimePoint now) {
  if (cut_.at(from) || cut_.at(to)) return std::nullopt;
  if (shape_.loss > 0 && std::uniform_real_distribution<double>(0, 1)(random_) < shape_.loss) {
    return std::nullopt;
  }
  Duration wait = shape_.delay;
  if (shape_.jitter.count() > 0) {
    wait += std::chrono::microseconds(
        std::uniform_int_distribution<long long>(0, shape_.jitter.count())(random_));
  }
  TimePoint& last = lastDeparture_[{from, to}];
  last = std::max(last, now + wait);
  return last;
}

std::vector<unsigned> LearningSwitch::destinations(unsigned from,
                                                   std::span<const std::uint8_t> frame) {
  if (frame.size() < kEthernetHeader || from >= ports_) return {};
  const std::uint64_t destination = macAt(frame, 0), source = macAt(frame, 6);
  const bool group = (frame[0] & 1) != 0;  // broadcast and multicast
  if ((frame[6] & 1) == 0) portOf_[source] = from;
  if (!group) {
    auto known = portOf_.find(destination);
    if (known != portOf_.end()) {
      if (known->second == from) return {};
      return {known->second};
    }
  }
  std::vector<unsigned> every;
  for (unsigned port = 0; port < ports_; ++port) {
    if (port != from) every.push_back(port);
  }
  return every;
}

}  // namespace kiln::bench
