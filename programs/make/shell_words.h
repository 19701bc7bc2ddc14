// Word splitting for the "command" form of compile_commands.json: the command
// line as a POSIX shell would split it (quotes, backslashes), without running
// anything a shell would run. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>

namespace kiln::programs {

// Splits `command` into words the way sh does for a simple command: blanks
// separate words; '...' is literal; "..." keeps blanks and takes \" \\ \$ \`
// and \<newline> as escapes; a backslash outside quotes escapes the next
// character. Anything that would make the shell do more than run one program
// (; | & < > ( ) `...` $... *?[ globs, a trailing backslash or an unterminated
// quote) is invalid-argument naming it: build tools never write those in a
// compile command, and kiln runs no shell.
Result<std::vector<std::string>> splitShellWords(std::string_view command);

}  // namespace kiln::programs
