#include "python/src/agent_tools.h"

#include <fmt/format.h>
#include <pybind11/stl.h>

#include <kiln/curve_keys.h>
#include "python/src/handles.h"
#include "python/src/status_error.h"
#include "tools/agent_tools/tool_executor.h"

namespace py = pybind11;

namespace kiln::python {
namespace {

using agent_tools::ToolCall;
using agent_tools::ToolExecutor;

// The ToolLimits fields Python may set, by their snake_case names.
agent_tools::ToolLimits limitsFrom(const py::dict& given) {
  agent_tools::ToolLimits limits;
  for (const auto& [key, value] : given) {
    const std::string name = py::cast<std::string>(key);
    const auto number = py::cast<std::uint64_t>(value);
    if (number == 0) throw StatusError(invalidArgument(fmt::format("{} must be positive", name)));
    if (name == "max_module_bytes") {
      limits.maxModuleBytes = number;
    } else if (name == "max_passes_per_call") {
      limits.maxPassesPerCall = number;
    } else if (name == "max_episodes_per_caller") {
      limits.maxEpisodesPerCaller = number;
    } else if (name == "max_ir_text_bytes") {
      limits.maxIrTextBytes = number;
    } else if (name == "max_concurrent_calls_per_caller") {
      limits.maxConcurrentCallsPerCaller = number;
    } else if (name == "prefix_cache_entries") {
      limits.prefixCacheEntries = number;
    } else {
      throw StatusError(invalidArgument(fmt::format(
          "no tool limit '{}' (max_module_bytes, max_passes_per_call, max_episodes_per_caller, "
          "max_ir_text_bytes, max_concurrent_calls_per_caller, prefix_cache_entries)",
          name)));
    }
  }
  return limits;
}

std::shared_ptr<ToolExecutor> createExecutor(const std::string& endpoint, unsigned workers,
                                             double timeoutSeconds, const std::string& keyFile,
                                             const py::dict& limits) {
  agent_tools::ExecutorOptions options;
  options.client.coordinator = endpoint;
  options.client.requestTimeout = secondsToDuration(timeoutSeconds, "timeout");
  if (!keyFile.empty()) options.client.keys = unwrap(loadKeyFile(keyFile));
  if (workers < 1 || workers > 64) {
    throw StatusError(invalidArgument(fmt::format("workers must be in [1, 64], got {}", workers)));
  }
  options.embeddedWorkers = workers;
  options.limits = limitsFrom(limits);
  Result<std::unique_ptr<ToolExecutor>> created = internalError("not run");
  {
    py::gil_scoped_release noGil;
    created = ToolExecutor::create(std::move(options));
  }
  return std::shared_ptr<ToolExecutor>(unwrap(std::move(created)).release());
}

}  // namespace

void bindAgentTools(py::module_& m) {
  py::class_<ToolExecutor, std::shared_ptr<ToolExecutor>>(m, "ToolExecutor")
      .def(py::init(&createExecutor), py::arg("endpoint") = "", py::arg("workers") = 1,
           py::arg("timeout") = 60.0, py::arg("key_file") = "", py::arg("limits") = py::dict(),
           "The agent tools on the cluster at `endpoint`, or on an embedded one (empty).")
      .def(
          "call",
          [](ToolExecutor& executor, const std::string& caller, const std::string& tool,
             const std::string& arguments) {
            py::gil_scoped_release noGil;
            return executor.call(caller, tool, arguments);
          },
          py::arg("caller"), py::arg("tool"), py::arg("arguments"),
          "One call; its answer as JSON text (the result or {\"error\": ...}).")
      .def(
          "call_batch",
          [](ToolExecutor& executor, const std::string& caller,
             const std::vector<std::pair<std::string, std::string>>& calls) {
            std::vector<ToolCall> batch;
            batch.reserve(calls.size());
            for (const auto& [tool, arguments] : calls) batch.push_back({tool, arguments});
            py::gil_scoped_release noGil;
            return executor.callBatch(caller, batch);
          },
          py::arg("caller"), py::arg("calls"),
          "(tool, arguments JSON) pairs run at once; their answers as JSON text, in order.")
      .def("schema", &ToolExecutor::schemaJson, py::arg("results") = false,
           "The tool list (or, with results, the answers' schemas) as JSON text.")
      .def("forget_caller", &ToolExecutor::forgetCaller, py::arg("caller"),
           py::call_guard<py::gil_scoped_release>())
      .def("stats", [](const ToolExecutor& executor) {
        const agent_tools::ExecutorStats s = executor.stats();
        py::dict stats;
        stats["calls"] = s.calls;
        stats["errors"] = s.errors;
        stats["passes_asked"] = s.passesAsked;
        stats["passes_applied"] = s.passesApplied;
        stats["prefix_hits"] = s.prefixHits;
        stats["sessions_started"] = s.sessionsStarted;
        return stats;
      });
}

}  // namespace kiln::python
