// Record framing of the channel. The control lines are parsed with llvm::json
// like the header; tensor bytes are read in one bounded block per record.
#include "mlgo/record_stream.h"

#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>

#include "mlgo/tensor_codec.h"

namespace kiln::mlgo {

std::string shown(std::string_view text) {
  constexpr std::size_t kShown = 80;
  std::string visible(text.substr(0, kShown));
  for (char& c : visible) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  }
  return "\"" + visible + (text.size() > kShown ? "...\"" : "\"");
}

namespace {

Status protocolError(const std::string& what) {
  return compileError("the compiler broke the MLGO channel protocol: " + what);
}

// A control line is a one-key object: {"context":S}, {"observation":N} or {"outcome":N}.
struct ControlLine {
  std::string key;
  std::optional<std::string> text;
  std::optional<std::int64_t> number;
};

Result<ControlLine> parseControlLine(const std::string& line) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(line);
  if (!parsed) {
    return protocolError("expected a JSON record line, got " + shown(line) + " (" +
                         llvm::toString(parsed.takeError()) + ")");
  }
  const llvm::json::Object* object = parsed->getAsObject();
  if (object == nullptr || object->size() != 1) {
    return protocolError("expected a one-field JSON object, got " + shown(line));
  }
  const auto& [key, value] = *object->begin();
  ControlLine control{key.str(), std::nullopt, value.getAsInteger()};
  if (auto text = value.getAsString()) control.text = text->str();
  return control;
}

}  // namespace

const Value* findFeature(const ChannelHeader& header, const Observation& observation,
                         std::string_view name) {
  std::optional<std::size_t> index = header.featureIndex(name);
  if (!index || *index >= observation.features.size()) return nullptr;
  return &observation.features[*index];
}

Result<std::optional<std::string>> BufferSource::readLine(std::size_t maxBytes) {
  std::string_view rest = bytes_.substr(position_);
  std::size_t newline = rest.find('\n');
  if (newline != std::string_view::npos && newline <= maxBytes) {
    position_ += newline + 1;
    return std::optional<std::string>(std::string(rest.substr(0, newline)));
  }
  if (rest.size() > maxBytes) {
    return invalidArgument("a line from the compiler is longer than " + std::to_string(maxBytes) +
                           " bytes");
  }
  if (rest.empty()) return std::optional<std::string>();
  return disconnected("the compiler's output ended inside a line after " +
                      std::to_string(rest.size()) + " bytes");
}

Result<std::string> BufferSource::readExact(std::size_t n) {
  std::size_t left = bytes_.size() - position_;
  if (left < n) {
    return disconnected("the compiler's output ended after " + std::to_string(left) + " of " +
                        std::to_string(n) + " expected bytes");
  }
  std::string out(bytes_.substr(position_, n));
  position_ += n;
  return out;
}

Result<ChannelHeader> readHeader(RecordSource& source, const HeaderLimits& limits) {
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> line, source.readLine(limits.maxHeaderBytes));
  if (!line) return disconnected("the compiler closed its output before sending the header");
  Result<ChannelHeader> header = parseHeader(*line, limits);
  if (!header.ok()) return protocolError("bad header: " + header.status().message());
  return header;
}

Result<std::optional<Observation>> RecordReader::next(RecordSource& source) {
  while (true) {
    KILN_ASSIGN_OR_RETURN(std::optional<std::string> line, source.readLine(maxLineBytes_));
    if (!line) return std::optional<Observation>();
    KILN_ASSIGN_OR_RETURN(ControlLine control, parseControlLine(*line));
    if (control.key == "context" && control.text) {
      context_ = *control.text;
      continue;
    }
    const bool isObservation = control.key == "observation";
    if (!(isObservation || (control.key == "outcome" && header_.score)) || !control.number) {
      return protocolError("unexpected record line " + shown(*line));
    }
    // Observations carry every feature; outcomes (reward logging) carry the score.
    std::size_t bytes = isObservation ? header_.observationBytes() : header_.score->byteSize;
    KILN_ASSIGN_OR_RETURN(std::string data, source.readExact(bytes + 1));
    if (data.back() != '\n') {
      return protocolError("record " + shown(*line) + " is not followed by exactly " +
                           std::to_string(bytes) + " tensor bytes and a newline");
    }
    if (!isObservation) continue;
    Observation observation;
    observation.index = *control.number;
    observation.context = context_;
    observation.features.reserve(header_.features.size());
    std::size_t offset = 0;
    for (const FeatureSpec& spec : header_.features) {
      KILN_ASSIGN_OR_RETURN(
          Value value, decodeTensor(spec, std::string_view(data).substr(offset, spec.byteSize)));
      observation.features.push_back(std::move(value));
      offset += spec.byteSize;
    }
    return std::optional<Observation>(std::move(observation));
  }
}

}  // namespace kiln::mlgo
