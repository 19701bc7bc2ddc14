// llvm::json parses each line: a real parser, so that odd spacing, escapes or
// key order LLVM may emit are read as JSON and never as text patterns.
#include "mlgo/control_line.h"

#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>

namespace kiln::mlgo {

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

Result<ControlLine> parseControlLine(std::string_view line, const ChannelHeader& header) {
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

}  // namespace kiln::mlgo
