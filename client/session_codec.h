// Decoding helpers shared by the client's Client and Session.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <kiln/client/client.h>
#include "schema/kiln.capnp.h"

namespace kiln::client {

Result<std::vector<Value>> decodeValues(capnp::List<wire::Value>::Reader values);
Result<SessionTypeSpaces> decodeSpaces(wire::Spaces::Reader spaces);
Result<std::vector<std::uint32_t>> observationIndices(const SessionTypeSpaces& spaces,
                                                      const std::vector<std::string>& names);
ExperimentStatus decodeExperiment(wire::ExperimentView::Reader view);
// A worker's microseconds from the wire (a hostile count saturates).
std::chrono::microseconds wireMicros(std::uint64_t micros);

}  // namespace kiln::client
