#include "programs/runs/validation.h"

#include <fmt/format.h>

#include <csignal>

namespace kiln::runs {
namespace {

constexpr std::size_t kEvidenceLineBytes = 200;

std::string clip(std::string_view text) {
  if (text.size() <= kEvidenceLineBytes) return std::string(text);
  return fmt::format("{}... ({} bytes)", text.substr(0, kEvidenceLineBytes), text.size());
}

// The first line where `expected` and `actual` differ, 1-based, both texts.
std::string firstDifference(const std::string& expected, const std::string& actual) {
  std::size_t line = 1, at = 0;
  while (at < expected.size() && at < actual.size() && expected[at] == actual[at]) {
    if (expected[at] == '\n') ++line;
    ++at;
  }
  auto lineAround = [&](const std::string& text) {
    const std::size_t begin = text.rfind('\n', at == 0 ? 0 : at - 1);
    const std::size_t from = begin == std::string::npos || at == 0 ? 0 : begin + 1;
    const std::size_t end = text.find('\n', from);
    return text.substr(from, end == std::string::npos ? std::string::npos : end - from);
  };
  return fmt::format("line {}: expected \"{}\", got \"{}\"", line, clip(lineAround(expected)),
                     clip(lineAround(actual)));
}

// The first lines of an ASan report ("ERROR: AddressSanitizer: ...").
std::string sanitizerReport(const std::string& stderrText) {
  const std::size_t error = stderrText.find("ERROR: AddressSanitizer");
  if (error == std::string::npos) return {};
  std::size_t end = error;
  for (int lines = 0; lines < 4 && end != std::string::npos; ++lines) {
    end = stderrText.find('\n', end + 1);
  }
  return clip(stderrText.substr(error, end == std::string::npos ? std::string::npos : end - error));
}

std::string signalCause(int signal) {
  switch (signal) {
    case SIGSYS:
      return "it made a system call the sandbox forbids (a socket, ptrace, a mount)";
    case SIGXCPU:
      return "it used up its CPU time";
    case SIGXFSZ:
      return "it wrote a file larger than the scratch limit";
    case SIGSEGV:
    case SIGBUS:
      return "a memory access fault (or its memory limit)";
    default:
      return {};
  }
}

}  // namespace

const char* kindName(ValidationError::Kind kind) {
  switch (kind) {
    case ValidationError::Kind::kBuildFailed:
      return "build-failed";
    case ValidationError::Kind::kReferenceFailed:
      return "reference-failed";
    case ValidationError::Kind::kTimeout:
      return "timeout";
    case ValidationError::Kind::kCrash:
      return "crash";
    case ValidationError::Kind::kSanitizer:
      return "sanitizer";
    case ValidationError::Kind::kExitStatus:
      return "exit-status";
    case ValidationError::Kind::kOutput:
      return "output";
  }
  return "unknown";
}

std::vector<ValidationError> compareRun(const RunSpec& spec, std::size_t input,
                                        const RunEvidence& reference, const RunEvidence& candidate,
                                        bool sanitized) {
  using Kind = ValidationError::Kind;
  const std::string name = describeInput(spec, input);
  const std::string build = sanitized ? "the ASan build" : "the optimized program";
  std::vector<ValidationError> errors;
  if (reference.timedOut || reference.status.signaled()) {
    errors.push_back(
        {Kind::kReferenceFailed, name,
         fmt::format("the unoptimized program itself failed on {} ({})", name,
                     reference.timedOut ? "it timed out" : reference.status.describe()),
         clip(reference.stderrText)});
    return errors;
  }
  if (candidate.timedOut) {
    errors.push_back(
        {Kind::kTimeout, name,
         fmt::format("{} did not finish on {} within the time limit", build, name),
         fmt::format("the unoptimized program finished ({})", reference.status.describe())});
    return errors;
  }
  if (sanitized) {
    std::string report = sanitizerReport(candidate.stderrText);
    if (!report.empty()) {
      errors.push_back({Kind::kSanitizer, name,
                        fmt::format("AddressSanitizer found an error on {}", name),
                        std::move(report)});
      return errors;
    }
  }
  if (candidate.status.signaled()) {
    const std::string cause = signalCause(candidate.status.signal);
    errors.push_back({Kind::kCrash, name,
                      fmt::format("{} was {} on {}{}", build, candidate.status.describe(), name,
                                  cause.empty() ? "" : ": " + cause),
                      clip(candidate.stderrText)});
    return errors;
  }
  if (candidate.status.exitCode != reference.status.exitCode) {
    errors.push_back(
        {Kind::kExitStatus, name,
         fmt::format("{} exited with code {} on {}; the unoptimized program with {}", build,
                     candidate.status.exitCode, name, reference.status.exitCode),
         // What it said about it: its error stream, else its output.
         clip(candidate.stderrText.empty() ? candidate.stdoutText : candidate.stderrText)});
  }
  if (candidate.stdoutText != reference.stdoutText ||
      candidate.stdoutBytes != reference.stdoutBytes) {
    errors.push_back({Kind::kOutput, name,
                      fmt::format("{} printed different output on {}", build, name),
                      candidate.stdoutBytes != reference.stdoutBytes &&
                              candidate.stdoutText == reference.stdoutText
                          ? fmt::format("{} bytes of output, expected {}", candidate.stdoutBytes,
                                        reference.stdoutBytes)
                          : firstDifference(reference.stdoutText, candidate.stdoutText)});
  }
  return errors;
}

}  // namespace kiln::runs
