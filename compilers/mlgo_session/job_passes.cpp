#include "compilers/mlgo_session/job_passes.h"

#include <fmt/format.h>

#include <array>
#include <cctype>

#include "compilers/llvm_engine/pass_table.h"

namespace kiln::mlgo_session {
namespace {

constexpr std::string_view kWhereListed =
    "a job may name the llvm type's actions and the passes they run (docs/actions.md), "
    "default<O0..Oz> and the other standard pipelines, and pass-manager nestings "
    "(docs/security.md, A client's module)";
constexpr std::size_t kMaxDepth = 16;
constexpr std::array<std::string_view, 5> kStandardPipelines = {"default", "thinlto-pre-link",
                                                                "thinlto", "lto-pre-link", "lto"};
constexpr std::array<std::string_view, 6> kLevels = {"O0", "O1", "O2", "O3", "Os", "Oz"};

bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

bool isParamChar(char c) { return isNameChar(c) || c == ';' || c == '='; }

bool smallCount(std::string_view text) {
  if (text.empty() || text.size() > 3) return false;
  int value = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    value = value * 10 + (c - '0');
  }
  return value >= 1 && value <= 100;
}

std::string shown(std::string_view text) { return std::string(text.substr(0, 80)); }

class Parser {
 public:
  Parser(std::string_view text, const JobPasses& passes) : text_(text), passes_(passes) {}

  Status pipeline(std::size_t depth) {
    if (depth > kMaxDepth) return refuse(fmt::format("nests deeper than {} levels", kMaxDepth));
    while (true) {
      KILN_RETURN_IF_ERROR(element(depth));
      if (at_ < text_.size() && text_[at_] == ',') {
        ++at_;
        continue;
      }
      return okStatus();
    }
  }

  bool atEnd() const { return at_ == text_.size(); }
  std::size_t at() const { return at_; }

 private:
  Status refuse(const std::string& what) const {
    return invalidArgument(fmt::format("flag \"-passes=\" {}; {}", what, kWhereListed));
  }

  Status element(std::size_t depth) {
    std::size_t start = at_;
    while (at_ < text_.size() && isNameChar(text_[at_])) ++at_;
    std::string_view name = text_.substr(start, at_ - start);
    if (name.empty()) return refuse(fmt::format("has no pass name at offset {}", start));
    std::string_view params;
    bool hasParams = false;
    if (at_ < text_.size() && text_[at_] == '<') {
      std::size_t open = ++at_;
      while (at_ < text_.size() && isParamChar(text_[at_])) ++at_;
      if (at_ == text_.size() || text_[at_] != '>') {
        return refuse(fmt::format("has unterminated or unusual parameters after {}", shown(name)));
      }
      params = text_.substr(open, at_ - open);
      hasParams = true;
      ++at_;
    }
    bool nested = at_ < text_.size() && text_[at_] == '(';
    KILN_RETURN_IF_ERROR(judge(name, hasParams, params, nested));
    if (!nested) return okStatus();
    ++at_;
    KILN_RETURN_IF_ERROR(pipeline(depth + 1));
    if (at_ == text_.size() || text_[at_] != ')') {
      return refuse(fmt::format("has an unclosed '(' after {}", shown(name)));
    }
    ++at_;
    return okStatus();
  }

  Status judge(std::string_view name, bool hasParams, std::string_view params, bool nested) const {
    if (name == "module" || name == "cgscc" || name == "loop" || name == "loop-mssa" ||
        name == "function" || name == "devirt" || name == "repeat") {
      bool paramsOk = !hasParams || (name == "function" && params == "eager-inv") ||
                      ((name == "devirt" || name == "repeat") && smallCount(params));
      if (!nested || !paramsOk) {
        return refuse(fmt::format("uses {} other than as {}(...) with its own parameters",
                                  shown(name), shown(name)));
      }
      return okStatus();
    }
    for (std::string_view standard : kStandardPipelines) {
      if (name != standard) continue;
      for (std::string_view level : kLevels) {
        if (hasParams && params == level && !nested) return okStatus();
      }
      return refuse(fmt::format("needs {}<O0|O1|O2|O3|Os|Oz>", shown(name)));
    }
    if (!passes_.allows(name)) {
      return refuse(fmt::format("names {}, which is not a pass a job may run", shown(name)));
    }
    if (nested) return refuse(fmt::format("nests passes inside {}", shown(name)));
    return okStatus();
  }

  std::string_view text_;
  const JobPasses& passes_;
  std::size_t at_ = 0;
};

}  // namespace

JobPasses JobPasses::fromTable(const llvm_engine::PassTable& table) {
  JobPasses passes;
  for (const llvm_engine::PassInfo& action : table.passes()) {
    passes.names_.insert(action.name);
    passes.names_.insert(action.runs.begin(), action.runs.end());
  }
  return passes;
}

JobPasses JobPasses::of(std::set<std::string, std::less<>> names) {
  JobPasses passes;
  passes.names_ = std::move(names);
  return passes;
}

Status JobPasses::check(std::string_view pipeline) const {
  Parser parser(pipeline, *this);
  KILN_RETURN_IF_ERROR(parser.pipeline(0));
  if (!parser.atEnd()) {
    return invalidArgument(
        fmt::format("flag \"-passes=\" has '{}' at offset {} where a ',' or the end belongs; {}",
                    pipeline.substr(parser.at(), 1), parser.at(), kWhereListed));
  }
  return okStatus();
}

}  // namespace kiln::mlgo_session
