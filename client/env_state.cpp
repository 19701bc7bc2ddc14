#include <kiln/client/env_state.h>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>

#include "common/base/unique_fd.h"
#include "common/security/file_reader.h"

namespace kiln::client {
namespace {

constexpr std::array<std::string_view, 4> kColumns = {"benchmark", "reward", "walltime",
                                                      "commandline"};
constexpr std::string_view kHeader = "benchmark,reward,walltime,commandline";

// Python's repr(float): the shortest digits that read back exactly, in
// positional notation for exponents in [-4, 16) (with ".0" when integral),
// else d.ddde+XX. Files written by kiln and by Python are then byte-equal.
std::string pythonFloat(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  std::array<char, 64> buffer{};
  auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                 std::chars_format::scientific);
  std::string_view text(buffer.data(), static_cast<std::size_t>(end - buffer.data()));
  std::string sign;
  if (text.starts_with('-')) {
    sign = "-";
    text.remove_prefix(1);
  }
  const std::size_t e = text.find('e');
  std::string digits(text.substr(0, e));
  std::erase(digits, '.');
  int exponent = 0;
  std::string_view exponentText = text.substr(e + 1);
  if (exponentText.starts_with('+')) exponentText.remove_prefix(1);
  std::from_chars(exponentText.data(), exponentText.data() + exponentText.size(), exponent);
  if (exponent >= -4 && exponent < 16) {
    std::string out;
    if (exponent < 0) {
      out = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    } else {
      const auto integral = static_cast<std::size_t>(exponent) + 1;
      if (digits.size() <= integral) {
        out = digits + std::string(integral - digits.size(), '0') + ".0";
      } else {
        out = digits.substr(0, integral) + "." + digits.substr(integral);
      }
    }
    return sign + out;
  }
  std::string mantissa = digits.substr(0, 1);
  if (digits.size() > 1) mantissa += "." + digits.substr(1);
  return fmt::format("{}{}e{}{:02d}", sign, mantissa, exponent < 0 ? '-' : '+', std::abs(exponent));
}

// A field as csv.writer (QUOTE_MINIMAL) writes it.
std::string csvField(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string_view trimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

struct Record {
  std::size_t line = 0;  // 1-based line where the record starts
  std::vector<std::string> fields;
};

// RFC 4180 records, lenient where Python's csv module is (a quote inside an
// unquoted field is kept), strict where guessing would lose data.
Result<std::vector<Record>> splitRecords(std::string_view text) {
  std::vector<Record> records;
  std::size_t line = 1;
  std::size_t i = 0;
  while (i < text.size()) {
    Record record{line, {}};
    bool recordDone = false;
    while (!recordDone) {
      std::string field;
      if (i < text.size() && text[i] == '"') {
        const std::size_t quoteLine = line;
        ++i;
        bool closed = false;
        while (i < text.size()) {
          const char c = text[i++];
          if (c == '"') {
            if (i < text.size() && text[i] == '"') {
              field += '"';
              ++i;
              continue;
            }
            closed = true;
            break;
          }
          if (c == '\n') ++line;
          field += c;
        }
        if (!closed) {
          return invalidArgument(fmt::format(
              "line {}: a quoted field is never closed (a '\"' is missing)", quoteLine));
        }
        if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          return invalidArgument(fmt::format(
              "line {}: text after the closing quote of a field (quote a '\"' inside a quoted "
              "field as '\"\"')",
              line));
        }
      } else {
        while (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          field += text[i++];
        }
      }
      record.fields.push_back(std::move(field));
      if (i < text.size() && text[i] == ',') {
        ++i;
        continue;
      }
      if (i < text.size() && text[i] == '\r') ++i;
      if (i < text.size() && text[i] == '\n') {
        ++i;
        ++line;
      }
      recordDone = true;
    }
    const bool blank = record.fields.size() == 1 && record.fields[0].empty();
    if (!blank) records.push_back(std::move(record));
  }
  return records;
}

Result<std::optional<double>> parseNumber(std::string_view text, std::string_view column,
                                          std::size_t line) {
  text = trimSpaces(text);
  if (text.empty()) return std::optional<double>();
  // from_chars takes no '+'; Python's float() (CompilerGym's reader) does.
  std::string_view digits = text.starts_with('+') ? text.substr(1) : text;
  double value = 0;
  const char* end = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (digits.empty() || digits.starts_with('-') != text.starts_with('-') || ec != std::errc() ||
      ptr != end || !std::isfinite(value)) {
    return invalidArgument(
        fmt::format("line {}: {} '{}' is not a finite number", line, column, text));
  }
  return std::optional<double>(value);
}

// The column of each of kColumns in a record, from a header or by default,
// and of the optional validity column when the header has one.
struct ColumnMap {
  std::array<std::size_t, 4> index = {0, 1, 2, 3};
  std::optional<std::size_t> validity;
};

bool isValidityWord(std::string_view word) {
  for (std::string_view known : kValidityWords) {
    if (word == known) return true;
  }
  return word.empty();
}

Result<std::optional<ColumnMap>> readHeader(const Record& first) {
  bool mentionsAny = false;
  for (const std::string& field : first.fields) {
    for (std::string_view column : kColumns) mentionsAny |= trimSpaces(field) == column;
  }
  if (!mentionsAny) return std::optional<ColumnMap>();
  ColumnMap map;
  std::array<bool, 4> found{};
  for (std::size_t f = 0; f < first.fields.size(); ++f) {
    const std::string_view name = trimSpaces(first.fields[f]);
    bool known = false;
    for (std::size_t c = 0; c < kColumns.size(); ++c) {
      if (name != kColumns[c]) continue;
      if (found[c]) {
        return invalidArgument(
            fmt::format("line {}: the header names column '{}' twice", first.line, name));
      }
      found[c] = true;
      map.index[c] = f;
      known = true;
    }
    if (!known && name == kValidityColumn && !map.validity) {
      map.validity = f;
      known = true;
    }
    if (!known) {
      return invalidArgument(
          fmt::format("line {}: the header has an unknown column '{}' (a "
                      "state file's columns are {})",
                      first.line, name, kHeader));
    }
  }
  for (std::size_t c = 0; c < kColumns.size(); ++c) {
    if (!found[c]) {
      return invalidArgument(fmt::format("line {}: the header lacks column '{}' (expected {})",
                                         first.line, kColumns[c], kHeader));
    }
  }
  return std::optional<ColumnMap>(map);
}

bool isOptProgram(std::string_view token) {
  const std::size_t slash = token.rfind('/');
  if (slash != std::string_view::npos) token.remove_prefix(slash + 1);
  if (!token.starts_with("opt")) return false;
  token.remove_prefix(3);
  if (token.empty()) return true;
  if (!token.starts_with('-') || token.size() == 1) return false;
  return token.substr(1).find_first_not_of("0123456789") == std::string_view::npos;
}

std::vector<std::string_view> splitWords(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
}

// A `-passes=` value as the shell reads it: Python's shlex.quote wraps a
// pipeline with <, > or ( in single quotes.
Result<std::string_view> unquotedPipeline(std::string_view value) {
  if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
    value = value.substr(1, value.size() - 2);
  }
  if (value.empty() || value.find_first_of("'\"\\") != std::string_view::npos) {
    return invalidArgument(fmt::format("-passes='{}' is not one action's pipeline", value));
  }
  return value;
}

