#include "tools/agent_tools/tool_schema.h"

#include <fmt/format.h>

#include <algorithm>

#include "tools/agent_tools/base64.h"
#include "tools/agent_tools/tool_error.h"

namespace kiln::agent_tools {
namespace {

using nlohmann::json;

json function(const char* name, std::string description, json properties,
              std::vector<std::string> required) {
  json parameters = {{"type", "object"},
                     {"properties", std::move(properties)},
                     {"required", std::move(required)},
                     {"additionalProperties", false}};
  return {{"type", "function"},
          {"function",
           {{"name", name},
            {"description", std::move(description)},
            {"parameters", std::move(parameters)}}}};
}

json stringProperty(std::string description) {
  return {{"type", "string"}, {"description", std::move(description)}};
}

json passListProperty(const ToolSpaces& spaces, const ToolLimits& limits) {
  return {{"type", "array"},
          {"items", {{"type", "string"}, {"enum", spaces.passes.names}}},
          {"maxItems", limits.maxPassesPerCall},
          {"description",
           fmt::format("LLVM passes to run in order, each named as opt-19 -passes= accepts it "
                       "(at most {} a call)",
                       limits.maxPassesPerCall)}};
}

json observeProperty(const ToolSpaces& spaces) {
  return {{"type", "array"},
          {"items", {{"type", "string"}, {"enum", spaces.observationNames()}}},
          {"uniqueItems", true},
          {"description",
           "observations of the state after the passes: IrInstructionCount (instructions), "
           "Autophase (56 program features), ObjectTextSizeBytes (.text bytes of the object "
           "file), the -O0/-O3/-Oz baselines, IrSha1 (a hash of the IR)"}};
}

// The properties that name a state: an episode, or a benchmark or a module
// with the passes to apply to it first.
json stateProperties(const ToolSpaces& spaces, const ToolLimits& limits) {
  return {
      {"episode", stringProperty("an episode handle from apply_passes or fork_episode")},
      {"benchmark", stringProperty("a benchmark URI, e.g. benchmark://kiln-bench-v0/crc32")},
      {"module", stringProperty(fmt::format(
                     "a module of your own: LLVM 19 IR text, or bitcode in base64 (at most {} "
                     "bytes); give benchmark or module, not both",
                     limits.maxModuleBytes))},
      {"passes", passListProperty(spaces, limits)},
  };
}

json integer() { return {{"type", "integer"}}; }
json nullable(json schema) { return {{"anyOf", {std::move(schema), {{"type", "null"}}}}}; }

json strictObject(json properties) {
  std::vector<std::string> required;
  for (const auto& [name, _] : properties.items()) required.push_back(name);
  return {{"type", "object"},
          {"properties", std::move(properties)},
          {"required", std::move(required)},
          {"additionalProperties", false}};
}

json observationsSchema(const ToolSpaces& spaces) {
  json properties = json::object();
  for (const Space& space : spaces.observations) properties[space.name] = valueSchema(space);
  return {{"type", "object"}, {"properties", properties}, {"additionalProperties", false}};
}

}  // namespace

const std::vector<std::string>& toolNames() {
  static const std::vector<std::string> names = {
      kApplyPasses, kObserve, kIrText, kValidate, kCompareBaselines, kForkEpisode, kEndEpisode};
  return names;
}

const std::vector<std::string>& offeredObservations() {
  static const std::vector<std::string> names = {"IrInstructionCount",
                                                 "IrInstructionCountO0",
                                                 "IrInstructionCountO3",
                                                 "IrInstructionCountOz",
                                                 "Autophase",
                                                 "AutophaseDict",
                                                 "InstCount",
                                                 "InstCountDict",
                                                 "ObjectTextSizeBytes",
                                                 "ObjectTextSizeO0",
                                                 "ObjectTextSizeO3",
                                                 "ObjectTextSizeOz",
                                                 "IrSha1"};
  return names;
}

std::vector<std::string> ToolSpaces::observationNames() const {
  std::vector<std::string> names;
  for (const Space& space : observations) names.push_back(space.name);
  return names;
}

Result<ToolSpaces> toolSpacesFrom(const client::SessionTypeSpaces& llvm) {
  if (llvm.actionSpaces.empty() || llvm.actionSpaces.front().kind != SpaceKind::kNamedDiscrete) {
    return invalidArgument("the session type has no named action space: not the llvm type");
  }
  ToolSpaces spaces;
  spaces.passes = llvm.actionSpaces.front();
  const std::vector<std::string>& offered = offeredObservations();
  for (const Space& space : llvm.observationSpaces) {
    if (std::find(offered.begin(), offered.end(), space.name) != offered.end()) {
      spaces.observations.push_back(space);
    }
  }
  if (findSpace(spaces.observations, "IrInstructionCount").ok()) return spaces;
  return invalidArgument("the session type has no IrInstructionCount observation: not llvm");
}

json toolSchema(const ToolSpaces& spaces, const ToolLimits& limits) {
  json state = stateProperties(spaces, limits);
  json apply = state;
  apply["observe"] = observeProperty(spaces);
  apply["keep_episode"] = {
      {"type", "boolean"},
      {"description",
       "true: keep the resulting state open as a new episode and return its handle (later "
       "calls continue or fork it); false (default): a stateless call"}};
  apply["episode"] = stringProperty(
      "continue this episode (its state moves on) instead of starting from a benchmark");
  json observe = state;
  observe["observe"] = observeProperty(spaces);
  json irText = state;
  irText["max_bytes"] = {{"type", "integer"},
                         {"minimum", 1},
                         {"maximum", limits.maxIrTextBytes},
                         {"description", "the most bytes of IR text to return"}};
  const json episodeOnly = {{"episode", stringProperty("an episode handle")}};
  return json::array({
      function(kApplyPasses,
               "Run LLVM passes on a benchmark, on a module of yours, or on an episode's state; "
               "returns the instruction count before and after and the observations asked for. "
               "Repeated pass-list prefixes on the same benchmark are not recompiled.",
               apply, {"passes"}),
      function(kObserve,
               "Observe a state (an episode, or a benchmark or module after passes) without "
               "changing it.",
               observe, {"observe"}),
      function(kIrText,
               "The LLVM IR text of a state, trimmed to max_bytes; the answer says how much was "
               "cut and which functions were left out.",
               irText, {"max_bytes"}),
      function(kValidate,
               "Check a state: LLVM's verifier, and where the benchmark has inputs, its program "
               "run against the unoptimized (-O0) program on each of them.",
               state, {}),
      function(kCompareBaselines,
               "The instruction count of a state beside the benchmark's -O0, -O3 and -Oz counts, "
               "and its ratio to -Oz (below 1: fewer instructions than -Oz).",
               state, {}),
      function(kForkEpisode, "Copy an episode: the copy continues independently.", episodeOnly,
               {"episode"}),
      function(kEndEpisode, "End an episode and free its handle.", episodeOnly, {"episode"}),
  });
}

json resultSchemas(const ToolSpaces& spaces) {
  const json observations = observationsSchema(spaces);
  std::vector<std::string> errorCodes;
  for (ToolError error : kAllToolErrors) errorCodes.emplace_back(toolErrorName(error));
  json schemas = json::object();
  schemas[kApplyPasses] = strictObject({
      {"benchmark", {{"type", "string"}}},
      {"passes_applied", integer()},
      {"passes_reused", integer()},
      {"instruction_count", strictObject({{"before", integer()}, {"after", integer()}})},
      {"observations", observations},
      {"episode", nullable({{"type", "string"}})},
  });
  schemas[kObserve] = strictObject({{"observations", observations}});
  schemas[kIrText] = strictObject({
      {"text", {{"type", "string"}}},
      {"bytes_shown", integer()},
      {"bytes_total", integer()},
      {"trimmed", {{"type", "boolean"}}},
      {"functions_cut", {{"type", "array"}, {"items", {{"type", "string"}}}}},
      {"note", {{"type", "string"}}},
  });
  schemas[kValidate] = strictObject({
      {"verdict", {{"enum", {"valid", "verified-only", "invalid"}}}},
      {"inputs", integer()},
      {"detail", {{"type", "string"}}},
  });
  schemas[kCompareBaselines] = strictObject({
      {"instruction_count", integer()},
      {"O0", integer()},
      {"O3", integer()},
      {"Oz", integer()},
      {"ratio_to_Oz", {{"type", "number"}}},
  });
  schemas[kForkEpisode] = strictObject({{"episode", {{"type", "string"}}}});
  schemas[kEndEpisode] = strictObject({{"ended", {{"const", true}}}});
  schemas["error"] = strictObject({{"error", strictObject({{"code", {{"enum", errorCodes}}},
                                                           {"message", {{"type", "string"}}}})}});
  for (auto& [name, schema] : schemas.items()) {
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema";
    schema["title"] = name;
  }
  return schemas;
}

json valueSchema(const Space& space) {
  switch (space.kind) {
    case SpaceKind::kDiscrete:
    case SpaceKind::kNamedDiscrete:
    case SpaceKind::kInt64:
      return integer();
    case SpaceKind::kDouble:
      return {{"type", "number"}};
    case SpaceKind::kInt64Box:
      return {{"type", "array"}, {"items", integer()}};
    case SpaceKind::kFloatBox:
    case SpaceKind::kDoubleBox:
      return {{"type", "array"}, {"items", {{"type", "number"}}}};
    case SpaceKind::kString:
    case SpaceKind::kBytes:
      return {{"type", "string"}};
    case SpaceKind::kList:
      return {{"type", "array"}};
    case SpaceKind::kDict: {
      json properties = json::object();
      for (const Space& member : space.members) properties[member.name] = valueSchema(member);
      return {{"type", "object"}, {"properties", properties}};
    }
    case SpaceKind::kAny:
      return json::object();
  }
  return json::object();
}

json valueJson(const Value& value) {
  return std::visit(
      [](const auto& v) -> json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, Bytes>) {
          return base64Encode(v.data);
        } else if constexpr (std::is_same_v<T, Int64Tensor> || std::is_same_v<T, FloatTensor> ||
                             std::is_same_v<T, DoubleTensor>) {
          return v.values;
        } else if constexpr (std::is_same_v<T, ValueList>) {
          json list = json::array();
          for (const Value& item : v) list.push_back(valueJson(item));
          return list;
        } else if constexpr (std::is_same_v<T, ValueDict>) {
          json object = json::object();
          for (const NamedValue& item : v) object[item.name] = valueJson(item.value);
          return object;
        } else {
          return v;
        }
      },
      value.data);
}

}  // namespace kiln::agent_tools
