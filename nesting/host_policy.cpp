#include "nesting/host_policy.h"

#include <fmt/format.h>

namespace kiln::nesting {

bool visibleTo(const std::string& owner, bool releasing, bool fromCoordinator,
               const std::string& experiment) {
  return !releasing && (fromCoordinator || owner == experiment);
}

Status unknownWorker(std::uint64_t workerId, const std::string& experiment) {
  return notFound(
      fmt::format("no underlying worker {:x} for experiment '{}' on this host "
                  "(released, never created, or another experiment's)",
                  workerId, experiment));
}

Status checkCreate(const UnderlyingSpec& spec, bool fromCoordinator, const std::string& experiment,
                   const SessionTypeRegistry& types) {
  if (!fromCoordinator && spec.experiment != experiment) {
    return permissionDenied(fmt::format(
        "experiment '{}' cannot create a worker for experiment '{}'", experiment, spec.experiment));
  }
  if (spec.experiment.empty()) {
    return invalidArgument("an underlying worker needs an owning experiment");
  }
  for (const std::string& type : spec.sessionTypes) {
    if (types.find(type) == nullptr) {
      return invalidArgument(fmt::format("session type '{}' is not hosted here (hosted: {})", type,
                                         fmt::join(types.names(), ", ")));
    }
  }
  return okStatus();
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
