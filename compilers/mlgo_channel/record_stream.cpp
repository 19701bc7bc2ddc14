// Record framing of the channel. Control lines are parsed by control_line.h;
// tensor bytes are read in one bounded block per record and kept raw.
#include "compilers/mlgo_channel/record_stream.h"

#include "compilers/mlgo_channel/tensor_codec.h"

namespace kiln::mlgo_channel {

Result<Value> decodeFeature(const ChannelHeader& header, const Observation& observation,
                            std::size_t index) {
  if (index >= header.features.size()) {
    return invalidArgument("feature #" + std::to_string(index) +
                           " does not exist: the header has " +
                           std::to_string(header.features.size()));
  }
  // Summing the sizes before it is cheaper than keeping offsets: headers are
  // short (39 features for opt) and only requested features are decoded.
  std::size_t offset = 0;
  for (std::size_t i = 0; i < index; ++i) offset += header.features[i].byteSize;
  const FeatureSpec& spec = header.features[index];
  if (offset + spec.byteSize > observation.tensors.size()) {
    return invalidArgument("the observation holds " + std::to_string(observation.tensors.size()) +
                           " tensor bytes, too few for feature \"" + spec.name + "\"");
  }
  return decodeTensor(spec, std::string_view(observation.tensors).substr(offset, spec.byteSize));
}

Result<std::vector<Value>> decodeFeatures(const ChannelHeader& header,
                                          const Observation& observation) {
  if (observation.tensors.size() != header.observationBytes()) {
    return invalidArgument("the observation holds " + std::to_string(observation.tensors.size()) +
                           " tensor bytes; the header's features take " +
                           std::to_string(header.observationBytes()));
  }
  std::vector<Value> features;
  features.reserve(header.features.size());
  std::size_t offset = 0;
  for (const FeatureSpec& spec : header.features) {
    KILN_ASSIGN_OR_RETURN(
        Value value,
        decodeTensor(spec, std::string_view(observation.tensors).substr(offset, spec.byteSize)));
    features.push_back(std::move(value));
    offset += spec.byteSize;
  }
  return features;
}

std::optional<Value> findFeature(const ChannelHeader& header, const Observation& observation,
                                 std::string_view name) {
  std::optional<std::size_t> index = header.featureIndex(name);
  if (!index) return std::nullopt;
  Result<Value> value = decodeFeature(header, observation, *index);
  if (!value.ok()) return std::nullopt;
  return std::move(value).value();
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
    KILN_ASSIGN_OR_RETURN(ControlLine control, parseControlLine(*line, header_));
    if (control.kind == ControlKind::kContext) {
      context_ = std::move(control.context);
      continue;
    }
    // Observations carry every feature; outcomes (reward logging) carry the score.
    std::size_t bytes = bytesAfterLine(control, header_, observationBytes_);
    KILN_ASSIGN_OR_RETURN(std::string data, source.readExact(bytes));
    if (data.back() != '\n') {
      return protocolError("record " + shown(*line) + " is not followed by exactly " +
                           std::to_string(bytes - 1) + " tensor bytes and a newline");
    }
    if (control.kind != ControlKind::kObservation) continue;
    data.pop_back();
    return std::optional<Observation>(Observation{control.number, context_, std::move(data)});
  }
}

BufferedObservation RecordReader::takeBuffered(std::string_view buffered, bool closed) {
  BufferedRecords scan = scanRecords(buffered, header_, observationBytes_, maxLineBytes_, closed);
  BufferedObservation taken;
  taken.readiness = scan.readiness;
  if (scan.readiness != RecordReadiness::kObservation) return taken;
  if (scan.context) context_ = std::move(*scan.context);
  taken.consumed = scan.end;
  taken.observation = Observation{scan.index, context_, std::string(scan.tensors)};
  return taken;
}

}  // namespace kiln::mlgo_channel
