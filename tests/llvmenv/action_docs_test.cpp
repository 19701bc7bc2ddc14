// docs/actions.md is exactly what the pass table of this build's LLVM
// generates (llvmenv/action_docs.h), so the documented actions, flags and
// left-out passes cannot drift from the code.
#include <fstream>
#include <sstream>

#include "llvmenv/action_docs.h"
#include "tests/llvmenv/test_support.h"

namespace kiln::llvmenv {
namespace {

TEST(ActionDocsTest, DocsActionsMdMatchesThePassTable) {
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/docs/actions.md");
  ASSERT_TRUE(in) << "docs/actions.md is missing";
  std::stringstream file;
  file << in.rdbuf();
  const std::string generated = actionsMarkdown(*testing::passTable());
  EXPECT_TRUE(file.str() == generated)
      << "docs/actions.md is out of date: run `build/cli/kiln actions --markdown > "
         "docs/actions.md`";
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
  EXPECT_NE(text.find("`unify-loop-exits` (carries `lower-switch`)"), std::string::npos);
}

}  // namespace
}  // namespace kiln::llvmenv
