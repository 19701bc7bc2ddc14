#include "compilers/llvm_engine/asm_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <vector>

namespace kiln::llvm_engine {
namespace {

// Stands for an operand's text in an expanded inline asm template: what
// LLVM prints there (a register, a number, a symbol) is not in the template.
constexpr char kOperand = '\x01';
constexpr std::size_t kMaxVariants = 8;

struct Rule {
  std::string_view directive;  // lower case, without the dot
  std::string_view why;
};

// Everything in LLVM 19's assembler (MC's AsmParser and the ELF, COFF,
// Darwin and target parsers) that opens a file by a name the text gives,
// writes outside the object, or builds statements from arguments.
constexpr std::array kRefused = {
    Rule{"include", "reads host files"},
    Rule{"incbin", "reads host files"},
    Rule{"print", "writes to the worker's output"},
    Rule{"secure_log_unique", "writes to a host file"},
    Rule{"secure_log_reset", "writes to a host file"},
    Rule{"macro", "defines macros, which can build any directive from their arguments"},
    Rule{"altmacro", "changes macro expansion"},
    Rule{"purgem", "changes macros"},
    Rule{"macros_on", "changes macro expansion"},
    Rule{"macros_off", "changes macro expansion"},
    Rule{"rept", "repeats statements"},
    Rule{"rep", "repeats statements"},
    Rule{"irp", "expands statements from arguments"},
    Rule{"irpc", "expands statements from arguments"},
};

enum class Fill { kNone, kCount, kCountTimesSize, kExponent, kBytes };

struct FillRule {
  std::string_view directive;
  Fill kind;
};

// Directives whose first argument says how many bytes to emit. Only a plain
// literal within its bound is accepted: an expression could say anything.
constexpr std::array kFills = {
    FillRule{"zero", Fill::kCount},        FillRule{"space", Fill::kCount},
    FillRule{"skip", Fill::kCount},        FillRule{"nops", Fill::kCount},
    FillRule{"org", Fill::kCount},         FillRule{"fill", Fill::kCountTimesSize},
    FillRule{"ds", Fill::kCountTimesSize}, FillRule{"dcb", Fill::kCountTimesSize},
    FillRule{"align", Fill::kExponent},    FillRule{"align32", Fill::kExponent},
    FillRule{"p2align", Fill::kExponent},  FillRule{"p2alignw", Fill::kExponent},
    FillRule{"p2alignl", Fill::kExponent}, FillRule{"bundle_align_mode", Fill::kExponent},
    FillRule{"balign", Fill::kBytes},      FillRule{"balignw", Fill::kBytes},
    FillRule{"balignl", Fill::kBytes},
};

bool isWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

std::size_t skipBlanks(std::string_view text, std::size_t at) {
  while (at < text.size() && isBlank(text[at])) ++at;
  return at;
}

// A decimal or 0x-hex literal at `at` (after blanks), ended by blanks and
// then an argument or statement end; nullopt for anything else (an
// expression, a symbol, a comment that might hide one).
std::optional<std::uint64_t> literalAt(std::string_view text, std::size_t& at) {
  at = skipBlanks(text, at);
  int base = 10;
  if (at + 1 < text.size() && text[at] == '0' && (text[at + 1] == 'x' || text[at + 1] == 'X')) {
    base = 16;
    at += 2;
  }
  std::uint64_t value = 0;
  std::size_t digits = 0;
  for (; at < text.size(); ++at, ++digits) {
    char c = lower(text[at]);
    int digit =
        c >= '0' && c <= '9' ? c - '0' : (base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1);
    if (digit < 0) break;
    if (value > (~std::uint64_t{0} - static_cast<std::uint64_t>(digit)) /
                    static_cast<std::uint64_t>(base)) {
      return std::nullopt;
    }
    value = value * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(digit);
  }
  if (digits == 0) return std::nullopt;
  at = skipBlanks(text, at);
  if (at == text.size()) return value;
  if (std::string_view(",;\n\r#", 5).find(text[at]) != std::string_view::npos || text[at] == '\0') {
    return value;
  }
  return std::nullopt;
}

std::string shown(std::string_view directive) {
  std::string out = ".";
  for (char c : directive.substr(0, 40)) out += c;
  return out;
}

// The bytes a fill or alignment directive asks for, or why it is refused.
std::optional<std::string> fillBytes(std::string_view text, std::size_t at, const FillRule& rule,
                                     std::uint64_t& bytes) {
  const std::string name = shown(rule.directive);
  if (rule.kind == Fill::kCountTimesSize && at < text.size() && text[at] == '.') {
    // .ds.b, .dcb.l, ...: the element size (at most 12 bytes, .ds.x).
    ++at;
    while (at < text.size() && isWordChar(text[at])) ++at;
  }
  std::optional<std::uint64_t> first = literalAt(text, at);
  if (!first) {
    return fmt::format("directive {} needs a plain number as its first argument", name);
  }
  switch (rule.kind) {
    case Fill::kNone:
      return std::nullopt;
    case Fill::kCount:
      if (*first > kMaxFillDirectiveBytes) break;
      bytes = *first;
      return std::nullopt;
    case Fill::kCountTimesSize: {
      std::uint64_t size = 12;
      if (rule.directive == "fill") {
        size = 1;
        if (at < text.size() && text[at] == ',') {
          ++at;
          std::optional<std::uint64_t> given = literalAt(text, at);
          if (!given) return fmt::format("directive {} needs a plain number as its size", name);
          size = std::min<std::uint64_t>(*given, 8);  // the assembler caps it at 8
        }
      }
      if (*first > kMaxFillDirectiveBytes) break;
      bytes = *first * std::max<std::uint64_t>(size, 1);
      return std::nullopt;
    }
    case Fill::kExponent:
      if (*first > kMaxAlignExponent) {
        return fmt::format("directive {} {} asks for an alignment over 2^{} bytes", name, *first,
                           kMaxAlignExponent);
      }
      bytes = std::uint64_t{1} << *first;
      return std::nullopt;
    case Fill::kBytes:
      if (*first > kMaxAlignBytes) {
        return fmt::format("directive {} {} asks for an alignment over {} bytes", name, *first,
                           kMaxAlignBytes);
      }
      bytes = *first;
      return std::nullopt;
  }
  return fmt::format("directive {} {} asks for more than {} bytes", name, *first,
                     kMaxFillDirectiveBytes);
}

bool isOperator(char c) {
  return std::string_view("+-*/%&|^~!<>=([").find(c) != std::string_view::npos;
}

// Whether a statement (lower-cased) gives a symbol a value that later
// expressions evaluate through.
bool assigns(std::string_view lowered) {
  if (lowered.find('=') != std::string_view::npos) return true;
  for (std::string_view word : {".set", ".equ", ".eqv", ".weakref", ".lto_set_conditional"}) {
    if (lowered.find(word) != std::string_view::npos) return true;
  }
  return false;
}

// Counts operators statement by statement (a statement ends at a newline or
// ';' outside a quoted string). Counting errs towards refusing: operators in
// strings and comments count too, and a quote that opens no string for the
// target only joins statements.
std::optional<std::string> expressionCost(std::string_view text, std::uint64_t& assignments) {
  std::uint64_t operators = 0;
  std::string lowered;
  bool quoted = false;
  auto endStatement = [&]() -> std::optional<std::string> {
    if (operators > kMaxStatementOperators) {
      return fmt::format(
          "a statement holds {} operator characters, over {}: the assembler parses and "
          "evaluates expressions recursively, and one this deep overflows its stack",
          operators, kMaxStatementOperators);
    }
    if (assigns(lowered)) assignments += operators + 1;
    operators = 0;
    lowered.clear();
    return std::nullopt;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '\\' && i + 1 < text.size()) {
        lowered += lower(text[++i]);
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == '\n' || c == '\r' || c == ';') {
      if (auto why = endStatement()) return why;
      continue;
    }
    if (isOperator(c)) ++operators;
    lowered += lower(c);
  }
  return endStatement();
}

// Checks text as the assembler will read it.
AsmVerdict scan(std::string_view text) {
  AsmVerdict verdict;
  if (auto why = expressionCost(text, verdict.assignmentCost)) {
    verdict.refused = std::move(why);
    return verdict;
  }
  for (std::size_t dot = text.find('.'); dot != std::string_view::npos;
       dot = text.find('.', dot + 1)) {
    std::size_t end = dot + 1;
    std::string word;
    while (end < text.size() && isWordChar(text[end]) && word.size() < 64) {
      word += lower(text[end++]);
    }
    while (end < text.size() && isWordChar(text[end])) ++end;
    if (end < text.size() && text[end] == kOperand) {
      verdict.refused = fmt::format(
          "directive name {}... is completed by an inline asm operand, so it could be any "
          "directive",
          shown(word));
      return verdict;
    }
    if (word.empty()) {
      std::size_t next = skipBlanks(text, end);
      if (next < text.size() && text[next] == '=' &&
          (next + 1 == text.size() || text[next + 1] != '=')) {
        verdict.refused = "'. =' moves the location counter, which can emit any number of bytes";
        return verdict;
      }
      continue;
    }
    for (const Rule& rule : kRefused) {
      if (word == rule.directive) {
        verdict.refused = fmt::format("directive {} {}", shown(word), rule.why);
        return verdict;
      }
    }
    for (const FillRule& rule : kFills) {
      if (word != rule.directive) continue;
      std::uint64_t bytes = 0;
      if (auto why = fillBytes(text, end, rule, bytes)) {
        verdict.refused = std::move(why);
        return verdict;
      }
      verdict.fillBytes += bytes;
    }
  }
  return verdict;
}

// The template as LLVM's AsmPrinter hands each dialect variant to the
// assembler (AsmPrinterInlineAsm.cpp): `$$` is '$', `$(a$|b$)` keeps one
// alternative, `${:uid}`/`${:private}`/`${:comment}` are fixed text, and
// every operand reference becomes kOperand. What would stop the AsmPrinter
// (report_fatal_error: a bad '$', an operand past the last, nested variants)
// is refused instead.
std::optional<std::string> expandVariants(std::string_view text, std::size_t operandCount,
                                          std::vector<std::string>& out) {
  std::size_t variants = 1;
  bool open = false;
  std::size_t alternatives = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '$') continue;
    char next = text[i + 1];
    if (next == '$') {
      ++i;
    } else if (next == '(') {
      if (open) return "inline asm has nested $( variants";
      open = true;
      alternatives = 1;
    } else if (next == '|' && open) {
      ++alternatives;
      variants = std::max(variants, alternatives);
    } else if (next == ')') {
      open = false;
    }
  }
  if (variants > kMaxVariants) {
    return fmt::format("inline asm has over {} dialect variants", kMaxVariants);
  }
  for (std::size_t k = 0; k < variants; ++k) {
    std::string expanded;
    int current = -1;
    auto emit = [&](std::string_view piece) {
      if (current == -1 || current == static_cast<int>(k)) expanded += piece;
    };
    for (std::size_t i = 0; i < text.size();) {
      if (text[i] != '$') {
        emit(text.substr(i, 1));
        ++i;
        continue;
      }
      char next = i + 1 < text.size() ? text[i + 1] : '\0';
      if (next == '$') {
        emit("$");
        i += 2;
      } else if (next == '(') {
        current = 0;
        i += 2;
      } else if (next == '|') {
        if (current == -1) {
          emit("|");
        } else {
          ++current;
        }
        i += 2;
      } else if (next == ')') {
        if (current == -1) emit("}");
        current = -1;
        i += 2;
      } else if (next == '{') {
        std::size_t close = text.find('}', i + 2);
        if (close == std::string_view::npos) return "inline asm has an unterminated ${ operand";
        std::string_view inner = text.substr(i + 2, close - i - 2);
        if (inner == ":uid") {
          emit("0");
        } else if (inner == ":private") {
          emit(".L");
        } else if (inner == ":comment") {
          emit("#");
        } else if (inner.starts_with(":")) {
          // The AsmPrinter stops the process on one it does not know.
          return fmt::format("inline asm has an unknown ${{{}}} formatter",
                             std::string(inner.substr(0, 20)));
        } else {
          // ${N} or ${N:m}: anything else stops the AsmPrinter too.
          std::size_t digits = 0;
          while (digits < inner.size() && inner[digits] >= '0' && inner[digits] <= '9') ++digits;
          std::string_view rest = inner.substr(digits);
          if (digits == 0 || digits > 6 ||
              !(rest.empty() || (rest.size() == 2 && rest[0] == ':'))) {
            return fmt::format("inline asm has a malformed operand ${{{}}}",
                               std::string(inner.substr(0, 20)));
          }
          if (std::stoul(std::string(inner.substr(0, digits))) >= operandCount) {
            return fmt::format("inline asm names operand {} of {}",
                               std::string(inner.substr(0, digits)), operandCount);
          }
          emit(std::string_view(&kOperand, 1));
        }
        i = close + 1;
      } else {
        std::size_t end = i + 1;
        while (end < text.size() && text[end] >= '0' && text[end] <= '9' && end - i <= 6) ++end;
        if (end == i + 1) {
          return fmt::format(
              "inline asm has a '$' that is not an operand (a '{}' follows it; "
              "write $$ for a dollar sign)",
              next == '\0' ? std::string("nothing") : std::string(1, next));
        }
        if (std::stoul(std::string(text.substr(i + 1, end - i - 1))) >= operandCount) {
          return fmt::format("inline asm names operand {} of {}",
                             std::string(text.substr(i + 1, end - i - 1)), operandCount);
        }
        emit(std::string_view(&kOperand, 1));
        i = end;
      }
    }
    out.push_back(std::move(expanded));
  }
  return std::nullopt;
}

}  // namespace

AsmVerdict checkAssembly(std::string_view text, AsmSource source, std::size_t operandCount) {
  if (source == AsmSource::kModule) return scan(text);
  std::vector<std::string> variants;
  if (auto why = expandVariants(text, operandCount, variants)) return AsmVerdict{std::move(why), 0};
  AsmVerdict verdict;
  for (const std::string& variant : variants) {
    AsmVerdict one = scan(variant);
    if (one.refused) return one;
    // One variant is assembled: the largest bounds them all.
    verdict.fillBytes = std::max(verdict.fillBytes, one.fillBytes);
    verdict.assignmentCost = std::max(verdict.assignmentCost, one.assignmentCost);
  }
  return verdict;
}

}  // namespace kiln::llvm_engine
