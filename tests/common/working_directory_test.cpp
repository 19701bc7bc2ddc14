// Working directories: removed with their owner, and reclaimed by the next
// owner when a previous one died without cleaning up (SIGKILL).
#include "common/process/working_directory.h"

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

namespace kiln {
namespace {

std::size_t entries(const std::filesystem::path& directory) {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(directory)) {
    ++count;
  }
  return count;
}

class WorkingDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto base = WorkingDirectory::create({}, "kiln-wd-test");
    ASSERT_TRUE(base.ok()) << base.status().toString();
    base_.emplace(std::move(base).value());
  }
  std::filesystem::path base() const { return base_->path(); }
  std::optional<WorkingDirectory> base_;
};

TEST_F(WorkingDirectoryTest, RemovedWithItsOwnerContentsIncluded) {
  std::filesystem::path path;
  {
    auto directory = WorkingDirectory::create(base(), "worker");
    ASSERT_TRUE(directory.ok()) << directory.status().toString();
    path = directory->path();
    std::ofstream(path / "file") << "x";
    std::filesystem::create_directories(path / "session" / "deep");
    EXPECT_TRUE(std::filesystem::is_empty(path / "session" / "deep"));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(entries(base()), 0u);  // the owner file went too
}

TEST_F(WorkingDirectoryTest, StartsEmpty) {
  auto directory = WorkingDirectory::create(base(), "worker");
  ASSERT_TRUE(directory.ok());
  EXPECT_TRUE(std::filesystem::is_empty(directory->path()));
}

TEST_F(WorkingDirectoryTest, DirectoryOfAKilledOwnerIsReclaimedByTheNext) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto directory = WorkingDirectory::create(base(), "worker");
    if (!directory.ok()) ::_exit(1);
    std::ofstream(directory->path() / "left-behind") << "x";
    char byte = 1;
    if (::write(ready[1], &byte, 1) != 1) ::_exit(1);
    ::pause();  // until SIGKILL: no destructor runs
    ::_exit(0);
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  // While its owner lives, another owner leaves it alone.
  {
    auto live = WorkingDirectory::create(base(), "worker");
    ASSERT_TRUE(live.ok());
    EXPECT_EQ(entries(base()), 4u);  // two directories and their owner files
  }
  EXPECT_EQ(entries(base()), 2u);
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  auto next = WorkingDirectory::create(base(), "worker");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(entries(base()), 2u);  // the dead owner's directory and file are gone
  EXPECT_TRUE(std::filesystem::is_empty(next->path()));
}

TEST_F(WorkingDirectoryTest, OtherPrefixesAndForeignDirectoriesAreLeftAlone) {
  std::filesystem::create_directories(base() / "worker-foreign");  // no owner file
  std::ofstream(base() / "worker-foreign" / "data") << "x";
  auto other = WorkingDirectory::create(base(), "other");
  ASSERT_TRUE(other.ok());
  auto directory = WorkingDirectory::create(base(), "worker");
  ASSERT_TRUE(directory.ok());
  EXPECT_TRUE(std::filesystem::exists(base() / "worker-foreign" / "data"));
  EXPECT_TRUE(std::filesystem::exists(other->path()));
}

TEST_F(WorkingDirectoryTest, UnusableBaseIsAClearError) {
  std::ofstream(base() / "plain-file") << "x";
  auto directory = WorkingDirectory::create(base() / "plain-file", "worker");
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find("plain-file"), std::string::npos)
      << directory.status().toString();
}

}  // namespace
}  // namespace kiln
