#include "programs/make/shell_words.h"

namespace kiln::programs {
namespace {

bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

Status unsupported(std::size_t at, std::string_view what) {
  return invalidArgument("compile command uses shell syntax kiln does not run (" +
                         std::string(what) + " at offset " + std::to_string(at) +
                         "): give the compiler's arguments as a list");
}

// Characters that make a shell do something other than pass a word on.
std::string_view shellMeaning(char c) {
  switch (c) {
    case ';':
      return "';'";
    case '|':
      return "'|'";
    case '&':
      return "'&'";
    case '<':
      return "'<' redirection";
    case '>':
      return "'>' redirection";
    case '(':
    case ')':
      return "a subshell or parenthesis";
    case '`':
      return "a command substitution";
    case '$':
      return "an expansion ('$')";
    case '*':
    case '?':
    case '[':
      return "a glob";
    default:
      return {};
  }
}

}  // namespace

Result<std::vector<std::string>> splitShellWords(std::string_view command) {
  std::vector<std::string> words;
  std::string word;
  bool inWord = false;
  std::size_t i = 0;
  while (i < command.size()) {
    char c = command[i];
    if (isBlank(c)) {
      if (inWord) words.push_back(std::move(word));
      word.clear();
      inWord = false;
      ++i;
      continue;
    }
    // A '#' starting a word begins a comment in sh; no build tool writes one.
    if (c == '\\' && i + 1 < command.size() && command[i + 1] == '\n') {
      i += 2;  // a line continuation joins lines and is no word of its own
      continue;
    }
    if (c == '#' && !inWord) return unsupported(i, "a comment ('#')");
    if (c == '~' && !inWord) return unsupported(i, "a tilde expansion");
    inWord = true;
    if (c == '\'') {
      std::size_t end = command.find('\'', i + 1);
      if (end == std::string_view::npos) return unsupported(i, "an unterminated '");
      word.append(command.substr(i + 1, end - i - 1));
      i = end + 1;
      continue;
    }
    if (c == '"') {
      std::size_t j = i + 1;
      for (;;) {
        if (j >= command.size()) return unsupported(i, "an unterminated \"");
        char d = command[j];
        if (d == '"') break;
        if (d == '\\' && j + 1 < command.size()) {
          char next = command[j + 1];
          if (next == '"' || next == '\\' || next == '$' || next == '`') {
            word.push_back(next);
            j += 2;
            continue;
          }
          if (next == '\n') {  // line continuation
            j += 2;
            continue;
          }
        }
        if (d == '$' || d == '`') return unsupported(j, shellMeaning(d));
        word.push_back(d);
        ++j;
      }
      i = j + 1;
      continue;
    }
    if (c == '\\') {
      if (i + 1 >= command.size()) return unsupported(i, "a trailing backslash");
      word.push_back(command[i + 1]);
      i += 2;
      continue;
    }
    if (std::string_view meaning = shellMeaning(c); !meaning.empty()) {
      return unsupported(i, meaning);
    }
    word.push_back(c);
    ++i;
  }
  if (inWord) words.push_back(std::move(word));
  return words;
}

}  // namespace kiln::programs
