// Two real worker processes registered with one coordinator, and a noop
// session on each: the set-up of tests that SIGKILL one worker and check that
// its sessions are restored on the other, which keeps serving.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "bench/child_cluster.h"
#include "client/client.h"

namespace kiln::integration {

struct TwoWorkers {
  std::optional<bench::ChildCluster> children;
  bench::ChildProcess* doomed = nullptr;
  bench::ChildProcess* survivor = nullptr;
  std::unique_ptr<client::Session> onDoomed;
  std::unique_ptr<client::Session> onSurvivor;
};

// Starts both workers (the kiln binary `kiln`), waits until `client` sees
// them registered, and starts sessions until each holds one. Fails the
// current test (gtest fatal failure) when any of that does not happen; call
// it inside ASSERT_NO_FATAL_FAILURE.
void startTwoWorkers(const std::string& kiln, const std::string& coordinator,
                     client::Client& client, TwoWorkers& out);

}  // namespace kiln::integration
