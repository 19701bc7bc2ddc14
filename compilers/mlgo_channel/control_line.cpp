// llvm::json parses each line: a real parser, so that odd spacing, escapes or
// key order LLVM may emit are read as JSON and never as text patterns.
#include "compilers/mlgo_channel/control_line.h"

#include <charconv>
#include <optional>
#include <utility>

#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>

namespace kiln::mlgo_channel {

std::string shown(std::string_view text) {
  constexpr std::size_t kShown = 80;
  std::string visible(text.substr(0, kShown));
  for (char& c : visible) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  }
  return "\"" + visible + (text.size() > kShown ? "...\"" : "\"");
}

Status protocolError(const std::string& what) {
  return compileError("the compiler broke the MLGO channel protocol: " + what);
}

namespace {

// The lines LLVM writes at every decision, {"observation":N} (and
// {"outcome":N}) exactly as its JSON writer spells them, read without
// building a JSON value: that was about a tenth of a worker's instructions
// per decision. Anything else (spacing, escapes, leading zeros, another
// key, a number out of range) goes to the parser, which decides alike.
std::optional<ControlLine> canonicalNumberLine(std::string_view line, const ChannelHeader& header) {
  constexpr std::pair<std::string_view, ControlKind> kLines[] = {
      {R"({"observation":)", ControlKind::kObservation}, {R"({"outcome":)", ControlKind::kOutcome}};
  for (const auto& [prefix, kind] : kLines) {
    if (!line.starts_with(prefix) || !line.ends_with('}')) continue;
    if (kind == ControlKind::kOutcome && !header.score) return std::nullopt;
    const std::string_view number = line.substr(prefix.size(), line.size() - prefix.size() - 1);
    const std::string_view digits = number.starts_with('-') ? number.substr(1) : number;
    if (digits.empty() || (digits.size() > 1 && digits.front() == '0')) return std::nullopt;
    ControlLine control;
    control.kind = kind;
    const auto [end, error] =
        std::from_chars(number.data(), number.data() + number.size(), control.number);
    if (error != std::errc() || end != number.data() + number.size()) return std::nullopt;
    return control;
  }
  return std::nullopt;
}

}  // namespace

Result<ControlLine> parseControlLine(std::string_view line, const ChannelHeader& header) {
  if (std::optional<ControlLine> quick = canonicalNumberLine(line, header)) return *quick;
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse(llvm::StringRef(line.data(), line.size()));
  if (!parsed) {
    return protocolError("expected a JSON record line, got " + shown(line) + " (" +
                         llvm::toString(parsed.takeError()) + ")");
  }
  const llvm::json::Object* object = parsed->getAsObject();
  if (object == nullptr || object->size() != 1) {
    return protocolError("expected a one-field JSON object, got " + shown(line));
  }
  const auto& [key, value] = *object->begin();
  ControlLine control;
  if (key == "context") {
    if (std::optional<llvm::StringRef> text = value.getAsString()) {
      control.context = text->str();
      return control;
    }
  } else if (std::optional<std::int64_t> number = value.getAsInteger()) {
    control.number = *number;
    if (key == "observation") {
      control.kind = ControlKind::kObservation;
      return control;
    }
    if (key == "outcome" && header.score) {
      control.kind = ControlKind::kOutcome;
      return control;
    }
  }
  return protocolError("unexpected record line " + shown(line));
}

std::size_t bytesAfterLine(const ControlLine& line, const ChannelHeader& header,
                           std::size_t observationBytes) {
  switch (line.kind) {
    case ControlKind::kContext:
      return 0;
    case ControlKind::kObservation:
      return observationBytes + 1;
    case ControlKind::kOutcome:
      return header.score->byteSize + 1;  // parseControlLine checked that there is a score
  }
  return 0;
}

}  // namespace kiln::mlgo_channel
