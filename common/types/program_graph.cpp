#include "common/types/program_graph.h"

#include <fmt/format.h>

#include <cstring>

namespace kiln {
namespace {

constexpr std::string_view kMagic = "KPG2";
constexpr std::string_view kMagicWithoutFullTexts = "KPG1";

void putU32(std::string& out, std::uint32_t value) {
  const char bytes[4] = {static_cast<char>(value & 0xFF), static_cast<char>((value >> 8) & 0xFF),
                         static_cast<char>((value >> 16) & 0xFF),
                         static_cast<char>((value >> 24) & 0xFF)};
  out.append(bytes, 4);
}

void putU32s(std::string& out, const std::vector<std::uint32_t>& values) {
  for (std::uint32_t value : values) putU32(out, value);
}

template <class Enum>
void putU8s(std::string& out, const std::vector<Enum>& values) {
  for (Enum value : values) out.push_back(static_cast<char>(value));
}

void padTo4(std::string& out) {
  while (out.size() % 4 != 0) out.push_back('\0');
}

// Reads the wire form front to back; every read checks what is left.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  Result<std::uint32_t> u32(std::string_view what) {
    if (bytes_.size() - offset_ < 4) return truncated(what);
    std::uint32_t value = 0;
    for (int i = 3; i >= 0; --i) {
      value = (value << 8) | static_cast<unsigned char>(bytes_[offset_ + static_cast<unsigned>(i)]);
    }
    offset_ += 4;
    return value;
  }
  Status u32s(std::size_t count, std::vector<std::uint32_t>& out, std::string_view what) {
    if ((bytes_.size() - offset_) / 4 < count) return truncated(what);
    out.resize(count);
    for (std::size_t i = 0; i < count; ++i) out[i] = *u32(what);
    return okStatus();
  }
  template <class Enum>
  Status u8s(std::size_t count, std::uint8_t limit, std::vector<Enum>& out, std::string_view what) {
    if (bytes_.size() - offset_ < count) return truncated(what);
    out.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      const auto value = static_cast<std::uint8_t>(bytes_[offset_ + i]);
      if (value >= limit) {
        return invalidArgument(
            fmt::format("the program graph's {} {} is {}, not below {}", what, i, value, limit));
      }
      out[i] = static_cast<Enum>(value);
    }
    offset_ += count;
    return okStatus();
  }
  Result<std::string> text(std::string_view what) {
    KILN_ASSIGN_OR_RETURN(std::uint32_t length, u32(what));
    if (bytes_.size() - offset_ < length) return truncated(what);
    std::string out(bytes_.substr(offset_, length));
    offset_ += length;
    return out;
  }
  void skipPadding() { offset_ = std::min(bytes_.size(), (offset_ + 3) / 4 * 4); }
  std::size_t left() const { return bytes_.size() - offset_; }

 private:
  Status truncated(std::string_view what) const {
    return invalidArgument(
        fmt::format("the program graph is truncated: it ends in its {} (at byte {} of {})", what,
                    offset_, bytes_.size()));
  }
  std::string_view bytes_;
  std::size_t offset_ = 0;
};

Status checkBelow(const std::vector<std::uint32_t>& values, std::size_t bound, bool noneAllowed,
                  std::string_view what) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] < bound || (noneAllowed && values[i] == kNoIndex)) continue;
    return invalidArgument(fmt::format("the program graph's {} {} is {}, out of range (below {})",
                                       what, i, values[i], bound));
  }
  return okStatus();
}

void putTexts(std::string& out, const std::vector<std::string>& texts) {
  for (const std::string& text : texts) {
    putU32(out, static_cast<std::uint32_t>(text.size()));
    out += text;
  }
  padTo4(out);
}

Status readTexts(Reader& in, std::uint32_t count, std::vector<std::string>& out,
                 std::string_view what) {
  out.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(std::string text, in.text(what));
    out.push_back(std::move(text));
  }
  in.skipPadding();
  return okStatus();
}

}  // namespace

