// The rules every nesting host applies to requests, whatever runs its
// underlying workers (one process, or a child process per experiment):
// who may see or address which worker, what a spec must satisfy, and which
// requests the host itself (target 0) refuses. Pure functions, no sockets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <kiln/kit/session_types.h>
#include <kiln/status.h>
#include "common/types/underlying_wire.h"
#include "schema/kiln.capnp.h"

namespace kiln::nesting {

// A worker (not being released) is visible to any request that came down the
// coordinator link, and to a request acting for its experiment that presents
// the experiment's pass for this host (common/security/identity.h). A name alone shows
// nothing; the experiment's key shows nothing either (hosts never see it).
bool visibleTo(const UnderlyingSpec& worker, bool releasing, bool fromCoordinator,
               const std::string& experiment, capnp::Data::Reader pass);

// The answer for a worker that does not exist or is not visible: the same
// in both cases, so that clients cannot see other experiments' workers.
Status unknownWorker(std::uint64_t workerId, const std::string& experiment);

// Checks a createWorker spec. Only the coordinator, on the link this host
// opened to it, creates or releases underlying workers: it plans them and
// gives each its experiment's pass for this host.
Status checkCreate(const UnderlyingSpec& spec, bool fromCoordinator,
                   const SessionTypeRegistry& types);
Status checkRelease(bool fromCoordinator);

// Session requests sent to the host itself instead of an underlying worker.
std::optional<Status> refuseAtHost(wire::Request::Reader request);

}  // namespace kiln::nesting