// kiln.compiler_gym's chain: each `|`-separated stage one opt-19 run with
// one `-passes=`, besides its input ("input.bc", "input.ll" or "-"), "-S"
// and "-o <file>". Its pipelines, in order.
Result<std::vector<std::string_view>> chainPipelines(const std::vector<std::string_view>& words) {
  std::vector<std::string_view> pipelines;
  std::size_t i = 0;
  while (i < words.size()) {
    if (!isOptProgram(words[i])) {
      return invalidArgument(fmt::format(
          "'{}' begins a stage of the commandline: each stage is one `opt-19 -passes=<action's "
          "pipeline>`, piped into the next",
          words[i].substr(0, 40)));
    }
    std::optional<std::string_view> pipeline;
    for (++i; i < words.size() && words[i] != "|"; ++i) {
      const std::string_view word = words[i];
      if (word == "-o") {
        if (++i == words.size())
          return invalidArgument("the commandline ends with '-o' and no file");
      } else if (word.starts_with("-passes=") || word.starts_with("--passes=")) {
        if (pipeline) return invalidArgument("a stage of the commandline has two -passes=");
        KILN_ASSIGN_OR_RETURN(pipeline, unquotedPipeline(word.substr(word.find('=') + 1)));
      } else if (word != "-" && word != "-S" && word.starts_with('-')) {
        return invalidArgument(fmt::format(
            "'{}' in a -passes= commandline: each stage is one `opt-19 -passes=<pipeline>`",
            word.substr(0, 40)));
      }  // else the stage's input file
    }
    if (!pipeline) return invalidArgument("a stage of the commandline has no -passes=");
    pipelines.push_back(*pipeline);
    if (i < words.size()) ++i;  // the "|"
  }
  return pipelines;
}

