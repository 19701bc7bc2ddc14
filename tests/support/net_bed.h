// The multi-host test bed (scripts/netbed) from C++: N network namespaces
// joined by a bridge in a namespace of their own, each with a real address,
// for tests and benches that need several hosts and a network that can be
// cut. The bed is named kb<pid><n>, so that scripts/netbed reap removes one
// a killed test left behind; beds of dead processes are reaped before a new
// one is made, and each bed is removed when its NetBed is destroyed.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <kiln/status.h>

namespace kiln::testsupport {

class NetBed {
 public:
  // `script` is scripts/netbed. With `emulatedBy` (the kiln binary), the
  // links go through its user-space switch, which can delay them (setShape).
  // Fails with kUnimplemented when this machine cannot make namespaces (not
  // root, no iproute2, no TAP devices): callers skip then.
  static Result<std::unique_ptr<NetBed>> create(std::filesystem::path script, unsigned hosts,
                                                std::filesystem::path emulatedBy = {});
  ~NetBed();
  NetBed(const NetBed&) = delete;
  NetBed& operator=(const NetBed&) = delete;

  unsigned hosts() const { return hosts_; }
  // Host i's address (1-based, as the script counts), e.g. "10.77.0.2".
  std::string address(unsigned host) const;
  // Host i's network namespace, and a command prefix that runs a program there.
  std::string nameSpace(unsigned host) const;
  std::vector<std::string> runOn(unsigned host) const;
  // Pulls host i's cable (no error on the host: its packets go nowhere), and
  // puts it back.
  Status cut(unsigned host);
  Status heal(unsigned host);
  // Host i lost for good, as a node that loses power: its cable pulled, then
  // every process on it SIGKILLed.
  Status crash(unsigned host);
  // "delay_us jitter_us loss" on every link of an emulated bed.
  Status setShape(const std::string& shape);

  // Moves the calling thread, and the threads it starts from then on (such as
  // a ZeroMQ context's I/O threads), onto host i's network.
  Status enter(unsigned host) const;

 private:
  NetBed(std::filesystem::path script, std::string name, unsigned hosts);
  Status run(const std::vector<std::string>& args) const;

  std::filesystem::path script_;
  std::string name_;
  unsigned hosts_;
};

}  // namespace kiln::testsupport
