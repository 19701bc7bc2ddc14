#include "tools/eval/validation_verdict.h"

#include <fmt/format.h>

#include "programs/make/json_tree.h"

namespace kiln::eval {
namespace {

using programs::JsonValue;

std::string text(const JsonValue* value) {
  return value != nullptr && value->kind == JsonValue::Kind::kString ? value->string : "";
}

// One error of the observation as a line: its kind, the input, the message.
std::string describeError(const JsonValue& error) {
  std::string line =
      fmt::format("{}: {}", text(error.member("kind")), text(error.member("message")));
  const std::string input = text(error.member("input"));
  if (!input.empty()) line += fmt::format(" (input {})", input);
  return line;
}

}  // namespace

Result<ValidationVerdict> judgeValidation(const Result<std::string>& observation) {
  if (!observation.ok()) {
    // The session says so when the benchmark as it came cannot be built or
    // run: nothing to compare with, but the state passed the verifier.
    if (observation.status().code() != ErrorCode::kInvalidArgument) return observation.status();
    return ValidationVerdict{Validity::kVerifiedOnly, 0, observation.status().message()};
  }
  KILN_ASSIGN_OR_RETURN(JsonValue report,
                        programs::parseJson(*observation, "the Validation observation"));
  const JsonValue* inputs = report.member("inputs");
  const JsonValue* errors = report.member("errors");
  if (inputs == nullptr || inputs->kind != JsonValue::Kind::kNumber || errors == nullptr ||
      errors->kind != JsonValue::Kind::kArray) {
    return internalError("the Validation observation has no 'inputs' number or 'errors' list");
  }
  ValidationVerdict verdict;
  verdict.inputs = static_cast<std::size_t>(inputs->number);
  if (errors->array.empty()) {
    verdict.validity = Validity::kValid;
    return verdict;
  }
  // Differences of the optimized program make it invalid; an input on which
  // -O0 itself fails only leaves nothing to compare with.
  const JsonValue* firstDifference = nullptr;
  for (const JsonValue& error : errors->array) {
    if (text(error.member("kind")) != "reference-failed") {
      firstDifference = &error;
      break;
    }
  }
  if (firstDifference == nullptr) {
    verdict.validity = Validity::kVerifiedOnly;
    verdict.detail = describeError(errors->array.front());
    return verdict;
  }
  verdict.validity = Validity::kInvalid;
  verdict.detail = describeError(*firstDifference);
  return verdict;
}

Result<ValidationVerdict> validateSessionState(client::Session& session) {
  auto observed = session.step({}, std::vector<std::string>{"Validation"});
  if (!observed.ok()) return judgeValidation(observed.status());
  return judgeValidation(observed->observations.at(0).as<std::string>());
}

std::string_view validityName(Validity validity) {
  switch (validity) {
    case Validity::kUnvalidated:
      return "unvalidated";
    case Validity::kValid:
      return "valid";
    case Validity::kVerifiedOnly:
      return "verified-only";
    case Validity::kInvalid:
      return "invalid";
  }
  return "unvalidated";
}

}  // namespace kiln::eval