bool hasPassesFlag(const std::vector<std::string_view>& words) {
  return std::any_of(words.begin(), words.end(), [](std::string_view word) {
    return word.starts_with("-passes=") || word.starts_with("--passes=");
  });
}

}  // namespace

Result<std::int64_t> findAction(const Space& space, std::string_view word) {
  Result<std::int64_t> index = space.findChoice(word);
  if (index.ok()) return index;
  const Value* pipelines = findInDict(space.metadata, "pipelines");
  if (pipelines != nullptr && pipelines->is<ValueList>()) {
    const ValueList& list = pipelines->as<ValueList>();
    for (std::size_t i = 0; i < list.size() && i < space.names.size(); ++i) {
      const auto* pipeline = list[i].getIf<std::string>();
      if (pipeline != nullptr && *pipeline == word) return static_cast<std::int64_t>(i);
    }
  }
  return index;
}

std::string EnvState::commandline() const {
  std::string text;
  for (const std::string& action : actions) {
    if (!text.empty()) text += ' ';
    text += action;
  }
  return text;
}

std::string_view statesCsvHeader() { return kHeader; }

std::string toCsvRow(const EnvState& state, bool withValidity) {
  std::string row = fmt::format("{},{},{},{}", csvField(state.benchmark),
                                state.reward ? pythonFloat(*state.reward) : "",
                                pythonFloat(state.walltime), csvField(state.commandline()));
  if (withValidity) row += "," + state.validity;
  return row + "\n";
}

std::string toCsv(std::span<const EnvState> states) {
  bool withValidity = false;
  for (const EnvState& state : states) withValidity |= !state.validity.empty();
  std::string text = std::string(kHeader);
  if (withValidity) text += fmt::format(",{}", kValidityColumn);
  text += "\n";
  for (const EnvState& state : states) text += toCsvRow(state, withValidity);
  return text;
}

Result<std::vector<std::string>> parseCommandline(std::string_view commandline,
                                                  const Space* actions) {
  if (commandline.size() > kMaxCommandlineBytes) {
    return invalidArgument(fmt::format("the commandline is {} bytes, more than the {} allowed",
                                       commandline.size(), kMaxCommandlineBytes));
  }
  for (std::size_t i = 0; i < commandline.size(); ++i) {
    const auto byte = static_cast<unsigned char>(commandline[i]);
    if ((byte < 0x20 && byte != '\t') || byte == 0x7f) {
      return invalidArgument(fmt::format(
          "the commandline has a control character (byte 0x{:02x}) at offset {}", byte, i));
    }
  }
  std::vector<std::string_view> words = splitWords(commandline);
  std::vector<std::string_view> named;
  if (!words.empty() && isOptProgram(words.front()) && hasPassesFlag(words)) {
    KILN_ASSIGN_OR_RETURN(named, chainPipelines(words));
  } else if (!words.empty() && isOptProgram(words.front())) {
    for (std::size_t i = 1; i < words.size(); ++i) {
      const std::string_view word = words[i];
      if (word == "-o") {
        if (i + 1 == words.size())
          return invalidArgument("the commandline ends with '-o' and no file");
        ++i;  // the output file
      } else if (word.starts_with('-') && word.size() > 1) {
        named.push_back(word);
      }  // else an input file (or "-", standard input)
    }
  } else {
    named = std::move(words);
  }
  if (named.size() > kMaxCommandlineActions) {
    return invalidArgument(fmt::format("the commandline has {} actions, more than the {} allowed",
                                       named.size(), kMaxCommandlineActions));
  }
  std::vector<std::string> out;
  out.reserve(named.size());
  for (std::string_view word : named) {
    if (actions == nullptr) {
      out.emplace_back(word);
      continue;
    }
    Result<std::int64_t> index = findAction(*actions, word);
    if (!index.ok()) return invalidArgument(index.status().message());
    out.push_back(actions->names[static_cast<std::size_t>(*index)]);
  }
  return out;
}

