// One live session as the worker's loop sees it: the compiler session, its
// owner and experiment, the current action space, and its strand (whether a
// request runs now, and the requests waiting for it, in arrival order).
#pragma once

#include <list>
#include <memory>
#include <string>

#include <kiln/ids.h>
#include <kiln/kit/session_types.h>
#include "common/transport/frame.h"

namespace kiln {

struct SessionRecord {
  SessionId id;
  ClientId owner;
  std::string experiment;
  const ReadySessionType* type = nullptr;
  std::unique_ptr<CompilationSession> session;
  // Its benchmark's bytes (none for a URI alone), shared with its forks:
  // what it holds against its client's byte quota (worker/client_quotas.h).
  // Weak: the record names the program, the session decides how long the
  // bytes live (a parsed module may need them no more).
  std::weak_ptr<const std::string> program;
  std::uint64_t programBytes = 0;
  Space actionSpace;  // the current one (a step may replace it)

  // Loop-thread state.
  struct Waiting {
    std::string routingId;
    InboundMessage message;
  };
  bool busy = false;
  Duration stepCost{};  // moving average of its steps' compile time
  std::uint32_t stepsTimed = 0;
  bool retired = false;  // ends as soon as it is idle
  std::list<Waiting> waiting;
};

}  // namespace kiln
