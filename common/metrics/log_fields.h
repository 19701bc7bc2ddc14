// Structured fields for log lines about sessions and experiments: every such
// line carries `session=<hex id>` and `experiment=<name>` so that one grep
// (or a log shipper's key=value parser) follows a session across the
// coordinator, hosts and workers. docs/observability.md describes the format.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::logfields {

// "session=1f3a..." (lower-case hex, no leading zeros, as clients print ids).
std::string session(std::uint64_t id);
// "experiment=name"; "experiment=-" when there is none (a plain worker's
// sessions); a name with spaces, quotes, '=' or control characters is
// written quoted with backslash escapes so that a line always splits cleanly.
std::string experiment(std::string_view name);
// Both, session first: "session=... experiment=...".
std::string sessionAndExperiment(std::uint64_t id, std::string_view name);

}  // namespace kiln::logfields
