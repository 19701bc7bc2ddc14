// Structure-aware fuzzing: turns fuzzer bytes into a well-formed Envelope of
// any kind (every request kind, replies, heartbeats, disconnects), so that
// the handlers' validation is reached with plausible and implausible field
// values instead of stopping at the Cap'n Proto decoder.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <capnp/message.h>

#include <cstdint>
#include <vector>

#include "schema/kiln.capnp.h"

namespace kiln::fuzz {

// Ids the harness has seen in replies (sessions, workers), so that later
// requests can name things that exist.
struct KnownIds {
  std::vector<std::uint64_t> sessions;
  std::vector<std::uint64_t> workers;
};

// Fills `message` with an Envelope built from `data`. Never throws.
void buildEnvelope(FuzzedDataProvider& data, const KnownIds& known, capnp::MessageBuilder& message);

}  // namespace kiln::fuzz
