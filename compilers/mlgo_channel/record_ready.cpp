// Lines are classified by the reader's own parser (control_line.h), so that a
// line judged "a record" here is never one the reader then rejects while
// waiting; any line the reader would reject is left to it (kOther).
#include "compilers/mlgo_channel/record_ready.h"

#include "compilers/mlgo_channel/control_line.h"

namespace kiln::mlgo_channel {

BufferedRecords scanRecords(std::string_view buffered, const ChannelHeader& header,
                            std::size_t observationBytes, std::size_t maxLineBytes, bool closed) {
  BufferedRecords scan;
  const RecordReadiness notYet = closed ? RecordReadiness::kOther : RecordReadiness::kIncomplete;
  std::size_t at = 0;
  while (true) {
    std::string_view rest = buffered.substr(at);
    std::size_t newline = rest.find('\n');
    if (newline == std::string_view::npos) {
      scan.readiness = rest.size() > maxLineBytes ? RecordReadiness::kOther : notYet;
      return scan;
    }
    if (newline > maxLineBytes) {
      scan.readiness = RecordReadiness::kOther;
      return scan;
    }
    Result<ControlLine> line = parseControlLine(rest.substr(0, newline), header);
    if (!line.ok()) {
      scan.readiness = RecordReadiness::kOther;
      return scan;
    }
    const std::size_t payload = newline + 1;
    const std::size_t end = payload + bytesAfterLine(*line, header, observationBytes);
    if (rest.size() < end) {
      scan.readiness = notYet;
      return scan;
    }
    // Tensors not closed by a '\n' are the reader's to report.
    if (line->kind != ControlKind::kContext && rest[end - 1] != '\n') {
      scan.readiness = RecordReadiness::kOther;
      return scan;
    }
    if (line->kind == ControlKind::kObservation) {
      scan.readiness = RecordReadiness::kObservation;
      scan.end = at + end;
      scan.index = line->number;
      scan.tensors = rest.substr(payload, observationBytes);
      return scan;
    }
    if (line->kind == ControlKind::kContext) scan.context = std::move(line->context);
    at += end;
  }
}

RecordReadiness recordReadiness(std::string_view buffered, const ChannelHeader& header,
                                std::size_t maxLineBytes, bool closed) {
  return scanRecords(buffered, header, header.observationBytes(), maxLineBytes, closed).readiness;
}

}  // namespace kiln::mlgo_channel
