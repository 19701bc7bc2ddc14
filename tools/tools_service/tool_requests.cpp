#include "tools/tools_service/tool_requests.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

#include "tools/agent_tools/tool_error.h"

namespace kiln::tools_service {

namespace {

using agent_tools::ToolError;
using agent_tools::toolErrorName;
using nlohmann::json;

constexpr std::string_view kErrorPrefix = R"({"error":)";

// One element of a call or batch body; `where` names it in errors.
Result<agent_tools::ToolCall> callFrom(const json& element, const std::string& where) {
  if (!element.is_object()) {
    return invalidArgument(fmt::format("{} is not an object {{\"name\", \"arguments\"}}", where));
  }
  for (const auto& [key, value] : element.items()) {
    if (key != "name" && key != "arguments") {
      return invalidArgument(fmt::format(
          "{} has a field '{}'; a call has only \"name\" and \"arguments\"", where, key));
    }
  }
  auto name = element.find("name");
  if (name == element.end() || !name->is_string()) {
    return invalidArgument(fmt::format("{} has no \"name\" string (the tool to call)", where));
  }
  agent_tools::ToolCall call{name->get<std::string>(), "{}"};
  auto arguments = element.find("arguments");
  if (arguments == element.end() || arguments->is_null()) return call;
  if (arguments->is_string()) {
    call.arguments = arguments->get<std::string>();  // the tool checks the text
  } else if (arguments->is_object()) {
    call.arguments = arguments->dump();
  } else {
    return invalidArgument(
        fmt::format("{}'s \"arguments\" is neither an object nor the JSON text of one", where));
  }
  return call;
}

Result<json> parseJson(std::string_view body) {
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return invalidArgument("the request body is not JSON (send Content-Type: application/json)");
  }
  return parsed;
}

std::string invalidJson(const Status& status) {
  return errorBody(toolErrorName(ToolError::kInvalidJson), status.message());
}

std::string invalidArguments(const Status& status) {
  return errorBody(toolErrorName(ToolError::kInvalidArguments), status.message());
}

}  // namespace

std::string errorBody(std::string_view code, std::string_view message) {
  return json{{"error", {{"code", code}, {"message", message}}}}.dump();
}

ParsedCalls parseCallBody(std::string_view body) {
  Result<json> parsed = parseJson(body);
  if (!parsed.ok()) return {{}, invalidJson(parsed.status())};
  Result<agent_tools::ToolCall> call = callFrom(*parsed, "the call");
  if (!call.ok()) return {{}, invalidArguments(call.status())};
  return {{std::move(*call)}, {}};
}

ParsedCalls parseBatchBody(std::string_view body) {
  Result<json> parsed = parseJson(body);
  if (!parsed.ok()) return {{}, invalidJson(parsed.status())};
  if (!parsed->is_array()) {
    return {{},
            invalidArguments(invalidArgument(
                "a batch is a JSON array of calls [{\"name\", \"arguments\"}, ...]"))};
  }
  ParsedCalls result;
  for (std::size_t i = 0; i < parsed->size(); ++i) {
    Result<agent_tools::ToolCall> call = callFrom((*parsed)[i], fmt::format("call {}", i));
    if (!call.ok()) return {{}, invalidArguments(call.status())};
    result.calls.push_back(std::move(*call));
  }
  return result;
}

int statusOfAnswer(std::string_view answer) {
  // errorJson and errorBody write the error object first and alone; a
  // result never has a top-level "error", so only errors are parsed here.
  if (answer.substr(0, kErrorPrefix.size()) != kErrorPrefix) return 200;
  json parsed = json::parse(answer, nullptr, false);
  if (parsed.is_discarded()) return 500;
  const std::string code = parsed["error"].value("code", "");
  if (code == toolErrorName(ToolError::kUnauthorized)) return 401;
  if (code == toolErrorName(ToolError::kUnknownEndpoint)) return 404;
  if (code == toolErrorName(ToolError::kTooLarge)) return 413;
  if (code == toolErrorName(ToolError::kQuotaExceeded)) return 429;
  if (code == toolErrorName(ToolError::kUnavailable)) return 503;
  if (code == toolErrorName(ToolError::kInternal)) return 500;
  return 400;
}

std::vector<std::string> runCalls(ToolBackend& backend, const std::string& caller,
                                  const std::vector<agent_tools::ToolCall>& calls, unsigned width) {
  std::vector<std::string> answers(calls.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < calls.size(); i = next++) {
      answers[i] = backend.call(caller, calls[i].tool, calls[i].arguments);
    }
  };
  const std::size_t helpers = std::min<std::size_t>(std::max(width, 1u), calls.size());
  std::vector<std::jthread> threads;
  // This thread works too: a batch of one costs no thread.
  for (std::size_t t = 1; t < helpers; ++t) threads.emplace_back(work);
  work();
  for (std::jthread& thread : threads) thread.join();  // before `answers` is moved out
  return answers;
}

std::string joinAnswers(const std::vector<std::string>& answers) {
  std::string joined = "[";
  for (std::size_t i = 0; i < answers.size(); ++i) {
    if (i > 0) joined += ',';
    joined += answers[i];
  }
  joined += ']';
  return joined;
}

}  // namespace kiln::tools_service
