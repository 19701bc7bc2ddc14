#include "bench/link_switch.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <queue>
#include <sstream>

#include <kiln/clock.h>
#include "common/base/unique_fd.h"

namespace kiln::bench {

namespace {

constexpr std::size_t kMaxFrame = 65536;

Result<UniqueFd> openTap(const std::string& name) {
  if (name.empty() || name.size() >= IFNAMSIZ) {
    return invalidArgument(fmt::format("'{}' is no interface name (1-15 characters)", name));
  }
  UniqueFd fd(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (!(fd.get() >= 0)) {
    return unimplemented(fmt::format("cannot open /dev/net/tun: {}", std::strerror(errno)));
  }
  ifreq request{};
  request.ifr_flags = IFF_TAP | IFF_NO_PI;
  std::snprintf(request.ifr_name, IFNAMSIZ, "%s", name.c_str());
  if (::ioctl(fd.get(), TUNSETIFF, &request) != 0) {
    return internalError(
        fmt::format("cannot create TAP device {}: {}", name, std::strerror(errno)));
  }
  return fd;
}

struct Pending {
  TimePoint at;
  std::uint64_t order;
  unsigned to;
  std::vector<std::uint8_t> frame;
  bool operator>(const Pending& other) const {
    return at != other.at ? at > other.at : order > other.order;
  }
};

class Switch {
 public:
  Switch(std::vector<UniqueFd> taps, UniqueFd control, LinkShape shape, std::uint64_t seed)
      : taps_(std::move(taps)),
        control_(std::move(control)),
        timing_(static_cast<unsigned>(taps_.size()), shape, seed),
        learning_(static_cast<unsigned>(taps_.size())) {}

  int run() {
    std::vector<pollfd> fds;
    for (const UniqueFd& tap : taps_) fds.push_back({tap.get(), POLLIN, 0});
    if (control_.get() >= 0) fds.push_back({control_.get(), POLLIN, 0});
    while (!quit_) {
      timespec wait{1, 0};
      if (!queue_.empty()) {
        const auto left = std::max<Duration>(queue_.top().at - clock_.now(), Duration::zero());
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        wait = {static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
      }
      if (::ppoll(fds.data(), fds.size(), &wait, nullptr) < 0 && errno != EINTR) return 1;
      for (unsigned port = 0; port < taps_.size(); ++port) {
        if ((fds[port].revents & POLLIN) != 0) readFrames(port);
      }
      if (control_.get() >= 0 && (fds.back().revents & POLLIN) != 0) readControl();
      sendDue();
    }
    return 0;
  }

 private:
  void readFrames(unsigned port) {
    std::uint8_t buffer[kMaxFrame];
    for (;;) {
      const ssize_t got = ::read(taps_[port].get(), buffer, sizeof buffer);
      if (got <= 0) return;  // EAGAIN: all read
      const TimePoint now = clock_.now();
      std::span<const std::uint8_t> frame(buffer, static_cast<std::size_t>(got));
      for (unsigned to : learning_.destinations(port, frame)) {
        if (auto at = timing_.departure(port, to, now)) {
          queue_.push(Pending{*at, order_++, to, {frame.begin(), frame.end()}});
        }
      }
    }
  }

  void sendDue() {
    const TimePoint now = clock_.now();
    while (!queue_.empty() && queue_.top().at <= now) {
      const Pending& due = queue_.top();
      // A full tap queue drops the frame, as a congested link would.
      (void)!::write(taps_[due.to].get(), due.frame.data(), due.frame.size());
      queue_.pop();
    }
  }

  void readControl() {
    char buffer[4096];
    for (;;) {
      const ssize_t got = ::read(control_.get(), buffer, sizeof buffer);
      if (got <= 0) break;
      pendingControl_.append(buffer, static_cast<std::size_t>(got));
    }
    for (std::size_t end; (end = pendingControl_.find('\n')) != std::string::npos;) {
      apply(pendingControl_.substr(0, end));
      pendingControl_.erase(0, end + 1);
    }
  }

  void apply(const std::string& line) {
    std::istringstream in(line);
    std::string verb;
    in >> verb;
    if (verb == "quit") {
      quit_ = true;
    } else if (verb == "cut" || verb == "heal") {
      unsigned host = 0;
      if (in >> host && host >= 1 && host <= taps_.size()) {
        timing_.setCut(host - 1, verb == "cut");
      } else {
        std::fprintf(stderr, "netbed-switch: '%s' names no host\n", line.c_str());
      }
    } else if (verb == "shape") {
      std::string rest;
      std::getline(in, rest);
      auto shape = parseLinkShape(rest);
      if (shape.ok()) {
        timing_.setShape(*shape);
      } else {
        std::fprintf(stderr, "netbed-switch: %s\n", shape.status().message().c_str());
      }
    } else if (!verb.empty()) {
      std::fprintf(stderr, "netbed-switch: unknown command '%s'\n", line.c_str());
    }
  }

  std::vector<UniqueFd> taps_;
  UniqueFd control_;
  SteadyClock clock_;
  LinkTiming timing_;
  LearningSwitch learning_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> queue_;
  std::uint64_t order_ = 0;
  std::string pendingControl_;
  bool quit_ = false;
};

}  // namespace

int runLinkSwitch(const LinkSwitchOptions& options) {
  if (options.taps.empty()) {
    std::fprintf(stderr, "netbed-switch: no --taps\n");
    return 2;
  }
  // Wake-ups on time: the default 50 us of timer slack is a quarter of a
  // 200 us link.
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  std::vector<UniqueFd> taps;
  for (const std::string& name : options.taps) {
    auto tap = openTap(name);
    if (!tap.ok()) {
      std::fprintf(stderr, "netbed-switch: %s\n", tap.status().message().c_str());
      return 2;
    }
    taps.push_back(std::move(*tap));
  }
  UniqueFd control;
  if (!options.control.empty()) {
    // Read and write: the FIFO never reports an end when a writer leaves.
    control = UniqueFd(::open(options.control.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
    if (control.get() < 0) {
      std::fprintf(stderr, "netbed-switch: cannot open %s: %s\n", options.control.c_str(),
                   std::strerror(errno));
      return 2;
    }
  }
  std::printf("switch %zu\n", taps.size());
  std::fflush(stdout);
  return Switch(std::move(taps), std::move(control), options.shape, options.seed).run();
}

}  // namespace kiln::bench
