// The JSON lines between the tensors on BASE.out: {"context":NAME},
// {"observation":N} and {"outcome":N}, each a one-field object. Parsed here
// once for the blocking reader (record_stream) and the non-blocking scan
// (record_ready) alike, so that both always agree on what a line is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <kiln/status.h>
#include "compilers/mlgo_channel/channel_header.h"

namespace kiln::mlgo_channel {

enum class ControlKind : std::uint8_t { kContext, kObservation, kOutcome };

struct ControlLine {
  ControlKind kind = ControlKind::kContext;
  std::string context;      // kContext: the name (a function name for llc)
  std::int64_t number = 0;  // kObservation / kOutcome: the N
};

// `line` (without its '\n') as a record line of `header`'s stream, or a
// compile-error saying how the compiler broke the protocol. An outcome line
// is only a record when the header announced a score.
Result<ControlLine> parseControlLine(std::string_view line, const ChannelHeader& header);

// The bytes that follow `line` in the stream: none after a context line; the
// tensors and their closing '\n' after an observation or an outcome.
// `observationBytes` is header.observationBytes(), passed in because callers
// keep it (the header's sum walks every feature).
std::size_t bytesAfterLine(const ControlLine& line, const ChannelHeader& header,
                           std::size_t observationBytes);

// `text` quoted for an error message: at most 80 characters, the
// unprintable ones as '?', so that compiler garbage cannot garble the log.
std::string shown(std::string_view text);

// A compile-error: the compiler broke the protocol as `what` says.
Status protocolError(const std::string& what);

}  // namespace kiln::mlgo_channel
