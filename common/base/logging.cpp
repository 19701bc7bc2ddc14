#include <kiln/logging.h>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace kiln {

Logger makeLogger(const std::string& name, const LogOptions& options) {
  if (!options.toStderr) return makeNullLogger(name);
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>(name, std::move(sink));
  logger->set_level(options.level);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
  return logger;
}

Logger makeNullLogger(const std::string& name) {
  auto logger =
      std::make_shared<spdlog::logger>(name, std::make_shared<spdlog::sinks::null_sink_mt>());
  logger->set_level(spdlog::level::off);
  return logger;
}

bool parseLogLevel(const std::string& text, spdlog::level::level_enum& level) {
  auto parsed = spdlog::level::from_str(text);
  if (parsed == spdlog::level::off && text != "off") return false;
  level = parsed;
  return true;
}

}  // namespace kiln
