#include "compilers/mlgo_session/module_flags.h"

#include <algorithm>
#include <string_view>

namespace kiln::mlgo_session {
namespace {

// Triples, CPU names and features are short words of these characters: a
// value that is not cannot be an option in disguise ("-load=...") or a path.
bool plainValue(std::string_view value, std::string_view extra = "") {
  if (value.empty() || value.size() > 128 || value.front() == '-') return false;
  return std::all_of(value.begin(), value.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-' || extra.find(c) != std::string_view::npos;
  });
}

std::optional<std::string> optLevel(std::string_view flag) {
  if (flag == "-O0" || flag == "-O1" || flag == "-O2" || flag == "-O3" || flag == "-Os" ||
      flag == "-Oz") {
    return std::string(flag);
  }
  if (flag == "-O") return "-O1";  // clang's spelling of -O1
  if (flag == "-Ofast" || flag == "-O4") return "-O3";
  return std::nullopt;
}

bool isX86(const std::optional<std::string>& triple) {
  // No triple: the host's, which for kiln's Debian amd64 workers is x86.
  return !triple || triple->starts_with("x86_64") || triple->starts_with("i386") ||
         triple->starts_with("i686");
}

}  // namespace

ModuleToolFlags mapModuleFlags(const std::vector<std::string>& command) {
  ModuleToolFlags flags;
  std::optional<std::string> march;
  auto valueAfter = [&](std::size_t& i) -> std::optional<std::string> {
    if (i + 1 >= command.size()) return std::nullopt;
    return command[++i];
  };
  for (std::size_t i = 0; i < command.size(); ++i) {
    const std::string& arg = command[i];
    std::string_view view(arg);
    if (auto level = optLevel(view)) {
      flags.optLevel = *level;
    } else if (view.starts_with("--target=") && plainValue(view.substr(9))) {
      flags.triple = std::string(view.substr(9));
    } else if (arg == "-target" || arg == "-triple") {
      std::size_t at = i;
      auto value = valueAfter(i);
      if (value && plainValue(*value)) {
        flags.triple = *value;
      } else {
        flags.ignored.push_back(arg);
        i = at;
      }
    } else if (view.starts_with("-mcpu=") && plainValue(view.substr(6))) {
      flags.cpu = std::string(view.substr(6));
    } else if (view.starts_with("-march=") && plainValue(view.substr(7))) {
      march = std::string(view.substr(7));
    } else if (arg == "-target-cpu") {
      std::size_t at = i;
      auto value = valueAfter(i);
      if (value && plainValue(*value)) {
        flags.cpu = *value;
      } else {
        flags.ignored.push_back(arg);
        i = at;
      }
    } else if (arg == "-target-feature") {
      std::size_t at = i;
      auto value = valueAfter(i);
      if (value && value->size() > 1 && (value->front() == '+' || value->front() == '-') &&
          plainValue(std::string_view(*value).substr(1))) {
        flags.features.push_back(*value);
      } else {
        flags.ignored.push_back(arg);
        i = at;
      }
    } else if (arg == "-fPIC" || arg == "-fpic" || arg == "-fPIE" || arg == "-fpie") {
      flags.pic = true;
    } else if (arg == "-fno-pic" || arg == "-fno-PIC" || arg == "-fno-pie" || arg == "-fno-PIE") {
      flags.pic = false;
    } else if (arg == "-mrelocation-model") {
      std::size_t at = i;
      auto value = valueAfter(i);
      if (value && (*value == "pic" || *value == "static")) {
        flags.pic = *value == "pic";
      } else {
        flags.ignored.push_back(arg);
        i = at;
      }
    } else {
      flags.ignored.push_back(arg);
    }
  }
  // -march names a CPU on x86 (clang's meaning there); elsewhere it names an
  // architecture, which llc takes from the triple instead. "native" would be
  // the worker's CPU, not the module's: ignored.
  if (march && !flags.cpu) {
    if (isX86(flags.triple) && *march != "native") {
      flags.cpu = *march;
    } else {
      flags.ignored.push_back("-march=" + *march);
    }
  }
  return flags;
}

std::vector<std::string> ModuleToolFlags::optTargetFlags() const {
  std::vector<std::string> out;
  if (triple) out.push_back("-mtriple=" + *triple);
  if (cpu) out.push_back("-mcpu=" + *cpu);
  if (!features.empty()) {
    std::string joined;
    for (const std::string& feature : features) joined += (joined.empty() ? "" : ",") + feature;
    out.push_back("-mattr=" + joined);
  }
  return out;
}

std::vector<std::string> ModuleToolFlags::llcFlags() const {
  std::vector<std::string> out;
  if (optLevel) out.push_back(*optLevel == "-Os" || *optLevel == "-Oz" ? "-O2" : *optLevel);
  std::vector<std::string> target = optTargetFlags();
  out.insert(out.end(), target.begin(), target.end());
  if (pic) out.push_back("-relocation-model=pic");
  return out;
}

}  // namespace kiln::mlgo_session
