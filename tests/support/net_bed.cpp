#include "tests/support/net_bed.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>

#include "common/process/subprocess.h"

namespace kiln::testsupport {

namespace {

using namespace std::chrono_literals;

constexpr const char* kSubnet = "10.77.0";

}  // namespace

NetBed::NetBed(std::filesystem::path script, std::string name, unsigned hosts)
    : script_(std::move(script)), name_(std::move(name)), hosts_(hosts) {}

Status NetBed::run(const std::vector<std::string>& args) const {
  std::vector<std::string> argv{script_.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  KILN_ASSIGN_OR_RETURN(auto output, runSubprocess(argv, 30s));
  if (!output.status.success()) {
    return internalError(fmt::format("{} {}: {} {}", script_.filename().string(),
                                     fmt::join(args, " "), output.status.describe(),
                                     output.stderrText));
  }
  return okStatus();
}

Result<std::unique_ptr<NetBed>> NetBed::create(std::filesystem::path script, unsigned hosts,
                                               std::filesystem::path emulatedBy) {
  if (::geteuid() != 0) return unimplemented("the namespace test bed needs root");
  auto ip = runSubprocess({"ip", "netns", "list"}, 10s);
  if (!ip.ok() || !ip->status.success()) {
    return unimplemented("the namespace test bed needs iproute2 (ip netns)");
  }
  static std::atomic<unsigned> made{0};
  std::string name = fmt::format("kb{}{}", ::getpid(), static_cast<char>('a' + made++ % 26));
  std::unique_ptr<NetBed> bed(new NetBed(std::move(script), name, hosts));
  (void)bed->run({"reap"});  // what killed tests left behind
  std::vector<std::string> up{"up", name, std::to_string(hosts), kSubnet};
  if (!emulatedBy.empty()) {
    if (::access("/dev/net/tun", R_OK | W_OK) != 0) {
      return unimplemented("emulated links need TAP devices (/dev/net/tun)");
    }
    up.insert(up.end(), {"--emulated", emulatedBy.string()});
  }
  // A machine that cannot make namespaces, veth pairs, bridges or TAP
  // devices (a container without the capability, a kernel without them) is
  // one the bed does not run on: said as such, so that tests skip.
  if (Status made = bed->run(up); !made.ok()) {
    return unimplemented("this machine cannot make the namespace bed: " + made.message());
  }
  return bed;
}

NetBed::~NetBed() { (void)run({"down", name_}); }

std::string NetBed::address(unsigned host) const { return fmt::format("{}.{}", kSubnet, host); }

std::string NetBed::nameSpace(unsigned host) const { return fmt::format("{}-h{}", name_, host); }

std::vector<std::string> NetBed::runOn(unsigned host) const {
  return {"ip", "netns", "exec", nameSpace(host)};
}

Status NetBed::cut(unsigned host) { return run({"cut", name_, std::to_string(host)}); }

Status NetBed::heal(unsigned host) { return run({"heal", name_, std::to_string(host)}); }

Status NetBed::crash(unsigned host) { return run({"crash", name_, std::to_string(host)}); }

Status NetBed::setShape(const std::string& shape) { return run({"shape", name_, shape}); }

Status NetBed::enter(unsigned host) const {
  const std::string path = "/run/netns/" + nameSpace(host);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return internalError("cannot open " + path);
  const int entered = ::setns(fd, CLONE_NEWNET);
  ::close(fd);
  if (entered != 0) return internalError("setns into " + nameSpace(host) + " failed");
  return okStatus();
}

}  // namespace kiln::testsupport
