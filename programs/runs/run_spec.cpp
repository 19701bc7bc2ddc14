#include "programs/runs/run_spec.h"

#include <fmt/format.h>

#include <array>

#include "programs/make/json_tree.h"

namespace kiln::runs {
namespace {

using programs::JsonValue;

constexpr std::array<std::string_view, 4> kAllowedLibraries = {"m", "pthread", "rt", "dl"};

// A name from the spec, as a message quotes it: at most 64 bytes, so that a
// message does not grow with the input.
std::string quoted(std::string_view name) {
  constexpr std::size_t kShown = 64;
  if (name.size() <= kShown) return fmt::format("\"{}\"", name);
  return fmt::format("\"{}...\" ({} bytes)", name.substr(0, kShown), name.size());
}

// The strings of `value`, an array of at most `maxItems` strings of at most
// `maxBytes` each; the reason it is not, for `field`.
Result<std::vector<std::string>> stringArray(const JsonValue& value, std::string_view field,
                                             std::size_t maxItems, std::size_t maxBytes) {
  if (value.kind != JsonValue::Kind::kArray) {
    return invalidArgument(fmt::format("\"{}\" is not an array of strings", field));
  }
  if (value.array.size() > maxItems) {
    return invalidArgument(
        fmt::format("\"{}\" has {} items, at most {}", field, value.array.size(), maxItems));
  }
  std::vector<std::string> strings;
  for (const JsonValue& item : value.array) {
    if (item.kind != JsonValue::Kind::kString) {
      return invalidArgument(fmt::format("\"{}\" holds something that is not a string", field));
    }
    if (item.string.size() > maxBytes) {
      return invalidArgument(fmt::format("an item of \"{}\" has {} bytes, at most {}", field,
                                         item.string.size(), maxBytes));
    }
    strings.push_back(item.string);
  }
  return strings;
}

Result<ProgramInput> parseInput(const JsonValue& value, const InputFileReader& readInputFile) {
  if (value.kind != JsonValue::Kind::kObject) {
    return invalidArgument("an input is not an object");
  }
  ProgramInput input;
  bool hasStdin = false;
  bool hasStdinFile = false;
  for (const auto& [name, member] : value.object) {
    if (name == "args") {
      KILN_ASSIGN_OR_RETURN(input.args, stringArray(member, "args", kMaxArgs, kMaxArgBytes));
    } else if (name == "stdin") {
      if (member.kind != JsonValue::Kind::kString) {
        return invalidArgument("\"stdin\" is not a string");
      }
      if (member.string.size() > kMaxStdinBytes) {
        return invalidArgument(fmt::format("\"stdin\" has {} bytes, at most {}",
                                           member.string.size(), kMaxStdinBytes));
      }
      input.stdinBytes = member.string;
      hasStdin = true;
    } else if (name == "stdin_file") {
      if (member.kind != JsonValue::Kind::kString) {
        return invalidArgument("\"stdin_file\" is not a string");
      }
      if (!readInputFile) {
        return invalidArgument(
            "\"stdin_file\" names a file, which only a corpus's own run spec may do");
      }
      auto bytes = readInputFile(member.string);
      if (!bytes.ok()) {
        return invalidArgument(fmt::format("\"stdin_file\" {} cannot be read: {}",
                                           quoted(member.string), bytes.status().message()));
      }
      input.stdinBytes = std::move(*bytes);
      hasStdinFile = true;
    } else {
      return invalidArgument(
          fmt::format("an input has an unknown member {} (it may have \"args\", \"stdin\" "
                      "and \"stdin_file\")",
                      quoted(name)));
    }
  }
  if (hasStdin && hasStdinFile) {
    return invalidArgument("an input has both \"stdin\" and \"stdin_file\"");
  }
  return input;
}

Result<RunSpec> parseDocument(std::string_view json, const InputFileReader& readInputFile) {
  if (json.size() > kMaxSpecBytes) {
    return invalidArgument(fmt::format("it has {} bytes, at most {}", json.size(), kMaxSpecBytes));
  }
  KILN_ASSIGN_OR_RETURN(JsonValue document, programs::parseJson(json, "the run spec"));
  if (document.kind != JsonValue::Kind::kObject) return invalidArgument("it is not an object");
  RunSpec spec;
  bool hasInputs = false;
  for (const auto& [name, member] : document.object) {
    if (name == "inputs") {
      hasInputs = true;
      if (member.kind != JsonValue::Kind::kArray) {
        return invalidArgument("\"inputs\" is not an array");
      }
      if (member.array.empty() || member.array.size() > kMaxInputs) {
        return invalidArgument(fmt::format("\"inputs\" has {} inputs; it needs 1 to {}",
                                           member.array.size(), kMaxInputs));
      }
      for (const JsonValue& one : member.array) {
        KILN_ASSIGN_OR_RETURN(ProgramInput input, parseInput(one, readInputFile));
        spec.inputs.push_back(std::move(input));
      }
    } else if (name == "libraries") {
      KILN_ASSIGN_OR_RETURN(spec.libraries,
                            stringArray(member, "libraries", kAllowedLibraries.size(), 16));
      for (const std::string& library : spec.libraries) {
        if (!isAllowedLibrary(library)) {
          return invalidArgument(fmt::format(
              "library {} is not one a benchmark may link (m, pthread, rt, dl)", quoted(library)));
        }
      }
    } else {
      return invalidArgument(fmt::format(
          "unknown member {} (a run spec has \"inputs\" and \"libraries\")", quoted(name)));
    }
  }
  if (!hasInputs) return invalidArgument("it has no \"inputs\"");
  return spec;
}

}  // namespace

bool isAllowedLibrary(std::string_view name) {
  for (std::string_view allowed : kAllowedLibraries) {
    if (name == allowed) return true;
  }
  return false;
}

Result<RunSpec> parseRunSpec(std::string_view json, std::string_view what,
                             const InputFileReader& readInputFile) {
  auto spec = parseDocument(json, readInputFile);
  if (!spec.ok()) {
    return invalidArgument(
        fmt::format("{} is not a valid run spec: {}", what, spec.status().message()));
  }
  return spec;
}

RunSpec kilnBenchRunSpec() { return RunSpec{{{}, {{"1"}, ""}, {{"2"}, ""}, {{"3"}, ""}}, {"m"}}; }

RunSpec csmithRunSpec() { return RunSpec{{{}}, {}}; }

std::string describeInput(const RunSpec& spec, std::size_t index) {
  if (index >= spec.inputs.size()) return fmt::format("input {}", index + 1);
  const ProgramInput& input = spec.inputs[index];
  std::string text = fmt::format("input {} (", index + 1);
  text += input.args.empty() ? "no args" : fmt::format("args: {}", fmt::join(input.args, " "));
  if (!input.stdinBytes.empty())
    text += fmt::format(", {} bytes of stdin", input.stdinBytes.size());
  return text + ")";
}

}  // namespace kiln::runs
