// Two inputs of the program-observation surface. The first input byte picks:
//   0  a program graph's wire form (common/types/program_graph.h), what a client
//      decodes from a worker's Programl observation;
//   1  a run spec from a client (llvm.run_spec: no files may be named);
//   2  a corpus's run spec (<module>.run.json), its stdin_files read from a
//      fixed, bounded set.
// Properties checked: a graph refused is invalid-argument with a short
// message; a graph accepted has every index in range and survives encoding
// and decoding again unchanged; a run spec refused is invalid-argument naming
// where it came from, with a message that does not grow with the input; a
// run spec accepted holds every bound (1-16 inputs, 64 arguments of 4 KiB,
// 1 MiB of stdin each, allowed libraries only).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/types/program_graph.h"
#include "programs/runs/run_spec.h"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_program_graph: property violated: %s\n", what);
    std::abort();
  }
}

void checkGraph(std::string_view bytes) {
  auto graph = kiln::decodeProgramGraph(bytes);
  if (!graph.ok()) {
    require(graph.status().code() == kiln::ErrorCode::kInvalidArgument,
            "a refused graph is not invalid-argument");
    require(graph.status().message().size() < 512, "a graph error grows with the input");
    return;
  }
  const std::size_t nodes = graph->nodes();
  require(graph->nodeText.size() == nodes && graph->nodeFunction.size() == nodes &&
              graph->nodeBlock.size() == nodes,
          "node arrays differ in length");
  for (std::size_t i = 0; i < nodes; ++i) {
    require(graph->nodeText[i] < graph->texts.size(), "a node text is out of range");
    require(graph->nodeFunction[i] == kiln::kNoIndex ||
                graph->nodeFunction[i] < graph->functionNames.size(),
            "a node function is out of range");
    require(static_cast<unsigned>(graph->nodeKind[i]) <= 2, "a node kind is out of range");
    require(graph->nodeFullText.empty() || graph->nodeFullText[i] < graph->fullTexts.size(),
            "a node full text is out of range");
  }
  require(graph->nodeFullText.empty() || graph->nodeFullText.size() == nodes,
          "the full text indices are not one per node");
  for (std::size_t e = 0; e < graph->edges(); ++e) {
    require(graph->edgeSource[e] < nodes && graph->edgeTarget[e] < nodes,
            "an edge joins a node that does not exist");
    require(static_cast<unsigned>(graph->edgeFlow[e]) <= 2, "an edge flow is out of range");
  }
  auto again = kiln::decodeProgramGraph(kiln::encodeProgramGraph(*graph));
  require(again.ok() && *again == *graph, "a decoded graph does not survive a round trip");
}

void checkRunSpec(std::string_view json, bool corpus) {
  const std::string what = corpus ? "the corpus's run.json" : "the client's llvm.run_spec";
  kiln::runs::InputFileReader reader;
  if (corpus) {
    reader = [](const std::string& name) -> kiln::Result<std::string> {
      if (name == "inputs/a.txt") return std::string("1 2 3\n");
      return kiln::notFound("there is no such file beside the module");
    };
  }
  auto spec = kiln::runs::parseRunSpec(json, what, reader);
  if (!spec.ok()) {
    require(spec.status().code() == kiln::ErrorCode::kInvalidArgument,
            "a refused run spec is not invalid-argument");
    require(spec.status().message().find(what) != std::string::npos,
            "a refusal does not say where the spec came from");
    require(spec.status().message().size() < 1024, "a run spec error grows with the input");
    return;
  }
  require(!spec->inputs.empty() && spec->inputs.size() <= kiln::runs::kMaxInputs,
          "an accepted spec has no input or too many");
  for (const kiln::runs::ProgramInput& input : spec->inputs) {
    require(input.args.size() <= kiln::runs::kMaxArgs, "too many arguments accepted");
    for (const std::string& arg : input.args) {
      require(arg.size() <= kiln::runs::kMaxArgBytes, "an argument over its bound accepted");
    }
    require(input.stdinBytes.size() <= kiln::runs::kMaxStdinBytes, "stdin over its bound");
  }
  for (const std::string& library : spec->libraries) {
    require(kiln::runs::isAllowedLibrary(library), "a library not allowed was accepted");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      checkGraph(rest);
      break;
    case 1:
      checkRunSpec(rest, false);
      break;
    default:
      checkRunSpec(rest, true);
      break;
  }
  return 0;
}
