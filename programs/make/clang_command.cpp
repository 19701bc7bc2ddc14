#include "programs/make/clang_command.h"

#include <algorithm>
#include <array>
#include <optional>

namespace kiln::programs {
namespace {

using std::string_view;

bool startsWith(string_view text, string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool isOneOf(string_view text, std::initializer_list<string_view> options) {
  return std::find(options.begin(), options.end(), text) != options.end();
}

bool hasPrefixIn(string_view text, std::initializer_list<string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](string_view prefix) { return startsWith(text, prefix); });
}

Status refuse(const std::string& why) {
  return invalidArgument("not one compile of one C/C++ source: " + why);
}

// What a flag does to the bitcode compile and whether it is a module flag.
enum class Role : std::uint8_t {
  kDrop,          // output, mode, dependencies, LTO, linker, warnings, debug info
  kPreprocessor,  // kept for the compile; not a module flag
  kCodegen,       // kept, and a module flag
};

// Flags whose value is the next argument ("-I dir"); some also take it
// joined ("-Idir") or after '=' ("--sysroot=dir").
enum class Joined : std::uint8_t { kNever, kDirect, kEquals };
struct SeparateFlag {
  string_view name;
  Role role;
  Joined joined;
};
constexpr std::array kSeparateFlags{
    SeparateFlag{"-o", Role::kDrop, Joined::kDirect},
    SeparateFlag{"-MF", Role::kDrop, Joined::kDirect},
    SeparateFlag{"-MT", Role::kDrop, Joined::kDirect},
    SeparateFlag{"-MQ", Role::kDrop, Joined::kDirect},
    SeparateFlag{"-MJ", Role::kDrop, Joined::kDirect},
    SeparateFlag{"-dependency-file", Role::kDrop, Joined::kNever},
    SeparateFlag{"--serialize-diagnostics", Role::kDrop, Joined::kEquals},
    SeparateFlag{"-serialize-diagnostics", Role::kDrop, Joined::kNever},
    SeparateFlag{"-Xlinker", Role::kDrop, Joined::kNever},
    SeparateFlag{"-Xassembler", Role::kDrop, Joined::kNever},
    SeparateFlag{"-Xanalyzer", Role::kDrop, Joined::kNever},
    SeparateFlag{"-T", Role::kDrop, Joined::kNever},
    SeparateFlag{"-z", Role::kDrop, Joined::kNever},
    SeparateFlag{"-u", Role::kDrop, Joined::kNever},
    SeparateFlag{"-L", Role::kDrop, Joined::kDirect},
    SeparateFlag{"-l", Role::kDrop, Joined::kDirect},
    SeparateFlag{"-B", Role::kDrop, Joined::kDirect},
    SeparateFlag{"-resource-dir", Role::kDrop, Joined::kEquals},
    SeparateFlag{"-I", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"-D", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"-U", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"-include", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"-imacros", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"-isystem", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"-isystem-after", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"-cxx-isystem", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"-iquote", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"-idirafter", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"-iprefix", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"-iwithprefix", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"-iwithprefixbefore", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"-isysroot", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"--sysroot", Role::kPreprocessor, Joined::kEquals},
    SeparateFlag{"-ivfsoverlay", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"-include-pch", Role::kPreprocessor, Joined::kNever},
    SeparateFlag{"-F", Role::kPreprocessor, Joined::kDirect},
    SeparateFlag{"-working-directory", Role::kPreprocessor, Joined::kEquals},
    SeparateFlag{"-target", Role::kCodegen, Joined::kNever},
    SeparateFlag{"--target", Role::kCodegen, Joined::kEquals},
    SeparateFlag{"-mllvm", Role::kCodegen, Joined::kEquals},
    SeparateFlag{"-arch", Role::kCodegen, Joined::kNever},
};

// The separate-argument flag `arg` names exactly, or whose value is joined
// to it. An exact name wins (-include-pch over -include joined with
// "-pch"); of several joined matches the longest name does (-isystem-after
// over -isystem).
struct FlagMatch {
  const SeparateFlag* flag = nullptr;
  bool joined = false;
};
FlagMatch matchSeparateFlag(string_view arg) {
  FlagMatch best;
  for (const SeparateFlag& flag : kSeparateFlags) {
    if (arg == flag.name) return FlagMatch{&flag, false};
    if (flag.joined == Joined::kNever || !startsWith(arg, flag.name)) continue;
    if (flag.joined == Joined::kEquals && arg[flag.name.size()] != '=') continue;
    if (best.flag == nullptr || flag.name.size() > best.flag->name.size()) {
      best = FlagMatch{&flag, true};
    }
  }
  // -objcmt-* and friends share -o's first letters; they are no output flag.
  if (best.flag != nullptr && best.flag->name == "-o" && startsWith(arg, "-obj")) return {};
  return best;
}

// Flags without a value that kiln drops. The mode flags say "one compile".
constexpr std::array kModeFlags{string_view{"-c"},         string_view{"-S"},
                                string_view{"-E"},         string_view{"-M"},
                                string_view{"-MM"},        string_view{"-fsyntax-only"},
                                string_view{"-emit-llvm"}, string_view{"--precompile"}};

bool isDroppedFlag(string_view arg) {
  if (isOneOf(arg, {"-MD",
                    "-MMD",
                    "-MP",
                    "-MG",
                    "-MV",
                    "-pipe",
                    "-v",
                    "-P",
                    "-C",
                    "-CC",
                    "-w",
                    "-shared",
                    "-static",
                    "-rdynamic",
                    "-pie",
                    "-no-pie",
                    "-nostdlib",
                    "-nostartfiles",
                    "-nodefaultlibs",
                    "-s",
                    "-time",
                    "-pedantic",
                    "-pedantic-errors",
                    "-fno-lto",
                    "-ffat-lto-objects",
                    "-fno-fat-lto-objects",
                    "-fwhole-program-vtables",
                    "-fno-whole-program-vtables",
                    "-fsplit-lto-unit",
                    "-fno-split-lto-unit",
                    "-fvirtual-function-elimination",
                    "-no-integrated-as",
                    "-integrated-as",
                    "-Qunused-arguments"})) {
    return true;
  }
  // -g and its family (debug information, see the header); not --gcc-toolchain.
  if (startsWith(arg, "-g") && !startsWith(arg, "-gcc-")) return true;
  return hasPrefixIn(arg, {"-flto", "-fembed-bitcode", "-save-temps", "-W", "-static-", "-fuse-ld=",
                           "--ld-path=", "-ftime-trace", "-ftime-report", "-fcrash-diagnostics",
                           "-fthinlto-index=", "--save-stats", "-save-stats", "-rpath"});
}

// Flags that would make clang run code other than its own, or do something
// other than compile.
std::optional<std::string> forbiddenFlag(string_view arg) {
  if (hasPrefixIn(arg, {"-fplugin", "-fpass-plugin"})) {
    return "'" + std::string(arg) + "' loads a plugin into clang";
  }
  if (startsWith(arg, "--config")) {
    return "'" + std::string(arg) + "' reads clang options from a file kiln does not check";
  }
  if (arg == "-###") return std::string("'-###' prints the commands instead of compiling");
  if (arg == "--analyze") return std::string("'--analyze' runs the static analyzer, not a compile");
  if (startsWith(arg, "-ccc-")) return "'" + std::string(arg) + "' is a clang driver debug flag";
  return std::nullopt;
}

// -Xclang values: kiln's own and the mode's are dropped, plugins refused.
std::optional<Role> xclangRole(string_view value, std::string& refusal) {
  if (hasPrefixIn(value, {"-load", "-plugin", "-add-plugin", "-fpass-plugin"})) {
    refusal = "'-Xclang " + std::string(value) + "' loads a plugin into clang";
    return std::nullopt;
  }
  if (startsWith(value, "-emit-") || isOneOf(value, {"-disable-llvm-passes", "-disable-O0-optnone",
                                                     "-disable-llvm-optzns", "-S", "-o"})) {
    return Role::kDrop;
  }
  return Role::kCodegen;
}

// A -x value: the language it sets for the following inputs, or the reason
// it is not one kiln compiles. "none" resets to the extension's rule.
struct XLanguage {
  std::optional<SourceLanguage> language;  // nullopt with ok: "none"
  std::string refusal;
};
XLanguage languageOfX(string_view value) {
  if (isOneOf(value, {"c", "cpp-output"})) return {SourceLanguage::kC, {}};
  if (isOneOf(value, {"c++", "c++-cpp-output"})) return {SourceLanguage::kCxx, {}};
  if (value == "none") return {std::nullopt, {}};
  if (value.find("header") != string_view::npos) {
    return {std::nullopt, "-x " + std::string(value) + " compiles a header, not a module"};
  }
  return {std::nullopt, "-x " + std::string(value) + " is not C or C++"};
}

bool isCxxDriver(string_view compiler) {
  std::string name = std::filesystem::path(compiler).filename().string();
  return name.find("++") != std::string::npos;
}

bool isLauncher(string_view compiler) {
  std::string name = std::filesystem::path(compiler).filename().string();
  return isOneOf(name, {"ccache", "sccache", "distcc", "icecc"});
}

bool isMsvcDriver(string_view compiler) {
  std::string name = std::filesystem::path(compiler).filename().string();
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name == "cl" || name == "cl.exe" || startsWith(name, "clang-cl");
}

// -O, -O0..-O4, -Os, -Oz, -Og, -Ofast (not -ObjC).
bool isOptimizationLevel(string_view arg) {
  if (!startsWith(arg, "-O")) return false;
  string_view level = arg.substr(2);
  return level.empty() || (level.size() == 1 && level[0] >= '0' && level[0] <= '9') ||
         isOneOf(level, {"s", "z", "g", "fast"});
}

struct Input {
  std::filesystem::path path;  // absolute, normal
  std::optional<SourceLanguage> xLanguage;
};

std::filesystem::path absoluteIn(const std::filesystem::path& directory,
                                 const std::filesystem::path& path) {
  return (path.is_absolute() ? path : directory / path).lexically_normal();
}

}  // namespace

