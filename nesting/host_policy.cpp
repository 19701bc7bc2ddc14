#include "nesting/host_policy.h"

#include <fmt/format.h>

#include "common/security/identity.h"

namespace kiln::nesting {

bool visibleTo(const UnderlyingSpec& worker, bool releasing, bool fromCoordinator,
               const std::string& experiment, capnp::Data::Reader pass) {
  if (releasing) return false;
  if (fromCoordinator) return true;
  return worker.experiment == experiment && passMatches(pass, worker.experimentPass);
}

Status unknownWorker(std::uint64_t workerId, const std::string& experiment) {
  return notFound(
      fmt::format("no underlying worker {:x} for experiment '{}' on this host "
                  "(released, never created, another experiment's, or the experiment's pass "
                  "for this host is missing or wrong)",
                  workerId, experiment));
}

Status checkCreate(const UnderlyingSpec& spec, bool fromCoordinator,
                   const SessionTypeRegistry& types) {
  if (!fromCoordinator) {
    return permissionDenied(
        "only the coordinator creates underlying workers: open an experiment at the coordinator "
        "(Client::openExperiment, kiln.Experiment) and it plans them");
  }
  if (spec.experiment.empty()) {
    return invalidArgument("an underlying worker needs an owning experiment");
  }
  if (spec.experimentPass.size() != kExperimentPassBytes) {
    return invalidArgument(
        fmt::format("an underlying worker needs its experiment's pass for this host ({} "
                    "bytes), got {} bytes",
                    kExperimentPassBytes, spec.experimentPass.size()));
  }
  for (const std::string& type : spec.sessionTypes) {
    if (types.find(type) == nullptr) {
      return invalidArgument(fmt::format("session type '{}' is not hosted here (hosted: {})", type,
                                         fmt::join(types.names(), ", ")));
    }
  }
  return okStatus();
}

Status checkRelease(bool fromCoordinator) {
  if (fromCoordinator) return okStatus();
  return permissionDenied(
      "only the coordinator releases underlying workers: close the experiment at the coordinator");
}

std::optional<Status> refuseAtHost(wire::Request::Reader request) {
  switch (request.which()) {
    case wire::Request::START_SESSION:
    case wire::Request::STEP:
    case wire::Request::FORK:
    case wire::Request::END_SESSION:
      return invalidArgument(
          "this is a nesting host: address one of its underlying workers (Envelope.target), "
          "e.g. one placed for your experiment");
    case wire::Request::SEND_SESSION_PARAMETER:
      if (request.getSendSessionParameter().getSessionId() != 0) {
        return invalidArgument("session parameters go to the session's underlying worker");
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace kiln::nesting
