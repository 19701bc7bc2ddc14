// What `kiln datasets install` knows how to build: one recipe per project (a
// Debian source package and how its own build runs) and the datasets that
// group them. Data and pure functions only: the table is in recipes.cpp, the
// commands a recipe turns into are assembled here and run by
// programs/datasets/debian/project_build.h.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::debian {

enum class BuildSystem {
  kMake,           // a plain Makefile: make -jN CC=<clang> <make arguments>
  kConfigureMake,  // the shipped ./configure <arguments>, then make -jN <make arguments>
  kCMake,          // cmake <arguments> with CMAKE_EXPORT_COMPILE_COMMANDS, then cmake --build
};

struct Recipe {
  std::string project;        // its folder in the corpus: zlib, lua ...
  std::string sourcePackage;  // Debian's source package: zlib, lua5.4 ...
  std::string directory;      // where the build runs, below the unpacked tree
  BuildSystem build = BuildSystem::kMake;
  std::vector<std::string> configureArguments;  // after ./configure, or after cmake's own
  std::vector<std::string> makeArguments;       // targets and variables after make -jN
  // false: build the upstream tree. Debian's patches to some projects (lua5.4)
  // route the build through libtool, which a Debian 12 machine may lack.
  bool debianPatches = true;
  std::string description;  // a few words: what the project is
};

struct DatasetSpec {
  std::string name;  // debian-v0
  std::string description;
  std::vector<std::string> projects;  // Recipe::project, in build order
};

// Every recipe and every dataset; tests check each dataset names known projects.
const std::vector<Recipe>& allRecipes();
const std::vector<DatasetSpec>& allDatasets();
const Recipe* findRecipe(std::string_view project);
const DatasetSpec* findDataset(std::string_view name);

// The compilers a build records in compile_commands.json, and the tools that run it.
struct Toolchain {
  std::string cc = "clang-19";
  std::string cxx = "clang++-19";
  std::string bear = "bear";  // records make's compiles
  std::string make = "make";
  std::string cmake = "cmake";
};

struct BuildStep {
  std::string name;               // "configure", "make" ...: what the log and errors call it
  std::vector<std::string> argv;  // run in the recipe's directory
};

// The steps of a recipe's build with `jobs` parallel compiles (at least 1).
// Every step sets CC and CXX in its environment (through env), so configure
// scripts and CMake pick clang; make-based builds run under bear.
std::vector<BuildStep> buildSteps(const Recipe& recipe, const Toolchain& toolchain, unsigned jobs);

// Where the build leaves compile_commands.json, relative to the recipe's directory.
std::filesystem::path compileCommandsPath(const Recipe& recipe);

}  // namespace kiln::debian
