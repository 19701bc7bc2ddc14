// Session directories carry their creator's pid, so that a nesting host can
// remove what a child process that died left in the shared working
// directory, and nothing of anyone else's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include <kiln/clock.h>
#include <kiln/kit/service_context.h>
#include "common/process/working_directory.h"

namespace kiln {
namespace {

TEST(SessionDirectoryTest, NamedAfterTheCreatingProcess) {
  auto base = WorkingDirectory::create({}, "kiln-session-dir-test").value();
  BenchmarkCache cache;
  SteadyClock clock;
  ContextResources resources{base.path(), cache, makeNullLogger("test"), clock};
  ServiceContext context(resources);
  auto made = context.makeSessionDirectory("mlgo-inline");
  ASSERT_TRUE(made.ok()) << made.status().toString();
  const std::string name = made->filename().string();
  EXPECT_EQ(name.rfind("mlgo-inline-" + std::to_string(::getpid()) + "-", 0), 0u) << name;
  std::ofstream(*made / "pipe") << "x";
  EXPECT_EQ(removeSessionDirectoriesOf(base.path(), ::getpid()), 1u);
  EXPECT_FALSE(std::filesystem::exists(*made));
}

TEST(SessionDirectoryTest, OnlyTheDeadProcesssDirectoriesAreRemoved) {
  auto base = WorkingDirectory::create({}, "kiln-session-dir-test").value();
  const std::vector<std::string> theirs{"mlgo-inline-123-a1B2c3", "x-y-123-zzzzzz"};
  const std::vector<std::string> others{"mlgo-inline-1234-a1B2c3", "mlgo-inline-23-a1B2c3",
                                        "mlgo-123-toolongsuffix", "123-abcdef", "notes-123"};
  for (const auto& name : theirs) std::filesystem::create_directory(base.path() / name);
  for (const auto& name : others) std::filesystem::create_directory(base.path() / name);
  EXPECT_EQ(removeSessionDirectoriesOf(base.path(), 123), theirs.size());
  for (const auto& name : theirs) EXPECT_FALSE(std::filesystem::exists(base.path() / name)) << name;
  for (const auto& name : others) EXPECT_TRUE(std::filesystem::exists(base.path() / name)) << name;
  EXPECT_EQ(removeSessionDirectoriesOf(base.path() / "missing", 123), 0u);
}

}  // namespace
}  // namespace kiln
