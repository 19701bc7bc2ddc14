// compile_commands.json (the JSON Compilation Database that CMake writes with
// CMAKE_EXPORT_COMPILE_COMMANDS and `bear -- make` records) read into compile
// commands. Pure: the caller reads the file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>
#include "programs/make/clang_command.h"

namespace kiln::programs {

struct DatabaseEntry {
  // `file` is absolute when the entry names one; empty `command.arguments`
  // with `problem` set when the entry cannot be used.
  CompileCommand command;
  std::string problem;  // e.g. "its \"command\" uses shell syntax kiln does not run (...)"
};

// Every entry, in the file's order. The "arguments" form is taken as is; the
// "command" form is split like a shell would (programs/make/shell_words.h). An
// entry without a string "file" or an absolute "directory", or with neither
// form, has its `problem` set. invalid-argument when the text is not JSON or
// not an array of objects.
Result<std::vector<DatabaseEntry>> parseCompileDatabase(std::string_view text);

}  // namespace kiln::programs
