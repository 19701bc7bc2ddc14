#include "tools/agent_tools/tool_arguments.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include <kiln/programs/make_benchmark.h>
#include "common/base/near_names.h"
#include "tools/agent_tools/base64.h"

namespace kiln::agent_tools {
namespace {

using nlohmann::json;

ToolFailure invalid(std::string message) {
  return {ToolError::kInvalidArguments, std::move(message)};
}

// The argument names each tool takes.
const std::set<std::string>& allowedKeys(const std::string& tool) {
  static const std::set<std::string> state = {"episode", "benchmark", "module", "passes"};
  static const std::set<std::string> apply = {"episode", "benchmark", "module",
                                              "passes",  "observe",   "keep_episode"};
  static const std::set<std::string> observe = {"episode", "benchmark", "module", "passes",
                                                "observe"};
  static const std::set<std::string> irText = {"episode", "benchmark", "module", "passes",
                                               "max_bytes"};
  static const std::set<std::string> episodeOnly = {"episode"};
  if (tool == kApplyPasses) return apply;
  if (tool == kObserve) return observe;
  if (tool == kIrText) return irText;
  if (tool == kForkEpisode || tool == kEndEpisode) return episodeOnly;
  return state;
}

std::optional<ToolFailure> checkKeys(const std::string& tool, const json& arguments) {
  const std::set<std::string>& allowed = allowedKeys(tool);
  for (const auto& [key, _] : arguments.items()) {
    if (!allowed.contains(key)) {
      std::string names;
      for (const std::string& name : allowed) names += (names.empty() ? "" : ", ") + name;
      return invalid(fmt::format("{} takes no argument '{}' (it takes {})", tool, key, names));
    }
  }
  return std::nullopt;
}

std::optional<ToolFailure> readString(const json& arguments, const char* key, std::string& out) {
  auto it = arguments.find(key);
  if (it == arguments.end()) return std::nullopt;
  if (!it->is_string()) return invalid(fmt::format("'{}' must be a string", key));
  out = it->get<std::string>();
  if (out.empty()) return invalid(fmt::format("'{}' must not be empty", key));
  return std::nullopt;
}

std::optional<ToolFailure> readStrings(const json& arguments, const char* key,
                                       std::vector<std::string>& out) {
  auto it = arguments.find(key);
  if (it == arguments.end()) return std::nullopt;
  if (!it->is_array()) return invalid(fmt::format("'{}' must be a list of strings", key));
  for (std::size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string()) {
      return invalid(fmt::format("'{}[{}]' must be a string, not {}", key, i, (*it)[i].dump()));
    }
    out.push_back((*it)[i].get<std::string>());
  }
  return std::nullopt;
}

// The module's bytes: bitcode in base64, or IR text as it is.
std::variant<std::string, ToolFailure> readModule(const std::string& text,
                                                  const ToolLimits& limits) {
  if (text.size() > limits.maxModuleBytes * 4 / 3 + 4) {
    return ToolFailure{ToolError::kTooLarge,
                       fmt::format("the module is {} bytes, over the limit of {} bytes "
                                   "(ToolLimits::maxModuleBytes)",
                                   text.size(), limits.maxModuleBytes)};
  }
  std::string bytes = text;
  if (auto decoded = base64Decode(text); decoded && isBitcode(*decoded)) bytes = *decoded;
  if (bytes.size() > limits.maxModuleBytes) {
    return ToolFailure{ToolError::kTooLarge,
                       fmt::format("the module is {} bytes, over the limit of {} bytes "
                                   "(ToolLimits::maxModuleBytes)",
                                   bytes.size(), limits.maxModuleBytes)};
  }
  return bytes;
}

std::optional<ToolFailure> readPasses(const json& arguments, const ToolSpaces& spaces,
                                      const ToolLimits& limits, std::vector<std::int64_t>& out) {
  std::vector<std::string> names;
  if (auto failure = readStrings(arguments, "passes", names)) return failure;
  if (names.size() > limits.maxPassesPerCall) {
    return ToolFailure{ToolError::kTooLarge,
                       fmt::format("{} passes in one call, over the limit of {} "
                                   "(ToolLimits::maxPassesPerCall): split them over calls",
                                   names.size(), limits.maxPassesPerCall)};
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto index = spaces.passes.findChoice(names[i]);
    if (!index.ok()) {
      return ToolFailure{
          ToolError::kUnknownPass,
          fmt::format("unknown pass '{}' (passes[{}]): {}", names[i], i, index.status().message())};
    }
    out.push_back(*index);
  }
  return std::nullopt;
}

std::optional<ToolFailure> readObserve(const json& arguments, const ToolSpaces& spaces,
                                       std::vector<std::string>& out) {
  if (auto failure = readStrings(arguments, "observe", out)) return failure;
  const std::vector<std::string> offered = spaces.observationNames();
  for (const std::string& name : out) {
    if (std::find(offered.begin(), offered.end(), name) == offered.end()) {
      std::string names;
      for (const std::string& known : offered) names += (names.empty() ? "" : ", ") + known;
      return ToolFailure{ToolError::kUnknownObservation,
                         fmt::format("no observation '{}'{}: the tools offer {}", name,
                                     didYouMean(name, offered), names)};
    }
  }
  std::vector<std::string> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return invalid("'observe' names an observation twice");
  }
  return std::nullopt;
}

