#include "client/session_codec.h"

#include <algorithm>
#include <limits>

#include "client/channel.h"
#include "client/lease_keeper.h"

#include "common/base/wire_convert.h"

namespace kiln::client {

Result<std::vector<Value>> decodeValues(capnp::List<wire::Value>::Reader values) {
  std::vector<Value> out;
  out.reserve(values.size());
  for (auto value : values) {
    KILN_ASSIGN_OR_RETURN(Value v, fromWire(value));
    out.push_back(std::move(v));
  }
  return out;
}

Result<SessionTypeSpaces> decodeSpaces(wire::Spaces::Reader spaces) {
  SessionTypeSpaces out;
  for (auto space : spaces.getActionSpaces()) {
    KILN_ASSIGN_OR_RETURN(Space s, fromWire(space));
    out.actionSpaces.push_back(std::move(s));
  }
  for (auto space : spaces.getObservationSpaces()) {
    KILN_ASSIGN_OR_RETURN(Space s, fromWire(space));
    out.observationSpaces.push_back(std::move(s));
  }
  out.replayable = spaces.getReplay().getDeterministic();
  out.fingerprint = spaces.getReplay().getFingerprint().cStr();
  if (!out.fingerprint.empty() && !findSpace(out.observationSpaces, out.fingerprint).ok()) {
    return internalError(
        "the worker names a replay fingerprint that is not an observation space: " +
        out.fingerprint);
  }
  return out;
}

Result<std::vector<std::uint32_t>> observationIndices(const SessionTypeSpaces& spaces,
                                                      const std::vector<std::string>& names) {
  std::vector<std::uint32_t> indices;
  indices.reserve(names.size());
  for (const std::string& name : names) {
    KILN_ASSIGN_OR_RETURN(std::size_t index, findSpace(spaces.observationSpaces, name));
    indices.push_back(static_cast<std::uint32_t>(index));
  }
  return indices;
}

std::chrono::microseconds wireMicros(std::uint64_t micros) {
  return std::chrono::microseconds(static_cast<std::int64_t>(
      std::min<std::uint64_t>(micros, std::numeric_limits<std::int64_t>::max())));
}

}  // namespace kiln::client
