// Users' own files and command lines as benchmarks, with the real clang-19
// and llvm-link-19: one source, several linked, .ll and .c mixed, errors
// (clang's diagnostics trimmed, sizes, corrupt bitcode and bitcode that
// identifies itself as a newer LLVM's), and hostile command lines.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>
#include <regex>

#include <kiln/programs/make_benchmark.h>
#include "programs/make/llvm_tools.h"
#include "tests/programs/test_util.h"

namespace kiln::programs {
namespace {

using ::testing::HasSubstr;
using testing::readFile;
using ::testing::StartsWith;
using testing::TempDir;
using testing::writeFile;

// The module's text, by llvm-dis-19.
std::string disassemble(const std::string& bitcode, const std::filesystem::path& dir) {
  writeFile(dir / "dis.bc", bitcode);
  auto ran = runSubprocess({"llvm-dis-19", (dir / "dis.bc").string(), "-o", "-"},
                           std::chrono::seconds(60));
  EXPECT_TRUE(ran.ok() && ran->status.success());
  return ran.ok() ? ran->stdoutText : "";
}

constexpr const char* kSum =
    "int sum(int n) { int s = 0; for (int i = 0; i < n; ++i) s += i; return s; }\n";

TEST(MakeBenchmarkTest, OneSourceIsAVerifiedModuleWhoseUriFollowsItsContent) {
  TempDir dir;
  writeFile(dir.path() / "my prog.c", kSum);
  auto made = makeBenchmark({dir.path() / "my prog.c"});
  ASSERT_TRUE(made.ok()) << made.status().toString();
  EXPECT_TRUE(std::regex_match(made->uri, std::regex("benchmark://user-v0/my_prog-[0-9a-f]{16}")))
      << made->uri;
  EXPECT_TRUE(hasBitcodeMagic(made->bitcode));
  std::string text = disassemble(made->bitcode, dir.path());
  EXPECT_THAT(text, HasSubstr("define dso_local i32 @sum"));
  // No -O given: -O0's front end, but the functions stay optimizable.
  EXPECT_THAT(text, ::testing::Not(HasSubstr("optnone")));

  auto again = makeBenchmark({dir.path() / "my prog.c"});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->uri, made->uri);
  EXPECT_EQ(again->bitcode, made->bitcode);
  // Other flags, other bitcode, another URI: workers cache inline bytes by URI.
  MakeBenchmarkOptions o2;
  o2.copts = {"-O2"};
  auto optimized = makeBenchmark({dir.path() / "my prog.c"}, o2);
  ASSERT_TRUE(optimized.ok()) << optimized.status().toString();
  EXPECT_NE(optimized->uri, made->uri);
  EXPECT_THAT(disassemble(optimized->bitcode, dir.path()), HasSubstr("!tbaa"));
}

TEST(MakeBenchmarkTest, SeveralFilesOfAnyKindAreLinkedIntoOneModule) {
  TempDir dir;
  writeFile(dir.path() / "main.c",
            "int sum(int);\nint twice(int);\nint main(void) { return twice(sum(4)); }\n");
  writeFile(dir.path() / "sum.cpp", std::string("extern \"C\" ") + kSum);
  writeFile(dir.path() / "twice.ll",
            "define i32 @twice(i32 %x) {\n  %y = mul i32 %x, 2\n"
            "  ret i32 %y\n}\n");
  MakeBenchmarkOptions options;
  options.workingDirectory = dir.path();
  options.copts = {"-DUNUSED=1"};
  auto made = makeBenchmark({"main.c", "sum.cpp", "twice.ll"}, options);
  ASSERT_TRUE(made.ok()) << made.status().toString();
  EXPECT_THAT(made->uri, StartsWith("benchmark://user-v0/main-"));
  std::string text = disassemble(made->bitcode, dir.path());
  EXPECT_THAT(text, HasSubstr("define dso_local i32 @main"));
  EXPECT_THAT(text, HasSubstr("@sum("));
  EXPECT_THAT(text, HasSubstr("define i32 @twice"));

  // A .bc made earlier joins too.
  writeFile(dir.path() / "earlier.bc", made->bitcode);
  writeFile(dir.path() / "extra.c", "int extra(void) { return 7; }\n");
  // ... and alone it is the same benchmark, byte for byte.
  auto reloaded = makeBenchmark({dir.path() / "earlier.bc"});
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().toString();
  EXPECT_EQ(reloaded->bitcode, made->bitcode);
  EXPECT_EQ(reloaded->uri, userBenchmarkUri("earlier.bc", made->bitcode));
  auto joined = makeBenchmark({dir.path() / "earlier.bc", dir.path() / "extra.c"});
  ASSERT_TRUE(joined.ok()) << joined.status().toString();
  EXPECT_THAT(disassemble(joined->bitcode, dir.path()), HasSubstr("@extra"));

  // Two definitions of one symbol do not link.
  writeFile(dir.path() / "sum_again.c", kSum);
  writeFile(dir.path() / "sum_once.c", kSum);
  auto clash = makeBenchmark({dir.path() / "sum_again.c", dir.path() / "sum_once.c"});
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(clash.status().message(), HasSubstr("sum"));
}

TEST(MakeBenchmarkTest, ASourceThatDoesNotCompileGivesClangsFirstDiagnostics) {
  TempDir dir;
  std::string broken = "int f(void) { return undeclared_one; }\n";
  for (int i = 0; i < 200; ++i) broken += "int g" + std::to_string(i) + "(void) { return x; }\n";
  writeFile(dir.path() / "broken.c", broken);
  auto made = makeBenchmark({dir.path() / "broken.c"});
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), ErrorCode::kCompileError);
  EXPECT_THAT(made.status().message(), HasSubstr("undeclared_one"));
  EXPECT_THAT(made.status().message(), HasSubstr("diagnostics cut"));
  EXPECT_LT(made.status().message().size(), 3000u);
}

