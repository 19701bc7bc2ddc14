// The session RPCs as they run on a pool thread: each takes the decoded
// request, drives the CompilationSession and returns the encoded reply with
// what the loop must do next (insert a new session, retire this one). Input is
// validated here before any action is applied, so a bad Step changes nothing.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/frame.h"
#include "common/ids.h"
#include "worker/session_host.h"

namespace kiln {

Completion executeStart(const ReadySessionType& type, SessionId id, ClientId owner,
                        const InboundMessage& message, std::uint64_t maxBenchmarkBytes);
Completion executeStep(SessionRecord& record, const InboundMessage& message);
Completion executeFork(SessionRecord& parent, SessionId childId, const InboundMessage& message);
Completion executeEnd(SessionRecord& record, const InboundMessage& message,
                      std::uint32_t remainingSessions);
Completion executeParameter(SessionRecord& record, const InboundMessage& message);

}  // namespace kiln
