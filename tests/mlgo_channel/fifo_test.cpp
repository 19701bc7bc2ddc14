// What an empty read of a FIFO means (compilers/mlgo_channel/fifo.h hangUpOrData): the end only
// when the writer has come and gone with nothing left to read. A compiler
// that opens its end and writes right after kiln's read returned 0 must not
// look like one that closed before sending its header.
#include "compilers/mlgo_channel/fifo.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace kiln::mlgo_channel {
namespace {

struct FifoPair {
  FifoPair() {
    path = std::filesystem::temp_directory_path() /
           ("kiln-fifo-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    EXPECT_TRUE(makeFifo(path).ok());
    reader = openFifoForReading(path).value();
  }
  ~FifoPair() {
    if (writer >= 0) ::close(writer);
    std::filesystem::remove(path);
  }
  void openWriter() { writer = ::open(path.c_str(), O_WRONLY | O_NONBLOCK); }
  void closeWriter() {
    ::close(writer);
    writer = -1;
  }
  static inline int counter = 0;
  std::filesystem::path path;
  UniqueFd reader;
  int writer = -1;
};

TEST(FifoTest, NoWriterYetIsNotTheEnd) {
  FifoPair fifo;
  char byte;
  ASSERT_EQ(::read(fifo.reader.get(), &byte, 1), 0);  // reads as EOF all the same
  EXPECT_EQ(hangUpOrData(fifo.reader.get()), AfterEmptyRead::kNothing);
}

TEST(FifoTest, DataThatArrivedAfterTheEmptyReadIsData) {
  FifoPair fifo;
  char byte;
  ASSERT_EQ(::read(fifo.reader.get(), &byte, 1), 0);
  fifo.openWriter();
  ASSERT_GE(fifo.writer, 0);
  ASSERT_EQ(::write(fifo.writer, "{\"features\":[]}\n", 16), 16);
  EXPECT_EQ(hangUpOrData(fifo.reader.get()), AfterEmptyRead::kData);
  // Still data once the writer has closed, until it is read.
  fifo.closeWriter();
  EXPECT_EQ(hangUpOrData(fifo.reader.get()), AfterEmptyRead::kData);
}

TEST(FifoTest, AWriterThatLeftWithNothingIsTheEnd) {
  FifoPair fifo;
  fifo.openWriter();
  ASSERT_GE(fifo.writer, 0);
  fifo.closeWriter();
  EXPECT_EQ(hangUpOrData(fifo.reader.get()), AfterEmptyRead::kHangUp);
}

}  // namespace
}  // namespace kiln::mlgo_channel
