// Lines are classified with llvm::json like the reader does, so that a line
// judged "a record" here is never one the reader then rejects while waiting.
#include "mlgo/record_ready.h"

#include <llvm/Support/JSON.h>

#include <optional>

namespace kiln::mlgo {
namespace {

// The tensor bytes (plus the closing '\n') that follow a control line, or
// nullopt when the line is not a record the reader accepts.
std::optional<std::size_t> payloadAfter(std::string_view line, const ChannelHeader& header,
                                        bool& observation) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(llvm::StringRef(line));
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return std::nullopt;
  }
  const llvm::json::Object* object = parsed->getAsObject();
  if (object == nullptr || object->size() != 1) return std::nullopt;
  const auto& [key, value] = *object->begin();
  observation = false;
  if (key == "context" && value.getAsString()) return std::size_t{0};
  if (!value.getAsInteger()) return std::nullopt;
  if (key == "observation") {
    observation = true;
    return header.observationBytes() + 1;
  }
  if (key == "outcome" && header.score) return header.score->byteSize + 1;
  return std::nullopt;
}

}  // namespace

RecordReadiness recordReadiness(std::string_view buffered, const ChannelHeader& header,
                                std::size_t maxLineBytes, bool closed) {
  std::size_t at = 0;
  while (true) {
    std::string_view rest = buffered.substr(at);
    std::size_t newline = rest.find('\n');
    if (newline == std::string_view::npos) {
      if (rest.size() > maxLineBytes || closed) return RecordReadiness::kOther;
      return RecordReadiness::kIncomplete;
    }
    if (newline > maxLineBytes) return RecordReadiness::kOther;
    bool observation = false;
    std::optional<std::size_t> payload = payloadAfter(rest.substr(0, newline), header, observation);
    if (!payload) return RecordReadiness::kOther;
    std::size_t end = newline + 1 + *payload;
    if (rest.size() < end) return closed ? RecordReadiness::kOther : RecordReadiness::kIncomplete;
    if (observation) return RecordReadiness::kObservation;
    at += end;
  }
}

}  // namespace kiln::mlgo
