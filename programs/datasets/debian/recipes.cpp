#include "programs/datasets/debian/recipes.h"

#include <algorithm>

namespace kiln::debian {

namespace {

using enum BuildSystem;

// Projects whose Debian source builds on a Debian 12 machine with only what
// scripts/setup installs: a configure script or Makefile shipped in the
// source (no autoreconf), or CMake. A project that fails is reported by the
// install and does not stop the others.
std::vector<Recipe> makeRecipes() {
  return {
      {"zlib", "zlib", "", kConfigureMake, {}, {}, true, "deflate compression library"},
      {"bzip2", "bzip2", "", kMake, {}, {}, true, "block-sorting compressor"},
      {"lz4", "lz4", "", kMake, {}, {}, true, "LZ4 compression library and tool"},
      {"lmdb",
       "lmdb",
       "libraries/liblmdb",
       kMake,
       {},
       {},
       true,
       "Lightning memory-mapped database"},
      {"giflib",
       "giflib",
       "",
       kMake,
       {},
       {"libgif.a", "libutil.a", "gif2rgb", "gifbuild", "giffix", "giftext", "giftool", "gifclrmp"},
       true,
       "GIF image library and tools"},
      {"lua", "lua5.4", "", kMake, {}, {"linux"}, false, "Lua 5.4 interpreter"},
      {"cjson", "cjson", "", kCMake, {}, {}, true, "ultralightweight JSON parser"},
      {"libyaml", "libyaml", "", kCMake, {}, {}, true, "YAML parser and emitter"},
      // Debian's security patches test `XML_DTD == 1`, which CMake's config header
      // defines empty: built without DTD support, the test is false, not an error.
      {"expat",
       "expat",
       "expat",
       kCMake,
       {"-DEXPAT_BUILD_TESTS=OFF", "-DEXPAT_DTD=OFF"},
       {},
       true,
       "XML parser"},
      {"brotli", "brotli", "", kCMake, {}, {}, true, "Brotli compression"},
      {"oniguruma", "libonig", "", kCMake, {}, {}, true, "regular expression library"},
      {"xz",
       "xz-utils",
       "",
       kConfigureMake,
       {"--disable-doc"},
       {},
       true,
       "XZ/LZMA compression library and tools"},
      {"zstd", "libzstd", "", kMake, {}, {}, true, "Zstandard compression library and tool"},
      {"pcre2", "pcre2", "", kConfigureMake, {}, {}, true, "Perl-compatible regular expressions"},
      {"sqlite3", "sqlite3", "", kConfigureMake, {}, {}, true, "SQL database engine"},
      // gawk and cpio are not here: Debian's sources drop their manuals'
      // sources, and their make rebuilds the manual before it is done.
      {"findutils", "findutils", "", kConfigureMake, {}, {}, false, "GNU find, xargs, locate"},
      {"gzip", "gzip", "", kConfigureMake, {}, {}, false, "GNU compression utility"},
      {"libpng", "libpng1.6", "", kConfigureMake, {}, {}, true, "PNG image library"},
      {"tcl", "tcl8.6", "unix", kConfigureMake, {}, {}, true, "Tcl 8.6 interpreter"},
      // Debian's patches to grep, diffutils, m4, gzip and findutils
      // edit their Makefile.am or configure.ac: make would then need
      // automake and autoconf, no build dependencies of kiln. Upstream trees.
      {"grep", "grep", "", kConfigureMake, {}, {}, false, "GNU grep"},
      {"sed", "sed", "", kConfigureMake, {}, {}, true, "GNU stream editor"},
      {"diffutils", "diffutils", "", kConfigureMake, {}, {}, false, "GNU diff, cmp, diff3, sdiff"},
      {"m4", "m4", "", kConfigureMake, {}, {}, false, "GNU macro processor"},
  };
}

std::vector<DatasetSpec> makeDatasets() {
  return {
      {"debian-mini", "zlib from Debian's source, for a quick try and the tests", {"zlib"}},
      {"debian-v0",
       "C libraries and tools from Debian's sources: compression, parsers, interpreters, "
       "databases",
       {"zlib", "bzip2",     "lz4",   "lmdb",  "cjson",  "libyaml", "brotli",   "oniguruma",
        "xz",   "zstd",      "pcre2", "expat", "giflib", "lua",     "tcl",      "grep",
        "sed",  "diffutils", "m4",    "gzip",  "libpng", "sqlite3", "findutils"}},
  };
}

std::vector<std::string> withEnvironment(const Toolchain& toolchain,
                                         std::vector<std::string> argv) {
  std::vector<std::string> out = {"env", "CC=" + toolchain.cc, "CXX=" + toolchain.cxx};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

constexpr std::string_view kCMakeBuildDirectory = "kiln-build";

}  // namespace

const std::vector<Recipe>& allRecipes() {
  static const std::vector<Recipe> recipes = makeRecipes();
  return recipes;
}

const std::vector<DatasetSpec>& allDatasets() {
  static const std::vector<DatasetSpec> datasets = makeDatasets();
  return datasets;
}

const Recipe* findRecipe(std::string_view project) {
  const auto& recipes = allRecipes();
  auto it = std::find_if(recipes.begin(), recipes.end(),
                         [&](const Recipe& r) { return r.project == project; });
  return it == recipes.end() ? nullptr : &*it;
}

const DatasetSpec* findDataset(std::string_view name) {
  const auto& datasets = allDatasets();
  auto it = std::find_if(datasets.begin(), datasets.end(),
                         [&](const DatasetSpec& d) { return d.name == name; });
  return it == datasets.end() ? nullptr : &*it;
}

std::vector<BuildStep> buildSteps(const Recipe& recipe, const Toolchain& toolchain, unsigned jobs) {
  std::string parallel = "-j" + std::to_string(std::max(jobs, 1u));
  std::vector<std::string> underBear = {toolchain.bear, "--output",     "compile_commands.json",
                                        "--",           toolchain.make, parallel};
  std::vector<BuildStep> steps;
  switch (recipe.build) {
    case kMake: {
      // Plain Makefiles often set CC themselves (bzip2: CC=gcc); a command-line CC wins.
      std::vector<std::string> make = underBear;
      make.push_back("CC=" + toolchain.cc);
      make.insert(make.end(), recipe.makeArguments.begin(), recipe.makeArguments.end());
      steps.push_back({"make", withEnvironment(toolchain, std::move(make))});
      break;
    }
    case kConfigureMake: {
      std::vector<std::string> configure = {"./configure"};
      configure.insert(configure.end(), recipe.configureArguments.begin(),
                       recipe.configureArguments.end());
      steps.push_back({"configure", withEnvironment(toolchain, std::move(configure))});
      std::vector<std::string> make = underBear;
      // A Debian patch that touches a manual makes make rebuild its .info,
      // and texinfo is no build dependency of kiln: the manual is not code.
      make.push_back("MAKEINFO=true");
      make.insert(make.end(), recipe.makeArguments.begin(), recipe.makeArguments.end());
      steps.push_back({"make", withEnvironment(toolchain, std::move(make))});
      break;
    }
    case kCMake: {
      std::vector<std::string> configure = {toolchain.cmake,
                                            "-S",
                                            ".",
                                            "-B",
                                            std::string(kCMakeBuildDirectory),
                                            "-G",
                                            "Unix Makefiles",
                                            "-DCMAKE_C_COMPILER=" + toolchain.cc,
                                            "-DCMAKE_CXX_COMPILER=" + toolchain.cxx,
                                            "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                                            "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"};
      configure.insert(configure.end(), recipe.configureArguments.begin(),
                       recipe.configureArguments.end());
      steps.push_back({"cmake", withEnvironment(toolchain, std::move(configure))});
      std::vector<std::string> build = {toolchain.cmake, "--build",
                                        std::string(kCMakeBuildDirectory), "--", parallel};
      build.insert(build.end(), recipe.makeArguments.begin(), recipe.makeArguments.end());
      steps.push_back({"build", withEnvironment(toolchain, std::move(build))});
      break;
    }
  }
  return steps;
}

std::filesystem::path compileCommandsPath(const Recipe& recipe) {
  if (recipe.build == kCMake) {
    return std::filesystem::path(kCMakeBuildDirectory) / "compile_commands.json";
  }
  return "compile_commands.json";
}

}  // namespace kiln::debian
