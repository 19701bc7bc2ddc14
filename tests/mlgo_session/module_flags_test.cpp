// A module's .cmd mapped onto opt and llc: the allow-list (driver and cc1
// spellings), values checked, and everything else ignored, never passed on.
#include <gtest/gtest.h>

#include "compilers/mlgo_session/module_flags.h"

namespace kiln::mlgo_session {
namespace {

using Args = std::vector<std::string>;

TEST(ModuleFlagsTest, DriverFlagsOfKilnCorpusExtract) {
  ModuleToolFlags flags =
      mapModuleFlags({"clang", "-c", "-O2", "--target=x86_64-pc-linux-gnu", "-march=haswell",
                      "-fPIC", "-Iinclude", "-DNDEBUG", "a.c", "-o", "a.o"});
  EXPECT_EQ(flags.optLevel, "-O2");
  EXPECT_EQ(flags.triple, "x86_64-pc-linux-gnu");
  EXPECT_EQ(flags.cpu, "haswell");
  EXPECT_TRUE(flags.pic);
  EXPECT_EQ(flags.optTargetFlags(), (Args{"-mtriple=x86_64-pc-linux-gnu", "-mcpu=haswell"}));
  EXPECT_EQ(flags.llcFlags(), (Args{"-O2", "-mtriple=x86_64-pc-linux-gnu", "-mcpu=haswell",
                                    "-relocation-model=pic"}));
  EXPECT_EQ(flags.ignored, (Args{"clang", "-c", "-Iinclude", "-DNDEBUG", "a.c", "-o", "a.o"}));
}

TEST(ModuleFlagsTest, Cc1FlagsOfMlCompilerOptCorpora) {
  ModuleToolFlags flags = mapModuleFlags(
      {"-cc1", "-triple", "x86_64-unknown-linux-gnu", "-emit-obj", "-mrelocation-model", "pic",
       "-target-cpu", "x86-64", "-target-feature", "+sse4.2", "-target-feature", "-avx", "-Oz"});
  EXPECT_EQ(flags.optLevel, "-Oz");
  EXPECT_EQ(flags.triple, "x86_64-unknown-linux-gnu");
  EXPECT_EQ(flags.cpu, "x86-64");
  EXPECT_EQ(flags.features, (Args{"+sse4.2", "-avx"}));
  EXPECT_TRUE(flags.pic);
  // llc has no -Oz: clang runs codegen at -O2 for it.
  EXPECT_EQ(flags.llcFlags(), (Args{"-O2", "-mtriple=x86_64-unknown-linux-gnu", "-mcpu=x86-64",
                                    "-mattr=+sse4.2,-avx", "-relocation-model=pic"}));
  EXPECT_EQ(flags.ignored, (Args{"-cc1", "-emit-obj"}));
}

TEST(ModuleFlagsTest, TheLastLevelWinsAndSpellingsAreNormalized) {
  EXPECT_EQ(mapModuleFlags({"-O3", "-O0"}).optLevel, "-O0");
  EXPECT_EQ(mapModuleFlags({"-O"}).optLevel, "-O1");
  EXPECT_EQ(mapModuleFlags({"-Ofast"}).optLevel, "-O3");
  EXPECT_FALSE(mapModuleFlags({"-O7"}).optLevel.has_value());
  EXPECT_FALSE(mapModuleFlags({"-fPIC", "-fno-pic"}).pic);
  EXPECT_TRUE(mapModuleFlags({}).llcFlags().empty());
  EXPECT_TRUE(mapModuleFlags({}).optTargetFlags().empty());
}

TEST(ModuleFlagsTest, HostileArgumentsNeverReachATool) {
  const Args hostile = {"-load",
                        "/tmp/evil.so",
                        "-load-pass-plugin=/tmp/evil.so",
                        "-o",
                        "/etc/passwd",
                        "@/tmp/response",
                        "-fplugin=/tmp/p.so",
                        "--target=x86_64;rm",
                        "-triple",
                        "-load=/x.so",
                        "-target-cpu",
                        "../../x",
                        "-target-feature",
                        "+avx -load",
                        "-mcpu=$(id)",
                        "-march=native",
                        "-mrelocation-model",
                        "ropi",
                        "-triple"};
  ModuleToolFlags flags = mapModuleFlags(hostile);
  EXPECT_FALSE(flags.optLevel.has_value());
  EXPECT_FALSE(flags.triple.has_value());
  EXPECT_FALSE(flags.cpu.has_value());
  EXPECT_TRUE(flags.features.empty());
  EXPECT_FALSE(flags.pic);
  EXPECT_TRUE(flags.llcFlags().empty());
  EXPECT_TRUE(flags.optTargetFlags().empty());
  // Every argument is accounted for as ignored (a refused option's value
  // is looked at on its own).
  EXPECT_EQ(flags.ignored.size(), hostile.size());
}

TEST(ModuleFlagsTest, MarchNamesACpuOnlyOnX86) {
  EXPECT_EQ(mapModuleFlags({"-march=znver3"}).cpu, "znver3");
  ModuleToolFlags arm = mapModuleFlags({"--target=aarch64-linux-gnu", "-march=armv8-a"});
  EXPECT_FALSE(arm.cpu.has_value());
  EXPECT_EQ(arm.ignored, (Args{"-march=armv8-a"}));
  // An explicit CPU wins over -march.
  EXPECT_EQ(mapModuleFlags({"-march=haswell", "-mcpu=skylake"}).cpu, "skylake");
}

}  // namespace
}  // namespace kiln::mlgo_session