Result<std::vector<EnvState>> parseStatesCsv(std::string_view text, const Space* actions) {
  KILN_ASSIGN_OR_RETURN(std::vector<Record> records, splitRecords(text));
  std::vector<EnvState> states;
  if (records.empty()) return states;
  KILN_ASSIGN_OR_RETURN(std::optional<ColumnMap> header, readHeader(records.front()));
  const ColumnMap columns = header.value_or(ColumnMap{});
  const std::size_t expected = header ? records.front().fields.size() : kColumns.size();
  states.reserve(records.size());
  for (std::size_t r = header ? 1 : 0; r < records.size(); ++r) {
    const Record& record = records[r];
    if (record.fields.size() != expected) {
      return invalidArgument(fmt::format("line {}: {} columns, expected {} ({})", record.line,
                                         record.fields.size(), expected, kHeader));
    }
    EnvState state;
    state.benchmark = std::string(trimSpaces(record.fields[columns.index[0]]));
    if (state.benchmark.empty()) {
      return invalidArgument(fmt::format("line {}: the benchmark is empty", record.line));
    }
    KILN_ASSIGN_OR_RETURN(state.reward,
                          parseNumber(record.fields[columns.index[1]], "reward", record.line));
    KILN_ASSIGN_OR_RETURN(std::optional<double> walltime,
                          parseNumber(record.fields[columns.index[2]], "walltime", record.line));
    state.walltime = walltime.value_or(0.0);
    if (state.walltime < 0) {
      return invalidArgument(fmt::format("line {}: walltime {} is negative", record.line,
                                         pythonFloat(state.walltime)));
    }
    Result<std::vector<std::string>> parsed =
        parseCommandline(record.fields[columns.index[3]], actions);
    if (!parsed.ok()) {
      return invalidArgument(fmt::format("line {}: {}", record.line, parsed.status().message()));
    }
    state.actions = std::move(parsed).value();
    if (columns.validity) {
      state.validity = std::string(trimSpaces(record.fields[*columns.validity]));
      if (!isValidityWord(state.validity)) {
        return invalidArgument(fmt::format(
            "line {}: validity '{}' is none of valid, verified-only, invalid, unvalidated",
            record.line, state.validity));
      }
    }
    states.push_back(std::move(state));
  }
  return states;
}

Result<std::vector<EnvState>> readStatesFile(const std::filesystem::path& path,
                                             const Space* actions) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    const int error = errno;
    const std::string what =
        fmt::format("cannot open states file {}: {}", path.string(), std::strerror(error));
    return error == ENOENT ? notFound(what) : invalidArgument(what);
  }
  Result<std::string> text = readBoundedDescriptor(fd.get(), path.string(), kMaxStatesFileBytes);
  if (!text.ok()) return text.status();
  Result<std::vector<EnvState>> states = parseStatesCsv(*text, actions);
  if (!states.ok()) {
    return Status(states.status().code(), path.string() + ": " + states.status().message());
  }
  return states;
}

Status writeStatesFile(const std::filesystem::path& path, std::span<const EnvState> states) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return invalidArgument(fmt::format("cannot write states file {}", path.string()));
  const std::string text = toCsv(states);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return invalidArgument(fmt::format("writing states file {} failed", path.string()));
  return okStatus();
}

}  // namespace kiln::client
