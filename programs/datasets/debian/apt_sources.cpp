#include "programs/datasets/debian/apt_sources.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace kiln::debian {

namespace {

std::string_view trim(std::string_view s) {
  const char* space = " \t\r";
  std::size_t begin = s.find_first_not_of(space);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(space) - begin + 1);
}

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.emplace_back(s.substr(start, i - start));
  }
  return out;
}

std::vector<std::string_view> lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    out.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

bool isFlat(std::string_view suite) { return !suite.empty() && suite.back() == '/'; }

Status suiteNeedsComponents(const AptRepository& repository, const std::string& where) {
  if (repository.components.empty() && !isFlat(repository.suite)) {
    return invalidArgument(where + ": suite " + repository.suite +
                           " names no components (only a flat suite ending in \"/\" may)");
  }
  return okStatus();
}

// One deb822 stanza: field name (lower case) -> value, continuation lines joined by '\n'.
using Stanza = std::map<std::string, std::string>;

std::string lowered(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::vector<std::pair<std::size_t, Stanza>> stanzas(std::string_view text) {
  std::vector<std::pair<std::size_t, Stanza>> out;
  Stanza current;
  std::string lastField;
  std::size_t lineNumber = 0, startLine = 0;
  auto flush = [&] {
    if (!current.empty()) out.emplace_back(startLine, std::move(current));
    current.clear();
    lastField.clear();
  };
  for (std::string_view line : lines(text)) {
    ++lineNumber;
    if (!line.empty() && line.front() == '#') continue;
    if (trim(line).empty()) {
      flush();
      continue;
    }
    if (line.front() == ' ' || line.front() == '\t') {
      if (!lastField.empty()) current[lastField] += "\n" + std::string(trim(line));
      continue;
    }
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // apt rejects it too; nothing to take
    if (current.empty()) startLine = lineNumber;
    lastField = lowered(trim(line.substr(0, colon)));
    current[lastField] = std::string(trim(line.substr(colon + 1)));
  }
  flush();
  return out;
}

}  // namespace

Result<std::vector<AptRepository>> parseOneLineSources(std::string_view text) {
  std::vector<AptRepository> out;
  std::size_t lineNumber = 0;
  for (std::string_view raw : lines(text)) {
    ++lineNumber;
    std::string_view line = trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    std::string where = "sources.list line " + std::to_string(lineNumber);
    std::size_t typeEnd = line.find_first_of(" \t");
    if (line.substr(0, typeEnd) != "deb") continue;  // deb-src and anything else
    std::string_view rest = trim(line.substr(typeEnd));
    AptRepository repository;
    if (!rest.empty() && rest.front() == '[') {
      std::size_t close = rest.find(']');
      if (close == std::string_view::npos) return invalidArgument(where + ": \"[\" is not closed");
      repository.options = std::string(trim(rest.substr(1, close - 1)));
      rest = trim(rest.substr(close + 1));
    }
    std::vector<std::string> fields = words(rest);
    if (fields.size() < 2) return invalidArgument(where + ": a deb line needs a URI and a suite");
    repository.uri = fields[0];
    repository.suite = fields[1];
    repository.components.assign(fields.begin() + 2, fields.end());
    KILN_RETURN_IF_ERROR(suiteNeedsComponents(repository, where));
    out.push_back(std::move(repository));
  }
  return out;
}

Result<std::vector<AptRepository>> parseDeb822Sources(std::string_view text) {
  std::vector<AptRepository> out;
  for (auto& [line, stanza] : stanzas(text)) {
    std::string where = "the stanza at line " + std::to_string(line);
    std::vector<std::string> types = words(stanza["types"]);
    if (std::find(types.begin(), types.end(), "deb") == types.end()) continue;
    if (lowered(trim(stanza["enabled"])) == "no") continue;
    std::vector<std::string> uris = words(stanza["uris"]);
    std::vector<std::string> suites = words(stanza["suites"]);
    if (uris.empty() || suites.empty()) return invalidArgument(where + " has no URIs or no Suites");
    std::string options;
    const std::string& signedBy = stanza["signed-by"];
    // A path (or several) is kept; a key pasted into the field is not an option value.
    if (!signedBy.empty() && signedBy.find('\n') == std::string::npos) {
      std::vector<std::string> keyrings = words(signedBy);
      options = "signed-by=";
      for (std::size_t i = 0; i < keyrings.size(); ++i) options += (i ? "," : "") + keyrings[i];
    }
    for (const std::string& uri : uris) {
      for (const std::string& suite : suites) {
        AptRepository repository{options, uri, suite, words(stanza["components"])};
        KILN_RETURN_IF_ERROR(suiteNeedsComponents(repository, where));
        out.push_back(std::move(repository));
      }
    }
  }
  return out;
}

std::string debSrcList(const std::vector<AptRepository>& repositories) {
  std::string out;
  std::vector<AptRepository> written;
  for (const AptRepository& repository : repositories) {
    if (std::find(written.begin(), written.end(), repository) != written.end()) continue;
    written.push_back(repository);
    out += "deb-src ";
    if (!repository.options.empty()) out += "[" + repository.options + "] ";
    out += repository.uri + " " + repository.suite;
    for (const std::string& component : repository.components) out += " " + component;
    out += "\n";
  }
  return out;
}

}  // namespace kiln::debian
