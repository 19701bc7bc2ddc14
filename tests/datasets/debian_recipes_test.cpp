// The recipe table of `kiln datasets install` and the commands a recipe
// becomes: every dataset names known projects, and each build system's steps
// record clang's compiles where compileCommandsPath says.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "programs/datasets/debian/recipes.h"

namespace kiln::debian {
namespace {

bool contains(const std::vector<std::string>& argv, const std::string& word) {
  return std::find(argv.begin(), argv.end(), word) != argv.end();
}

TEST(RecipesTest, TableIsConsistent) {
  std::set<std::string> projects;
  for (const Recipe& recipe : allRecipes()) {
    EXPECT_TRUE(projects.insert(recipe.project).second) << "two recipes for " << recipe.project;
    EXPECT_FALSE(recipe.sourcePackage.empty()) << recipe.project;
    EXPECT_FALSE(recipe.description.empty()) << recipe.project;
    EXPECT_EQ(recipe.directory.find(".."), std::string::npos) << recipe.project;
    // A corpus folder: one path component a benchmark URI can hold.
    EXPECT_EQ(recipe.project.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_"),
              std::string::npos)
        << recipe.project;
  }
  for (const DatasetSpec& dataset : allDatasets()) {
    EXPECT_FALSE(dataset.projects.empty()) << dataset.name;
    std::set<std::string> seen;
    for (const std::string& project : dataset.projects) {
      EXPECT_NE(findRecipe(project), nullptr) << dataset.name << " names " << project;
      EXPECT_TRUE(seen.insert(project).second) << dataset.name << " names " << project << " twice";
    }
  }
  const DatasetSpec* v0 = findDataset("debian-v0");
  ASSERT_NE(v0, nullptr);
  EXPECT_GE(v0->projects.size(), 10u);
  ASSERT_NE(findDataset("debian-mini"), nullptr);
  EXPECT_EQ(findDataset("debian-v9"), nullptr);
  EXPECT_EQ(findRecipe("no-such-project"), nullptr);
}

TEST(RecipesTest, PlainMakeRunsUnderBearWithClangOnTheCommandLine) {
  Recipe recipe{"bzip2", "bzip2", "", BuildSystem::kMake, {}, {"all"}, true, "x"};
  Toolchain toolchain;
  auto steps = buildSteps(recipe, toolchain, 3);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].argv, (std::vector<std::string>{"env", "CC=clang-19", "CXX=clang++-19", "bear",
                                                     "--output", "compile_commands.json", "--",
                                                     "make", "-j3", "CC=clang-19", "all"}));
  EXPECT_EQ(compileCommandsPath(recipe), "compile_commands.json");
}

TEST(RecipesTest, ConfigureThenMake) {
  Recipe recipe{"xz", "xz-utils", "", BuildSystem::kConfigureMake, {"--disable-doc"},
                {},   true,       "x"};
  Toolchain toolchain;
  toolchain.cc = "/opt/clang";
  auto steps = buildSteps(recipe, toolchain, 0);  // 0 jobs still builds, with one
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].name, "configure");
  EXPECT_EQ(steps[0].argv, (std::vector<std::string>{"env", "CC=/opt/clang", "CXX=clang++-19",
                                                     "./configure", "--disable-doc"}));
  EXPECT_TRUE(contains(steps[1].argv, "bear"));
  EXPECT_TRUE(contains(steps[1].argv, "-j1"));
  // configure chose the compiler; make is not told again (only env sets it).
  EXPECT_EQ(std::count(steps[1].argv.begin(), steps[1].argv.end(), "CC=/opt/clang"), 1);
}

TEST(RecipesTest, CMakeExportsCompileCommandsInItsBuildDirectory) {
  Recipe recipe{"expat", "expat", "expat", BuildSystem::kCMake, {"-DEXPAT_BUILD_TESTS=OFF"},
                {},      true,    "x"};
  auto steps = buildSteps(recipe, Toolchain{}, 2);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_TRUE(contains(steps[0].argv, "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"));
  EXPECT_TRUE(contains(steps[0].argv, "-DCMAKE_C_COMPILER=clang-19"));
  EXPECT_EQ(steps[0].argv.back(), "-DEXPAT_BUILD_TESTS=OFF");  // the recipe's own come last
  EXPECT_FALSE(contains(steps[1].argv, "bear"));
  EXPECT_TRUE(contains(steps[1].argv, "-j2"));
  EXPECT_EQ(compileCommandsPath(recipe), std::filesystem::path("kiln-build/compile_commands.json"));
}

}  // namespace
}  // namespace kiln::debian
