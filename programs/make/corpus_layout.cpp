#include "programs/make/corpus_layout.h"

#include <algorithm>
#include <map>

#include "common/base/json_text.h"
#include "programs/make/json_tree.h"

namespace kiln::programs {
namespace {

Status badName(std::string_view name, const std::string& why) {
  return invalidArgument("module name '" + std::string(name) + "' " + why);
}

}  // namespace

std::filesystem::path commonSourceRoot(const std::vector<std::filesystem::path>& files) {
  if (files.empty()) return {};
  std::filesystem::path root = files.front().lexically_normal().parent_path();
  for (const auto& file : files) {
    std::filesystem::path dir = file.lexically_normal().parent_path();
    std::filesystem::path shared;
    auto a = root.begin();
    auto b = dir.begin();
    for (; a != root.end() && b != dir.end() && *a == *b; ++a, ++b) shared /= *a;
    root = shared;
  }
  return root;
}

Status checkModuleName(std::string_view name) {
  if (name.empty()) return badName(name, "is empty");
  for (std::size_t i = 0; i < name.size(); ++i) {
    auto byte = static_cast<unsigned char>(name[i]);
    if (byte <= 0x20 || byte >= 0x7f) {
      return badName(name, "has a space, control or non-ASCII byte at offset " + std::to_string(i));
    }
    if (byte == '%' || byte == '?' || byte == '#' || byte == '\\') {
      return badName(name,
                     std::string("has '") + static_cast<char>(byte) + "', not allowed in URIs");
    }
  }
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t slash = std::min(name.find('/', start), name.size());
    std::string_view segment = name.substr(start, slash - start);
    if (segment.empty() || segment == "." || segment == "..") {
      return badName(name, "has an empty, '.' or '..' segment");
    }
    start = slash + 1;
  }
  return okStatus();
}

Result<std::string> moduleNameFor(const std::filesystem::path& source,
                                  const std::filesystem::path& sourceRoot,
                                  std::string_view prefix) {
  std::filesystem::path relative = source.lexically_normal().lexically_relative(sourceRoot);
  if (relative.empty() || *relative.begin() == "..") {
    return invalidArgument(source.string() + " is not below the source root " +
                           sourceRoot.string());
  }
  relative.replace_extension();
  std::string name = relative.generic_string();
  if (!prefix.empty()) name = std::string(prefix) + "/" + name;
  KILN_RETURN_IF_ERROR(checkModuleName(name));
  return name;
}

std::string corpusDescriptionText(const std::vector<std::string>& modules) {
  std::string text = "{\n  \"has_thinlto\": false,\n  \"modules\": [";
  for (std::size_t i = 0; i < modules.size(); ++i) {
    text += (i == 0 ? "\n    \"" : ",\n    \"") + jsonEscape(modules[i]) + "\"";
  }
  text += modules.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return text;
}

Result<std::vector<std::string>> parseCorpusDescription(std::string_view text) {
  constexpr std::string_view kWhat = "corpus_description.json";
  KILN_ASSIGN_OR_RETURN(JsonValue document, parseJson(text, kWhat));
  if (document.kind != JsonValue::Kind::kObject) {
    return invalidArgument("corpus_description.json is not a JSON object");
  }
  for (const auto& [key, value] : document.object) {
    if (key == "has_thinlto") {
      if (value.kind != JsonValue::Kind::kBool) {
        return invalidArgument("corpus_description.json: \"has_thinlto\" is not true or false");
      }
      if (value.boolean) {
        return invalidArgument(
            "corpus_description.json describes a ThinLTO corpus; modules extracted by kiln "
            "are not ThinLTO modules, so they cannot join it");
      }
    } else if (key != "modules") {
      return invalidArgument("corpus_description.json has \"" + key +
                             "\", which kiln would drop when adding modules; extract into "
                             "another directory");
    }
  }
  const JsonValue* modules = document.member("modules");
  if (modules == nullptr || modules->kind != JsonValue::Kind::kArray) {
    return invalidArgument("corpus_description.json has no \"modules\" list");
  }
  std::vector<std::string> names;
  for (const JsonValue& module : modules->array) {
    if (module.kind != JsonValue::Kind::kString) {
      return invalidArgument("corpus_description.json lists a module that is not a string");
    }
    names.push_back(module.string);
  }
  return names;
}

std::string trimDiagnostics(std::string_view text, std::size_t maxLines, std::size_t maxBytes) {
  std::size_t end = 0;
  std::size_t lines = 0;
  while (end < text.size() && lines < maxLines) {
    std::size_t newline = text.find('\n', end);
    end = newline == std::string_view::npos ? text.size() : newline + 1;
    ++lines;
  }
  end = std::min(end, maxBytes);
  std::string out(text.substr(0, end));
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (end < text.size()) {
    out += "\n[... " + std::to_string(text.size() - end) + " more bytes of diagnostics cut]";
  }
  return out;
}

ExtractionPlan planExtraction(const std::vector<DatabaseEntry>& entries,
                              const PlanOptions& options) {
  ExtractionPlan plan;
  std::map<std::filesystem::path, std::string> modulesBySource;
  std::map<std::string, std::string, std::less<>> sourcesByModule;
  auto skip = [&](std::size_t i, const std::filesystem::path& source, std::string module,
                  std::string_view reason, std::string detail) {
    plan.skipped.emplace_back(i, SkippedSource{source.string(), std::move(module),
                                               std::string(reason), std::move(detail)});
  };
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const DatabaseEntry& entry = entries[i];
    const std::filesystem::path& file = entry.command.file;
    if (!entry.problem.empty()) {
      skip(i, file, "", skip_reason::kUnusableEntry, entry.problem);
      continue;
    }
    auto name = moduleNameFor(file, options.sourceRoot, options.prefix);
    if (!name.ok()) {
      auto relative = file.lexically_normal().lexically_relative(options.sourceRoot);
      bool outside = relative.empty() || *relative.begin() == "..";
      skip(i, file, "", outside ? skip_reason::kOutsideRoot : skip_reason::kBadName,
           name.status().message());
      continue;
    }
    auto compile =
        bitcodeCompile(entry.command, partialBitcodePath(options.output, *name), options.compilers);
    if (!compile.ok()) {
      skip(i, file, *name, skip_reason::kNotOneCompile, compile.status().message());
      continue;
    }
    if (auto seen = modulesBySource.find(compile->source); seen != modulesBySource.end()) {
      skip(i, file, *name, skip_reason::kCompiledTwice,
           "kept the build's first compile of it, as module " + seen->second);
      continue;
    }
    if (options.existingModules.count(*name) != 0) {
      skip(i, file, *name, skip_reason::kAlreadyInCorpus,
           "the corpus already has a module " + *name);
      continue;
    }
    if (auto taken = sourcesByModule.find(*name); taken != sourcesByModule.end()) {
      skip(i, file, *name, skip_reason::kNameTaken, "by " + taken->second);
      continue;
    }
    modulesBySource.emplace(compile->source, *name);
    sourcesByModule.emplace(*name, file.string());
    plan.modules.push_back(PlannedModule{i, *name, std::move(*compile)});
  }
  return plan;
}

std::filesystem::path bitcodePath(const std::filesystem::path& output, std::string_view module) {
  return output / (std::string(module) + ".bc");
}

std::filesystem::path partialBitcodePath(const std::filesystem::path& output,
                                         std::string_view module) {
  return output / (std::string(module) + ".bc.partial");
}

std::filesystem::path cmdPath(const std::filesystem::path& output, std::string_view module) {
  return output / (std::string(module) + ".cmd");
}

}  // namespace kiln::programs