std::string encodeProgramGraph(const ProgramGraph& graph) {
  // Full texts go only with an index per node (a graph without them has none).
  const bool full = !graph.fullTexts.empty() && graph.nodeFullText.size() == graph.nodes();
  std::string out(kMagic);
  putU32(out, static_cast<std::uint32_t>(graph.nodes()));
  putU32(out, static_cast<std::uint32_t>(graph.edges()));
  putU32(out, static_cast<std::uint32_t>(graph.functionNames.size()));
  putU32(out, static_cast<std::uint32_t>(graph.texts.size()));
  putU32(out, static_cast<std::uint32_t>(full ? graph.fullTexts.size() : 0));
  putTexts(out, graph.texts);
  if (full) putTexts(out, graph.fullTexts);
  putU32s(out, graph.functionNames);
  putU32s(out, graph.nodeText);
  if (full) putU32s(out, graph.nodeFullText);
  putU32s(out, graph.nodeFunction);
  putU32s(out, graph.nodeBlock);
  putU8s(out, graph.nodeKind);
  padTo4(out);
  putU32s(out, graph.edgeSource);
  putU32s(out, graph.edgeTarget);
  putU32s(out, graph.edgePosition);
  putU8s(out, graph.edgeFlow);
  return out;
}

Result<ProgramGraph> decodeProgramGraph(std::string_view bytes) {
  const bool withFullTexts = bytes.starts_with(kMagic);
  if (!withFullTexts && !bytes.starts_with(kMagicWithoutFullTexts)) {
    return invalidArgument("not a program graph: it does not start with \"KPG2\" (or \"KPG1\")");
  }
  Reader in(bytes.substr(kMagic.size()));
  KILN_ASSIGN_OR_RETURN(std::uint32_t nodes, in.u32("header"));
  KILN_ASSIGN_OR_RETURN(std::uint32_t edges, in.u32("header"));
  KILN_ASSIGN_OR_RETURN(std::uint32_t functions, in.u32("header"));
  KILN_ASSIGN_OR_RETURN(std::uint32_t texts, in.u32("header"));
  std::uint32_t fullTexts = 0;
  if (withFullTexts) {
    KILN_ASSIGN_OR_RETURN(fullTexts, in.u32("header"));
  }
  if (nodes > kMaxGraphNodes || edges > kMaxGraphEdges) {
    return invalidArgument(
        fmt::format("the program graph has {} nodes and {} edges, over the bounds ({} and {})",
                    nodes, edges, kMaxGraphNodes, kMaxGraphEdges));
  }
  // Each text takes 4 bytes at least: a count larger than what is left is
  // refused before anything is reserved for it.
  if (texts > in.left() / 4 || functions > in.left() / 4 || fullTexts > in.left() / 4) {
    return invalidArgument("the program graph is truncated: it ends in its texts");
  }
  ProgramGraph graph;
  KILN_RETURN_IF_ERROR(readTexts(in, texts, graph.texts, "texts"));
  KILN_RETURN_IF_ERROR(readTexts(in, fullTexts, graph.fullTexts, "full texts"));
  KILN_RETURN_IF_ERROR(in.u32s(functions, graph.functionNames, "function names"));
  KILN_RETURN_IF_ERROR(in.u32s(nodes, graph.nodeText, "node texts"));
  if (fullTexts != 0) {
    KILN_RETURN_IF_ERROR(in.u32s(nodes, graph.nodeFullText, "node full texts"));
  }
  KILN_RETURN_IF_ERROR(in.u32s(nodes, graph.nodeFunction, "node functions"));
  KILN_RETURN_IF_ERROR(in.u32s(nodes, graph.nodeBlock, "node blocks"));
  KILN_RETURN_IF_ERROR(in.u8s(nodes, 3, graph.nodeKind, "node kind"));
  in.skipPadding();
  KILN_RETURN_IF_ERROR(in.u32s(edges, graph.edgeSource, "edge sources"));
  KILN_RETURN_IF_ERROR(in.u32s(edges, graph.edgeTarget, "edge targets"));
  KILN_RETURN_IF_ERROR(in.u32s(edges, graph.edgePosition, "edge positions"));
  KILN_RETURN_IF_ERROR(in.u8s(edges, 3, graph.edgeFlow, "edge flow"));
  if (in.left() != 0) {
    return invalidArgument(
        fmt::format("the program graph has {} bytes after its last edge", in.left()));
  }
  KILN_RETURN_IF_ERROR(checkBelow(graph.functionNames, texts, false, "function name"));
  KILN_RETURN_IF_ERROR(checkBelow(graph.nodeText, texts, false, "node text"));
  KILN_RETURN_IF_ERROR(checkBelow(graph.nodeFullText, fullTexts, false, "node full text"));
  KILN_RETURN_IF_ERROR(checkBelow(graph.nodeFunction, functions, true, "node function"));
  KILN_RETURN_IF_ERROR(checkBelow(graph.edgeSource, nodes, false, "edge source"));
  KILN_RETURN_IF_ERROR(checkBelow(graph.edgeTarget, nodes, false, "edge target"));
  return graph;
}

}  // namespace kiln
