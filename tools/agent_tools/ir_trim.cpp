#include "tools/agent_tools/ir_trim.h"

#include <fmt/format.h>

namespace kiln::agent_tools {
namespace {

struct Chunk {
  std::string_view text;
  std::string function;  // "@name" for a definition; empty otherwise
};

// "@name" of a `define` line: the first '@' word up to '('.
std::string functionName(std::string_view line) {
  const std::size_t at = line.find('@');
  if (at == std::string_view::npos) return "@?";
  const std::size_t paren = line.find('(', at);
  return std::string(line.substr(at, paren == std::string_view::npos ? line.npos : paren - at));
}

// Where the blank and comment lines that end ir[start, at) begin.
std::size_t leadingNotes(std::string_view ir, std::size_t start, std::size_t at) {
  std::size_t begin = at;
  while (begin > start) {
    const std::size_t lineEnd = begin - 1;  // the '\n' that ends the line before
    const std::size_t found = lineEnd == 0 ? std::string_view::npos : ir.rfind('\n', lineEnd - 1);
    const std::size_t lineStart =
        found == std::string_view::npos || found < start ? start : found + 1;
    std::string_view line = ir.substr(lineStart, lineEnd - lineStart);
    if (!line.empty() && !line.starts_with(";")) break;
    begin = lineStart;
  }
  return begin;
}

// The module as header / definitions / tail: a definition runs from its
// `define` line to the first line that is exactly "}".
std::vector<Chunk> split(std::string_view ir) {
  std::vector<Chunk> chunks;
  std::size_t start = 0;  // of the chunk being read
  std::size_t at = 0;
  bool inFunction = false;
  while (at < ir.size()) {
    std::size_t end = ir.find('\n', at);
    end = end == std::string_view::npos ? ir.size() : end + 1;
    std::string_view line = ir.substr(at, end - at);
    if (!inFunction && line.starts_with("define ")) {
      // The blank and comment lines just before (LLVM's "; Function Attrs")
      // go with the definition, in or out.
      const std::size_t own = leadingNotes(ir, start, at);
      if (own > start) chunks.push_back({ir.substr(start, own - start), ""});
      start = own;
      inFunction = true;
      chunks.push_back({{}, functionName(line)});
    } else if (inFunction && (line == "}\n" || line == "}")) {
      chunks.back().text = ir.substr(start, end - start);
      start = end;
      inFunction = false;
    }
    at = end;
  }
  if (inFunction) {
    chunks.back().text = ir.substr(start);
  } else if (start < ir.size()) {
    chunks.push_back({ir.substr(start), ""});
  }
  return chunks;
}

// The longest prefix of `text` within `budget` that ends at a line's end.
std::string_view wholeLines(std::string_view text, std::uint64_t budget) {
  if (text.size() <= budget) return text;
  if (budget == 0) return {};  // rfind would still find a newline at 0
  const std::size_t cut = text.rfind('\n', budget - 1);
  return cut == std::string_view::npos ? std::string_view() : text.substr(0, cut + 1);
}

std::string noteFor(const TrimmedIr& result, bool otherCut) {
  if (!result.trimmed) return fmt::format("the whole module ({} bytes)", result.bytesTotal);
  std::string note = fmt::format("showing {} of {} bytes", result.bytesShown, result.bytesTotal);
  if (!result.functionsCut.empty()) {
    note += fmt::format("; {} function definition(s) left out whole:", result.functionsCut.size());
    for (std::size_t i = 0; i < result.functionsCut.size() && i < 20; ++i) {
      note += " " + result.functionsCut[i];
    }
    if (result.functionsCut.size() > 20) note += " ...";
  }
  if (otherCut) note += "; declarations, attributes or metadata cut at a line's end";
  return note;
}

}  // namespace

TrimmedIr trimIr(std::string_view ir, std::uint64_t maxBytes) {
  TrimmedIr result;
  result.bytesTotal = ir.size();
  if (ir.size() <= maxBytes) {
    result.text = std::string(ir);
    result.bytesShown = ir.size();
    result.note = noteFor(result, false);
    return result;
  }
  result.trimmed = true;
  bool otherCut = false;
  for (const Chunk& chunk : split(ir)) {
    const std::uint64_t left = maxBytes - result.text.size();
    if (chunk.text.size() <= left) {
      result.text += chunk.text;
    } else if (!chunk.function.empty()) {
      result.functionsCut.push_back(chunk.function);
    } else {
      result.text += wholeLines(chunk.text, left);
      otherCut = true;
    }
  }
  result.bytesShown = result.text.size();
  result.note = noteFor(result, otherCut);
  return result;
}

}  // namespace kiln::agent_tools