Result<SourceLanguage> languageOfSource(const std::filesystem::path& source, bool cxxDriver) {
  std::string ext = source.extension().string();
  if (isOneOf(ext, {".c", ".i"})) {
    return cxxDriver && ext == ".c" ? SourceLanguage::kCxx : SourceLanguage::kC;
  }
  if (isOneOf(ext, {".cc", ".cpp", ".cxx", ".c++", ".C", ".cp", ".CPP", ".ii"})) {
    return SourceLanguage::kCxx;
  }
  std::string name = source.filename().string();
  if (isOneOf(ext, {".s", ".S", ".sx", ".asm"})) {
    return invalidArgument(name + " is an assembler source, not C or C++");
  }
  if (isOneOf(ext, {".h", ".hh", ".hpp", ".hxx", ".H", ".inc"})) {
    return invalidArgument(name + " is a header, not a module");
  }
  if (isOneOf(ext, {".m", ".mm", ".M"})) return invalidArgument(name + " is Objective-C");
  if (isOneOf(ext, {".ll", ".bc"})) {
    return invalidArgument(name + " is LLVM IR already, not a C/C++ source");
  }
  return invalidArgument(name + " is not a C or C++ source (by its extension '" + ext + "')");
}

Result<BitcodeCompile> bitcodeCompile(const CompileCommand& command,
                                      const std::filesystem::path& output,
                                      const BitcodeCompilers& compilers) {
  std::vector<std::string> args = command.arguments;
  while (!args.empty() && isLauncher(args.front())) args.erase(args.begin());
  if (args.empty()) return refuse("the command is empty");
  if (isMsvcDriver(args.front())) {
    return refuse("'" + args.front() + "' is an MSVC-style driver; give a gcc/clang-style command");
  }
  if (!command.directory.is_absolute()) {
    return invalidArgument("the compile command's directory '" + command.directory.string() +
                           "' is not absolute");
  }
  bool cxxDriver = isCxxDriver(args.front());

  std::vector<std::string> kept;         // the bitcode compile's flags
  std::vector<std::string> moduleFlags;  // the .cmd's
  std::vector<Input> inputs;
  std::optional<SourceLanguage> xLanguage;
  std::string optimizationLevel = "-O0";
  bool compileOnly = false;
  bool onlyInputsFollow = false;

  auto keep = [&](Role role, std::initializer_list<string_view> words) {
    if (role == Role::kDrop) return;
    for (string_view w : words) kept.emplace_back(w);
    if (role == Role::kCodegen) {
      for (string_view w : words) moduleFlags.emplace_back(w);
    }
  };

  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (onlyInputsFollow || arg.empty() || arg[0] != '-') {
      if (!onlyInputsFollow && !arg.empty() && arg[0] == '@') {
        return refuse("'" + arg + "' is a response file; kiln does not expand them");
      }
      if (arg.empty()) return refuse("argument " + std::to_string(i) + " is empty");
      inputs.push_back(Input{absoluteIn(command.directory, arg), xLanguage});
      continue;
    }
    if (arg == "-") return refuse("'-' reads the source from standard input");
    if (arg == "--") {
      onlyInputsFollow = true;
      continue;
    }
    if (auto forbidden = forbiddenFlag(arg)) return refuse(*forbidden);
    if (std::find(kModeFlags.begin(), kModeFlags.end(), arg) != kModeFlags.end()) {
      compileOnly = true;
      continue;
    }
    if (startsWith(arg, "-x")) {
      // "-x lang" or "-xlang": the language of the inputs that follow.
      string_view value;
      if (arg == "-x") {
        if (i + 1 >= args.size()) return refuse("-x has no language after it");
        value = args[++i];
      } else {
        value = string_view(arg).substr(2);
      }
      XLanguage x = languageOfX(value);
      if (!x.refusal.empty()) return refuse(x.refusal);
      xLanguage = x.language;
      continue;
    }
    if (arg == "-Xclang") {
      if (i + 1 >= args.size()) return refuse("-Xclang has no value after it");
      const std::string& value = args[++i];
      std::string refusal;
      auto role = xclangRole(value, refusal);
      if (!role) return refuse(refusal);
      keep(*role, {"-Xclang", value});
      continue;
    }
    if (arg == "-Xpreprocessor") {
      if (i + 1 >= args.size()) return refuse("-Xpreprocessor has no value after it");
      const std::string& value = args[++i];
      // A dependency-file request there writes beside the build, like -MD.
      keep(startsWith(value, "-M") ? Role::kDrop : Role::kPreprocessor, {"-Xpreprocessor", value});
      continue;
    }
    if (startsWith(arg, "-Wp,")) {
      // -Wp,-MD,file (the Linux kernel's form) asks the preprocessor for a
      // dependency file; other -Wp, values are preprocessor flags.
      bool dependencies = startsWith(arg, "-Wp,-M");
      keep(dependencies ? Role::kDrop : Role::kPreprocessor, {arg});
      continue;
    }
    if (isOptimizationLevel(arg)) {
      // -O, -O0..-O3, -Os, -Oz, -Og, -Ofast: the last one counts, as in clang.
      optimizationLevel = arg;
      keep(Role::kCodegen, {arg});
      continue;
    }
    if (FlagMatch match = matchSeparateFlag(arg); match.flag != nullptr) {
      if (match.joined) {
        keep(match.flag->role, {arg});
      } else {
        if (i + 1 >= args.size()) return refuse(arg + " has no value after it");
        keep(match.flag->role, {arg, args[++i]});
      }
      continue;
    }
    if (isDroppedFlag(arg)) continue;
    if (hasPrefixIn(arg, {"-std=", "-ansi", "-nostdinc", "-trigraphs", "--std="})) {
      keep(Role::kPreprocessor, {arg});
      continue;
    }
    // Everything else (-f*, -m*, -pthread, --target=...) may shape the IR.
    keep(Role::kCodegen, {arg});
  }

  if (!compileOnly) {
    return refuse(
        "the command links (it has none of -c, -S, -E); give the command that compiles "
        "one source");
  }
  if (inputs.empty()) return refuse("the command has no input file");
  std::filesystem::path source;
  std::optional<SourceLanguage> language;
  if (!command.file.empty()) {
    source = absoluteIn(command.directory, command.file);
    auto it = std::find_if(inputs.begin(), inputs.end(),
                           [&](const Input& in) { return in.path == source; });
    if (it == inputs.end()) {
      return refuse("the command does not compile its file " + source.string());
    }
    language = it->xLanguage;
  } else {
    source = inputs.front().path;
    language = inputs.front().xLanguage;
  }
  if (inputs.size() > 1) {
    std::string others;
    for (const Input& in : inputs) {
      if (in.path == source) continue;
      others += (others.empty() ? "" : ", ") + in.path.filename().string();
    }
    return refuse("it has several inputs (" + source.filename().string() + " and " + others +
                  "); compile each source by itself");
  }
  bool explicitLanguage = language.has_value();
  if (!language) {
    auto byName = languageOfSource(source, cxxDriver);
    if (!byName.ok()) return refuse(byName.status().message());
    language = *byName;
  }

  BitcodeCompile out;
  out.workingDirectory = command.directory;
  out.source = source;
  out.language = *language;
  out.argv.push_back(*language == SourceLanguage::kCxx ? compilers.clangxx : compilers.clang);
  out.argv.insert(out.argv.end(), kept.begin(), kept.end());
  if (optimizationLevel == "-O0") {
    out.argv.insert(out.argv.end(), {"-Xclang", "-disable-O0-optnone"});
  }
  // -fverify-intermediate-code: a release clang skips LLVM's verifier on
  // the module it writes unless asked; in process it costs next to nothing.
  out.argv.insert(out.argv.end(), {"-Xclang", "-disable-llvm-passes", "-w",
                                   "-fverify-intermediate-code", "-emit-llvm", "-c"});
  // The language is said explicitly when the extension alone would not give
  // it (a -x flag, or a .c file under a C++ driver).
  bool extensionSays = !explicitLanguage && languageOfSource(source, false).ok() &&
                       *languageOfSource(source, false) == *language;
  if (!extensionSays) {
    out.argv.insert(out.argv.end(), {"-x", *language == SourceLanguage::kCxx ? "c++" : "c"});
  }
  out.argv.push_back(source.string());
  out.argv.insert(out.argv.end(), {"-o", absoluteIn(command.directory, output).string()});
  out.moduleFlags = std::move(moduleFlags);
  return out;
}

