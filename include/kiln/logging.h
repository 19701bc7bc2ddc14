// Loggers are made here and passed in; libraries never use spdlog's global
// registry, so two servers in one process (tests, local mode) keep apart.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace kiln {

using Logger = std::shared_ptr<spdlog::logger>;

struct LogOptions {
  spdlog::level::level_enum level = spdlog::level::info;
  bool toStderr = true;
};

// A logger named `name` (shown on every line) writing to stderr.
Logger makeLogger(const std::string& name, const LogOptions& options = {});
// A logger that drops everything (tests, benchmarks).
Logger makeNullLogger(const std::string& name);
// Parses "trace|debug|info|warn|error|off".
bool parseLogLevel(const std::string& text, spdlog::level::level_enum& level);

}  // namespace kiln