// episode, or benchmark or module (with passes): exactly one of the three.
std::optional<ToolFailure> readState(const std::string& tool, const json& arguments,
                                     const ToolSpaces& spaces, const ToolLimits& limits,
                                     StateRef& state) {
  std::string module;
  if (auto f = readString(arguments, "episode", state.episode)) return f;
  if (auto f = readString(arguments, "benchmark", state.benchmark)) return f;
  if (auto f = readString(arguments, "module", module)) return f;
  if (auto f = readPasses(arguments, spaces, limits, state.passes)) return f;
  const int given = !state.episode.empty() + !state.benchmark.empty() + !module.empty();
  if (given != 1) {
    return invalid(fmt::format("{} needs exactly one of 'episode', 'benchmark' and 'module'{}",
                               tool, given == 0 ? "" : " (several were given)"));
  }
  if (!state.episode.empty() && tool != kApplyPasses && arguments.contains("passes")) {
    return invalid(
        fmt::format("{} takes 'passes' with a benchmark or module only: apply "
                    "passes to an episode with apply_passes",
                    tool));
  }
  if (!module.empty()) {
    auto bytes = readModule(module, limits);
    if (auto* failure = std::get_if<ToolFailure>(&bytes)) return *failure;
    state.module = std::move(std::get<std::string>(bytes));
    state.benchmark = programs::userBenchmarkUri("module", *state.module);
  }
  return std::nullopt;
}

std::optional<ToolFailure> readToolSpecific(ToolRequest& request, const json& arguments,
                                            const ToolSpaces& spaces, const ToolLimits& limits) {
  if (request.tool == kApplyPasses || request.tool == kObserve) {
    if (auto f = readObserve(arguments, spaces, request.observe)) return f;
  }
  if (request.tool == kApplyPasses) {
    if (!arguments.contains("passes")) return invalid("apply_passes needs 'passes'");
    if (auto it = arguments.find("keep_episode"); it != arguments.end()) {
      if (!it->is_boolean()) return invalid("'keep_episode' must be true or false");
      request.keepEpisode = it->get<bool>();
    }
    if (request.keepEpisode && !request.state.episode.empty()) {
      return invalid("'keep_episode' starts a new episode: not with 'episode', which continues");
    }
  }
  if (request.tool == kObserve && request.observe.empty()) {
    return invalid("observe needs 'observe', a non-empty list of observation names");
  }
  if (request.tool == kIrText) {
    auto it = arguments.find("max_bytes");
    if (it == arguments.end() || !it->is_number_integer() || it->get<std::int64_t>() < 1) {
      return invalid("ir_text needs 'max_bytes', a positive integer");
    }
    request.maxBytes = it->get<std::uint64_t>();
    if (request.maxBytes > limits.maxIrTextBytes) {
      return ToolFailure{ToolError::kTooLarge,
                         fmt::format("max_bytes {} is over the limit of {} "
                                     "(ToolLimits::maxIrTextBytes)",
                                     request.maxBytes, limits.maxIrTextBytes)};
    }
  }
  return std::nullopt;
}

}  // namespace

bool isBitcode(std::string_view bytes) {
  return bytes.starts_with(std::string_view("BC\xC0\xDE", 4)) ||
         bytes.starts_with(std::string_view("\xDE\xC0\x17\x0B", 4));
}

ParsedCall parseCall(std::string_view tool, std::string_view argumentsJson,
                     const ToolSpaces& spaces, const ToolLimits& limits) {
  const std::vector<std::string>& tools = toolNames();
  if (std::find(tools.begin(), tools.end(), tool) == tools.end()) {
    std::string names;
    for (const std::string& name : tools) names += (names.empty() ? "" : ", ") + name;
    return ToolFailure{ToolError::kUnknownTool, fmt::format("no tool '{}'{}: the tools are {}",
                                                            tool, didYouMean(tool, tools), names)};
  }
  // Bounded before parsing: a module is the largest argument there is.
  const std::uint64_t maxArguments = limits.maxModuleBytes * 4 / 3 + (std::uint64_t{64} << 10);
  if (argumentsJson.size() > maxArguments) {
    return ToolFailure{ToolError::kTooLarge,
                       fmt::format("the arguments of {} are {} bytes, over the limit of {} (a "
                                   "module of ToolLimits::maxModuleBytes in base64, and 64 KiB)",
                                   tool, argumentsJson.size(), maxArguments)};
  }
  json arguments = json::parse(argumentsJson, nullptr, /*allow_exceptions=*/false);
  if (arguments.is_discarded() || !arguments.is_object()) {
    return ToolFailure{ToolError::kInvalidJson,
                       fmt::format("the arguments of {} are not a JSON object", tool)};
  }
  ToolRequest request;
  request.tool = std::string(tool);
  if (auto f = checkKeys(request.tool, arguments)) return *f;
  if (auto f = readState(request.tool, arguments, spaces, limits, request.state)) return *f;
  if (auto f = readToolSpecific(request, arguments, spaces, limits)) return *f;
  if ((request.tool == kForkEpisode || request.tool == kEndEpisode) &&
      request.state.episode.empty()) {
    return invalid(fmt::format("{} needs 'episode'", tool));
  }
  return request;
}

}  // namespace kiln::agent_tools