TEST(MakeBenchmarkTest, SizesFilesAndToolsAreChecked) {
  TempDir dir;
  writeFile(dir.path() / "p.c", kSum);
  MakeBenchmarkOptions tiny;
  tiny.maxBytes = 100;
  auto big = makeBenchmark({dir.path() / "p.c"}, tiny);
  EXPECT_EQ(big.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(big.status().message(), HasSubstr("over the limit of 100"));

  EXPECT_EQ(makeBenchmark({dir.path() / "missing.c"}).status().code(), ErrorCode::kNotFound);
  writeFile(dir.path() / "notes.txt", "hello");
  EXPECT_THAT(makeBenchmark({dir.path() / "notes.txt"}).status().message(),
              HasSubstr("C/C++ sources, .ll and .bc"));
  writeFile(dir.path() / "start.S", "nop\n");
  EXPECT_THAT(makeBenchmark({dir.path() / "start.S"}).status().message(), HasSubstr("assembler"));
  EXPECT_EQ(makeBenchmark({}).status().code(), ErrorCode::kInvalidArgument);

  MakeBenchmarkOptions noClang;
  noClang.clang = "no-such-clang-kiln-test";
  EXPECT_EQ(makeBenchmark({dir.path() / "p.c"}, noClang).status().code(), ErrorCode::kNotFound);
}

TEST(MakeBenchmarkTest, CorruptBitcodeIsRefusedWithLlvmsReason) {
  TempDir dir;
  writeFile(dir.path() / "corrupt.bc", std::string("BC\xC0\xDE", 4) + std::string(64, '\x55'));
  auto corrupt = makeBenchmark({dir.path() / "corrupt.bc"});
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(corrupt.status().message(), HasSubstr("corrupt.bc"));
  EXPECT_THAT(corrupt.status().message(), HasSubstr("error"));

  writeFile(dir.path() / "text.bc", "this is not bitcode at all");
  auto text = makeBenchmark({dir.path() / "text.bc"});
  EXPECT_EQ(text.status().code(), ErrorCode::kInvalidArgument);
}

// Bits as LLVM's bitstream writes them: little-endian, least significant first.
class BitWriter {
 public:
  void emit(std::uint64_t value, unsigned bits) {
    for (unsigned i = 0; i < bits; ++i, ++bit_) {
      if (bit_ % 8 == 0) bytes_.push_back('\0');
      if ((value >> i) & 1) bytes_.back() = static_cast<char>(bytes_.back() | (1 << (bit_ % 8)));
    }
  }
  void emitVbr(std::uint64_t value, unsigned bits) {
    std::uint64_t high = std::uint64_t{1} << (bits - 1);
    while (value >= high) {
      emit((value & (high - 1)) | high, bits);
      value >>= bits - 1;
    }
    emit(value, bits);
  }
  void align32() {
    while (bit_ % 32 != 0) emit(0, 1);
  }
  std::size_t bit() const { return bit_; }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
  std::size_t bit_ = 0;
};

// The identification block a future LLVM would write: its producer string
// and a bitcode epoch after LLVM 19's (0). Record codes and block id from
// LLVM's LLVMBitCodes.h: IDENTIFICATION_BLOCK_ID 13, STRING 1, EPOCH 2.
std::string identificationBlock(const std::string& producer, unsigned epoch) {
  BitWriter w;
  w.emit(1, 2);      // ENTER_SUBBLOCK, at the top level's abbreviation width 2
  w.emitVbr(13, 8);  // IDENTIFICATION_BLOCK_ID
  w.emitVbr(5, 4);   // the block's abbreviation width
  w.align32();
  std::size_t lengthAt = w.bit() / 8;
  w.emit(0, 32);  // the block's length in words, patched below
  w.emit(3, 5);   // UNABBREV_RECORD: code, operand count, operands
  w.emitVbr(1, 6);
  w.emitVbr(producer.size(), 6);
  for (char c : producer) w.emitVbr(static_cast<unsigned char>(c), 6);
  w.emit(3, 5);
  w.emitVbr(2, 6);
  w.emitVbr(1, 6);
  w.emitVbr(epoch, 6);
  w.emit(0, 5);  // END_BLOCK
  w.align32();
  std::uint32_t words = static_cast<std::uint32_t>((w.bytes().size() - lengthAt - 4) / 4);
  for (int i = 0; i < 4; ++i)
    w.bytes()[lengthAt + i] = static_cast<char>((words >> (8 * i)) & 0xff);
  return w.bytes();
}

// An identification block of exactly `bytes` bytes: the module block after
// it holds absolute bit offsets (to its symbol table), so a replacement must
// not move it. The producer is the longest prefix of `producer` (at least
// "LLVM") that fits, padded with '.' if even the whole is short.
std::string identificationBlockOfSize(const std::string& producer, unsigned epoch,
                                      std::size_t bytes) {
  std::vector<std::string> names;
  for (std::size_t length = producer.size(); length >= 4; --length) {
    names.push_back(producer.substr(0, length));
  }
  for (std::string padded = producer + "."; padded.size() < producer.size() + 64; padded += '.') {
    names.push_back(padded);
  }
  for (const std::string& name : names) {
    std::string block = identificationBlock(name, epoch);
    if (block.size() == bytes) return block;
  }
  ADD_FAILURE() << "no identification block of " << bytes << " bytes";
  return {};
}

TEST(MakeBenchmarkTest, BitcodeOfANewerLlvmIsRefusedNamingIt) {
  TempDir dir;
  writeFile(dir.path() / "p.c", kSum);
  auto made = makeBenchmark({dir.path() / "p.c"});
  ASSERT_TRUE(made.ok()) << made.status().toString();
  // LLVM 19's file: magic, then its identification block (its length in
  // 32-bit words at bytes 8..11), then the module. The module stays; the
  // identification block is replaced by one of the same size.
  const std::string& real = made->bitcode;
  ASSERT_EQ(real.substr(0, 4), std::string("BC\xC0\xDE", 4));
  std::uint32_t words = 0;
  for (int i = 0; i < 4; ++i) {
    words |= static_cast<std::uint32_t>(static_cast<unsigned char>(real[8 + i])) << (8 * i);
  }
  std::size_t moduleStart = 12 + 4 * std::size_t{words};
  ASSERT_LT(moduleStart, real.size());
  auto withIdentification = [&](const std::string& producer, unsigned epoch) {
    return real.substr(0, 4) + identificationBlockOfSize(producer, epoch, moduleStart - 4) +
           real.substr(moduleStart);
  };
  // The test's writer is right: LLVM 19's own producer and epoch read back.
  writeFile(dir.path() / "same.bc", withIdentification("LLVM19.1.7", 0));
  auto accepted = makeBenchmark({dir.path() / "same.bc"});
  EXPECT_TRUE(accepted.ok()) << accepted.status().toString();

  // A newer LLVM's bitcode epoch: LLVM 19 refuses to read it, and kiln says why.
  writeFile(dir.path() / "future.bc", withIdentification("LLVM99.0.0git", 1));
  auto refused = makeBenchmark({dir.path() / "future.bc"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("future.bc"));
  EXPECT_THAT(refused.status().message(), HasSubstr("epoch"));
  EXPECT_THAT(refused.status().message(), HasSubstr("producer 'LLVM99."));
  std::cout << "LLVM 19 on bitcode of epoch 1: " << refused.status().message() << "\n";
}

TEST(BenchmarkFromClangInvocationTest, AUsersCompileCommandIsABenchmark) {
  TempDir dir;
  writeFile(dir.path() / "inc/config.h", "#define LIMIT 10\n");
  writeFile(dir.path() / "prog.c",
            "#include \"config.h\"\nint f(void) { int s = 0; for (int i = 0; i < LIMIT; ++i) "
            "s += i; return s; }\n");
  auto made = benchmarkFromClangInvocation(
      {"clang", "-O2", "-Iinc", "-MD", "-c", "prog.c", "-o", "prog.o"}, dir.path());
  ASSERT_TRUE(made.ok()) << made.status().toString();
  EXPECT_THAT(made->uri, StartsWith("benchmark://user-v0/prog-"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "prog.o"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "prog.d"));

  // A gcc command line with GCC's own flags: clang-19 compiles without them.
  auto gcc = benchmarkFromClangInvocation(
      {"gcc", "-O2", "-fipa-pta", "-Iinc", "-fconserve-stack", "-c", "prog.c"}, dir.path());
  ASSERT_TRUE(gcc.ok()) << gcc.status().toString();
  EXPECT_EQ(gcc->bitcode, made->bitcode);

  auto broken = benchmarkFromClangInvocation({"clang", "-c", "prog.c"}, dir.path());
  EXPECT_EQ(broken.status().code(), ErrorCode::kCompileError);
  EXPECT_THAT(broken.status().message(), HasSubstr("config.h"));
}

TEST(BenchmarkFromClangInvocationTest, AHostileCommandLineRunsNothingElseAndWritesNothingElse) {
  TempDir dir;
  writeFile(dir.path() / "prog.c", kSum);
  auto marker = dir.path() / "ran";
  std::vector<std::vector<std::string>> hostile{
      {"sh", "-c", "touch " + marker.string()},
      {"clang", "-c", "prog.c", "-fplugin=" + (dir.path() / "evil.so").string()},
      {"clang", "-c", "prog.c", "-Xclang", "-load", "-Xclang", "evil.so"},
      {"clang", "-c", "prog.c", "@" + (dir.path() / "flags").string()},
      {"clang", "prog.c", "-o", marker.string()},
      {"clang", "-c", "prog.c", "other.c"},
      {"clang", "-c", "-"},
      {},
  };
  for (const auto& argv : hostile) {
    auto made = benchmarkFromClangInvocation(argv, dir.path());
    EXPECT_EQ(made.status().code(), ErrorCode::kInvalidArgument)
        << (argv.empty() ? "(empty)" : argv.back()) << ": " << made.status().toString();
  }
  // The command's -o is never the output: the benchmark is made, nothing written there.
  auto made =
      benchmarkFromClangInvocation({"clang", "-c", "prog.c", "-o", marker.string()}, dir.path());
  EXPECT_TRUE(made.ok()) << made.status().toString();
  EXPECT_FALSE(std::filesystem::exists(marker));
}

}  // namespace
}  // namespace kiln::programs
