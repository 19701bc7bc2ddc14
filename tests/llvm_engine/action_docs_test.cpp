// docs/actions.md is exactly what the pass table of this build's LLVM
// generates (compilers/llvm_engine/action_docs.h), so the documented actions, flags and
// left-out passes cannot drift from the code.
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "compilers/llvm_engine/action_docs.h"
#include "tests/llvm_engine/test_support.h"

namespace kiln::llvm_engine {
namespace {

TEST(ActionDocsTest, DocsActionsMdMatchesThePassTable) {
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/docs/actions.md");
  ASSERT_TRUE(in) << "docs/actions.md is missing";
  std::stringstream file;
  file << in.rdbuf();
  const std::string generated = actionsMarkdown(*testing::passTable());
  if (file.str() != generated) {
    // What it should be, beside the test, for a reviewer to diff.
    std::ofstream("actions.md.generated") << generated;
    ADD_FAILURE() << "docs/actions.md is out of date (the generated text is in "
                     "actions.md.generated in the test's directory): run "
                     "`build/bin/kiln actions --markdown > docs/actions.md`";
  }
}

TEST(ActionDocsTest, NamesEveryActionFlagAndLeftOutPass) {
  const std::string text = actionsMarkdown(*testing::passTable());
  for (const PassInfo& pass : testing::passTable()->passes()) {
    EXPECT_NE(text.find("`" + pass.pipeline + "`"), std::string::npos) << pass.name;
  }
  for (const DroppedPass& dropped : testing::passTable()->dropped()) {
    EXPECT_NE(text.find("| `" + dropped.name + "` | " + dropped.reason), std::string::npos)
        << dropped.name;
  }
  EXPECT_NE(text.find("| `-loop-unswitch` | removed in LLVM 15"), std::string::npos);
  for (const PassInfo& pass : testing::passTable()->passes()) {
    if (pass.note.empty()) continue;
    EXPECT_NE(text.find("| `" + pass.name + "` | `" + pass.pipeline + "` | " + pass.note),
              std::string::npos)
        << pass.name;
  }
  // Both spaces, each with its size; the pipelines listed with what they run.
  for (std::size_t space = 0; space < kActionSpaces.size(); ++space) {
    EXPECT_NE(text.find(fmt::format("| {} | `{}` | {} |", space, kActionSpaces[space].name,
                                    testing::passTable()->spaceSize(space))),
              std::string::npos);
  }
  const std::size_t oz = *testing::passTable()->find("scc-oz-module-inliner");
  EXPECT_NE(text.find(fmt::format("| {} | `scc-oz-module-inliner` | `-scc-oz-module-inliner` | "
                                  "`scc-oz-module-inliner` | `inline`, ",
                                  oz)),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::llvm_engine