std::vector<std::string> unknownArguments(std::string_view diagnostics) {
  std::vector<std::string> unknown;
  for (string_view marker :
       {string_view("error: unknown argument: '"), string_view("error: unknown argument '")}) {
    std::size_t at = 0;
    while ((at = diagnostics.find(marker, at)) != string_view::npos) {
      std::size_t start = at + marker.size();
      std::size_t end = diagnostics.find('\'', start);
      if (end == string_view::npos) break;
      unknown.emplace_back(diagnostics.substr(start, end - start));
      at = end;
    }
  }
  return unknown;
}

// Removes the flags `isUnknown` picks from words[begin, end), with the
// -Xclang or -mllvm before one (else that would take the next flag); returns
// how many words went.
template <class Pred>
std::size_t removeFlags(std::vector<std::string>& words, std::size_t begin, std::size_t end,
                        Pred isUnknown) {
  std::vector<std::string> kept;
  for (std::size_t i = begin; i < end; ++i) {
    bool carrier = (words[i] == "-Xclang" || words[i] == "-mllvm") && i + 1 < end;
    if (carrier && isUnknown(words[i + 1])) {
      ++i;
      continue;
    }
    if (!carrier && isUnknown(words[i])) continue;
    kept.push_back(words[i]);
    if (carrier) kept.push_back(words[++i]);
  }
  std::size_t removed = (end - begin) - kept.size();
  words.erase(words.begin() + static_cast<std::ptrdiff_t>(begin),
              words.begin() + static_cast<std::ptrdiff_t>(end));
  words.insert(words.begin() + static_cast<std::ptrdiff_t>(begin), kept.begin(), kept.end());
  return removed;
}

bool dropUnknownArguments(BitcodeCompile& compile, const std::vector<std::string>& unknown) {
  auto isUnknown = [&](const std::string& arg) {
    return !arg.empty() && arg[0] == '-' &&
           std::find(unknown.begin(), unknown.end(), arg) != unknown.end();
  };
  // Only the build's flags: after the compiler, before kiln's own tail, which
  // starts with the first -Xclang -disable-O0-optnone or -disable-llvm-passes
  // (the build's own such flags were dropped).
  std::size_t tail = 1;
  while (tail + 1 < compile.argv.size() &&
         !(compile.argv[tail] == "-Xclang" && (compile.argv[tail + 1] == "-disable-O0-optnone" ||
                                               compile.argv[tail + 1] == "-disable-llvm-passes"))) {
    ++tail;
  }
  if (removeFlags(compile.argv, 1, tail, isUnknown) == 0) return false;
  removeFlags(compile.moduleFlags, 0, compile.moduleFlags.size(), isUnknown);
  return true;
}

std::string cmdFileText(const std::vector<std::string>& flags) {
  std::string text;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    if (i > 0) text.push_back('\0');
    text += flags[i];
  }
  return text;
}

}  // namespace kiln::programs
