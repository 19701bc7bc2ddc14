// A client's module is hostile input (issue 48): assembly that reads host
// files, metadata that makes a pass or the linker open files, and data that
// appears only once code is generated are refused where modules enter
// (ModuleState::fromIrText/fromBitcode, checkModule). Each hostile form is
// first shown dangerous by llc-19 itself (it prints a line of a canary file
// it should never have read), so the list is LLVM's behaviour, not ours.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/process/subprocess.h"
#include "common/security/file_confinement.h"
#include "compilers/llvm_engine/asm_policy.h"
#include "compilers/llvm_engine/codegen.h"
#include "compilers/llvm_engine/module_check.h"
#include "compilers/llvm_engine/module_policy.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "tests/llvm_engine/test_support.h"

namespace kiln::llvm_engine {
namespace {

using testing::passTable;

constexpr std::string_view kCanaryLine = "kiln_canary_7f3e line never to be read";

struct Scratch {
  Scratch() {
    char pattern[] = "/tmp/kiln-policy-XXXXXX";
    path = ::mkdtemp(pattern);
    std::ofstream(path / "canary.s") << kCanaryLine << "\n";
  }
  ~Scratch() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::filesystem::path path;
};

std::string moduleWithAsm(const std::string& asmText) {
  return "target triple = \"x86_64-unknown-linux-gnu\"\nmodule asm \"" + asmText +
         "\"\ndefine i32 @main() {\n  ret i32 0\n}\n";
}

std::string moduleWithInlineAsm(const std::string& asmText, const std::string& operands = "",
                                const std::string& constraints = "",
                                const std::string& globals = "") {
  return "target triple = \"x86_64-unknown-linux-gnu\"\n" + globals +
         "define i32 @main() {\n  call void asm sideeffect \"" + asmText + "\", \"" + constraints +
         "\"(" + operands + ")\n  ret i32 0\n}\n";
}

// What llc-19 (as the mlgo types run it) prints on the module.
std::string llcOutput(const Scratch& scratch, const std::string& ir) {
  std::ofstream(scratch.path / "m.ll") << ir;
  auto run = runSubprocess({"llc-19", "-filetype=obj", "-o", (scratch.path / "m.o").string(),
                            (scratch.path / "m.ll").string()},
                           std::chrono::seconds(60));
  return run.ok() ? run->stderrText + run->stdoutText : run.status().toString();
}

void expectRefusedEverywhere(const std::string& ir, const std::string& named) {
  auto state = ModuleState::fromIrText(passTable(), ir, "hostile.ll");
  ASSERT_FALSE(state.ok()) << ir;
  EXPECT_EQ(state.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(state.status().message().find(named), std::string::npos) << state.status().message();
  EXPECT_NE(state.status().message().find("kiln refuses it"), std::string::npos);
  Status checked = checkModule(ir, "hostile.ll");
  EXPECT_EQ(checked.code(), ErrorCode::kInvalidArgument) << ir;
  EXPECT_NE(checked.message().find(named), std::string::npos) << checked.message();
}

TEST(ModulePolicyTest, AssemblyThatReadsHostFilesIsRefusedInEveryDisguise) {
  Scratch scratch;
  const std::string file = (scratch.path / "canary.s").string();
  // Every form below makes llc-19 read the canary: shown first, then refused.
  const std::vector<std::pair<std::string, std::string>> moduleAsm = {
      {".include \\22" + file + "\\22", ".include"},
      {"  .INCLUDE\\09\\22" + file + "\\22", ".include"},
      {"nop; .include \\22" + file + "\\22", ".include"},
      {"/* x */.include \\22" + file + "\\22", ".include"},
      {"lbl: .include \\22" + file + "\\22", ".include"},
      {"\\22.include\\22 \\22" + file + "\\22", ".include"},
      {".macro m d\\0A.\\5Cd \\22" + file + "\\22\\0A.endm\\0Am include", ".macro"},
      {".irp d,include\\0A.\\5Cd \\22" + file + "\\22\\0A.endr", ".irp"},
  };
  for (const auto& [text, named] : moduleAsm) {
    SCOPED_TRACE(text);
    EXPECT_NE(llcOutput(scratch, moduleWithAsm(text)).find(kCanaryLine), std::string::npos)
        << "llc-19 no longer reads the file this way; the case shows nothing";
    expectRefusedEverywhere(moduleWithAsm(text), named);
  }
  const std::vector<std::pair<std::string, std::string>> inlineAsm = {
      {".include \\22" + file + "\\22", ".include"},
      {".inc$(lude$|x$) \\22" + file + "\\22", ".include"},
      {".${0:c} \\22" + file + "\\22", "completed by an inline asm operand"},
  };
  for (const auto& [text, named] : inlineAsm) {
    SCOPED_TRACE(text);
    const bool operand = text.find("${0") != std::string::npos;
    const std::string ir =
        operand ? moduleWithInlineAsm(text, "ptr @include", "s", "@include = global i32 0\n")
                : moduleWithInlineAsm(text);
    EXPECT_NE(llcOutput(scratch, ir).find(kCanaryLine), std::string::npos) << ir;
    expectRefusedEverywhere(ir, named);
  }
  // An operand that prints a symbol named like a directive.
  const std::string symbol = moduleWithInlineAsm("${0:c} \\22" + file + "\\22", "ptr @\".include\"",
                                                 "s", "@\".include\" = global i32 0\n");
  EXPECT_NE(llcOutput(scratch, symbol).find(kCanaryLine), std::string::npos);
  expectRefusedEverywhere(symbol, "reads as a directive");
  // .incbin: whether a file exists and its size, and as much memory as it holds.
  const std::string incbin = moduleWithAsm(".incbin \\22" + file + "\\22");
  EXPECT_NE(llcOutput(scratch, moduleWithAsm(".incbin \\22/nonexistent/kiln\\22")).find("incbin"),
            std::string::npos);
  expectRefusedEverywhere(incbin, ".incbin reads host files");
}

TEST(ModulePolicyTest, MetadataThatNamesFilesIsRefused) {
  Scratch scratch;
  const std::string gcov = R"(target triple = "x86_64-unknown-linux-gnu"
define i32 @main() !dbg !4 {
  ret i32 0, !dbg !7
}
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3}
!llvm.gcov = !{!8}
!0 = distinct !DICompileUnit(language: DW_LANG_C99, file: !1, producer: "x", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "a.c", directory: "/tmp")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = distinct !DISubprogram(name: "main", scope: !1, file: !1, line: 1, type: !5, scopeLine: 1, spFlags: DISPFlagDefinition, unit: !0)
!5 = !DISubroutineType(types: !6)
!6 = !{null}
!7 = !DILocation(line: 1, column: 1, scope: !4)
!8 = !{!"NOTES", !"DATA", !0}
)";
  std::string placed = gcov;
  const std::string notes = (scratch.path / "written-by-opt.gcno").string();
  placed.replace(placed.find("NOTES"), 5, notes);
  std::ofstream(scratch.path / "gcov.ll") << placed;
  // opt-19 itself writes where the module says.
  auto opt = runSubprocess({"opt-19", "-passes=insert-gcov-profiling", "-o", "/dev/null",
                            (scratch.path / "gcov.ll").string()},
                           std::chrono::seconds(60));
  ASSERT_TRUE(opt.ok());
  EXPECT_TRUE(std::filesystem::exists(notes)) << opt->stderrText;
  expectRefusedEverywhere(placed, "!llvm.gcov");
  const std::string base =
      "target triple = \"x86_64-unknown-linux-gnu\"\ndefine i32 @main() {\n  ret i32 0\n}\n";
  expectRefusedEverywhere(base + "!llvm.dependent-libraries = !{!0}\n!0 = !{!\"/etc/passwd\"}\n",
                          "!llvm.dependent-libraries");
  expectRefusedEverywhere(base + "!llvm.linker.options = !{!0}\n!0 = !{!\"/DEFAULTLIB:x\"}\n",
                          "!llvm.linker.options");
}

TEST(ModulePolicyTest, DataThatAppearsOnlyInTheObjectIsBounded) {
  const std::string triple = "target triple = \"x86_64-unknown-linux-gnu\"\n";
  const std::string main = "define i32 @main() {\n  ret i32 0\n}\n";
  for (const std::string& hostile : {
           triple + "@g = constant [300000000 x i8] zeroinitializer\n" + main,
           triple + "@g = global [300000000 x i8] zeroinitializer, section \".data\"\n" + main,
           triple + "define void @f() align 4294967296 {\n  ret void\n}\n" + main,
           triple +
               "define void @f() #0 {\n  ret void\n}\nattributes #0 = { "
               "\"patchable-function-entry\"=\"1000000000\" }\n" +
               main,
           moduleWithAsm(".zero 4000000000"),
           moduleWithAsm(".zero 1<<40"),
           moduleWithAsm(".zero 16/**/*1000000"),
           moduleWithAsm(".fill 2000000, 8, 0"),
           moduleWithAsm(".p2align 30"),
           moduleWithAsm(".balign 1073741824"),
           moduleWithAsm(". = . + 0x100000000"),
           moduleWithAsm(".rept 1000000\\0A.zero 1000\\0A.endr"),
           moduleWithInlineAsm(".zero $0", "i64 4000000000", "i"),
       }) {
    SCOPED_TRACE(hostile);
    auto state = ModuleState::fromIrText(passTable(), hostile, "big.ll");
    ASSERT_FALSE(state.ok());
    EXPECT_EQ(state.status().code(), ErrorCode::kInvalidArgument) << state.status().toString();
  }
  // 300 zero-initialized megabytes in .bss cost the object nothing.
  auto bss = ModuleState::fromIrText(
      passTable(), triple + "@g = global [300000000 x i8] zeroinitializer\n" + main, "bss.ll");
  EXPECT_TRUE(bss.ok()) << bss.status().toString();
  // 300 fills of 1 MiB each pass one by one, not together.
  std::string many;
  for (int i = 0; i < 300; ++i) many += ".zero 1048576\\0A";
  auto fills = ModuleState::fromIrText(passTable(), moduleWithAsm(many), "fills.ll");
  ASSERT_FALSE(fills.ok());
  EXPECT_NE(fills.status().message().find("over the limit"), std::string::npos);
}

TEST(ModulePolicyTest, OrdinaryAssemblyStillCompiles) {
  for (const std::string& ir : {
           moduleWithAsm(".symver main,main@VERS_1"),
           moduleWithAsm(".section .note.GNU-stack,\\22\\22,@progbits"),
           moduleWithAsm(".globl kiln_x\\0A.p2align 4, 0x90\\0Akiln_x: .zero 16\\0A.byte 1, 2"),
           moduleWithInlineAsm("rep; nop"),
           moduleWithInlineAsm("lock; bswap $0", "i32 1", "r"),
           moduleWithInlineAsm("${:private}loop${:uid}: jmp ${:private}loop${:uid}"),
           moduleWithInlineAsm("movl ${0:c}, %eax", "ptr @.str", "i",
                               "@.str = private constant [2 x i8] c\"x\\00\"\n"),
       }) {
    SCOPED_TRACE(ir);
    auto state = ModuleState::fromIrText(passTable(), ir, "fine.ll");
    ASSERT_TRUE(state.ok()) << state.status().toString();
    EXPECT_TRUE(checkModule(ir, "fine.ll").ok());
  }
  for (const std::string& program : testing::benchmarkNames()) {
    EXPECT_NE(testing::loadBenchmark(program), nullptr) << program;
  }
}

// llc-19's exit on the module, as the mlgo types run it.
ExitStatus llcExit(const Scratch& scratch, const std::string& ir) {
  std::ofstream(scratch.path / "m.ll") << ir;
  auto run = runSubprocess({"llc-19", "-filetype=obj", "-o", (scratch.path / "m.o").string(),
                            (scratch.path / "m.ll").string()},
                           std::chrono::seconds(120));
  return run.ok() ? run->status : ExitStatus{};
}

// Issue 48's attacker: a few hundred kilobytes of module asm whose
// expressions nest deeper than the assembler's stack took the worker process
// down (no crash guard survives a stack overflow), and the client's replay
// took down each restarted worker after it.
TEST(ModulePolicyTest, AssemblyExpressionsTooDeepForTheAssemblersStackAreRefused) {
  Scratch scratch;
  const std::string unary = ".long " + std::string(200000, '-') + "1";
  std::string sum = ".long 1";
  for (int i = 0; i < 300000; ++i) sum += "+1";
  const std::string parens = ".long " + std::string(200000, '(') + "1" + std::string(200000, ')');
  for (const std::string& text : {unary, sum, parens}) {
    SCOPED_TRACE(text.substr(0, 20));
    EXPECT_TRUE(llcExit(scratch, moduleWithAsm(text)).signaled())
        << "llc-19 no longer overflows its stack on this; the case shows nothing";
    expectRefusedEverywhere(moduleWithAsm(text), "operator characters");
  }
  // Symbols assigned through one another are evaluated down the chain, also
  // when each link is in an inline asm of its own (they share one symbol
  // table): the links are counted for the whole module.
  std::string chain = ".set a0, 1";
  for (int i = 1; i < 5000; ++i) {
    chain += "\\0A.weakref a" + std::to_string(i) + ", a" + std::to_string(i - 1);
  }
  expectRefusedEverywhere(moduleWithAsm(chain), "assigns symbols");
  std::string calls = "target triple = \"x86_64-unknown-linux-gnu\"\ndefine i32 @main() {\n";
  for (int i = 1; i < 5000; ++i) {
    calls += "  call void asm sideeffect \".weakref b" + std::to_string(i) + ", b" +
             std::to_string(i - 1) + "\", \"\"()\n";
  }
  calls += "  ret i32 0\n}\n";
  expectRefusedEverywhere(calls, "assigns symbols");
  // What real assembly writes stays allowed: data with signs, a few constants.
  for (std::string fine : {".long -1, -2, 3+4*(5-6)", ".set k, 4\\0A.equ j, k*2\\0A.long j"}) {
    auto state = ModuleState::fromIrText(passTable(), moduleWithAsm(fine), "fine.ll");
    EXPECT_TRUE(state.ok()) << state.status().toString();
  }
}

// Issue 48's attacker: a 300-byte module of one load, multiply and store of
// <1048576 x i64> held a worker's code generation for minutes at 1.9 GiB
// and growing; wide integers are the same in 64-bit parts, multiplied
// pairwise.
TEST(ModulePolicyTest, ValuesCodeGenerationSplitsWithoutBoundAreRefused) {
  const std::string triple = "target triple = \"x86_64-unknown-linux-gnu\"\n";
  auto arithmetic = [&](const std::string& type) {
    return triple + "define void @f(ptr %p, ptr %q) {\n  %v = load " + type +
           ", ptr %p\n  %w = mul " + type + " %v, %v\n  store " + type +
           " %w, ptr %q\n  ret void\n}\n";
  };
  for (const std::string& hostile : {
           arithmetic("<1048576 x i64>"),
           arithmetic("<65536 x i8>"),
           arithmetic("i16384"),
           triple + "define void @f(ptr %p, ptr %q) {\n  %v = load [100000 x i64], ptr %p\n"
                    "  store [100000 x i64] %v, ptr %q\n  ret void\n}\n",
           triple + "define <100000 x i8> @f(<100000 x i8> %v) {\n  ret <100000 x i8> %v\n}\n",
       }) {
    SCOPED_TRACE(hostile);
    expectRefusedEverywhere(hostile, "splits into more than");
  }
  // Each allowed on its own, but not 10,000 times over.
  std::string many = triple + "define void @f(ptr %p) {\n";
  for (int i = 0; i < 10000; ++i) {
    many += "  %v" + std::to_string(i) + " = load <512 x i8>, ptr %p\n";
  }
  many += "  ret void\n}\n";
  expectRefusedEverywhere(many, "pieces of work");
  // Ordinary vectors and integers are fine.
  for (std::string type : {"<64 x i8>", "<16 x i32>", "i128", "i1024"}) {
    auto state = ModuleState::fromIrText(passTable(), arithmetic(type), "fine.ll");
    EXPECT_TRUE(state.ok()) << type << ": " << state.status().toString();
  }
}

// Issue 48's attacker: 900 KB of bitcode (100,000 named structs, each
// holding the one before) that LLVM's reader and verifier take killed the
// worker: LLVM walks types recursively afterwards. Built in memory here, as
// the reader builds it.
TEST(ModulePolicyTest, TypesNestedDeeperThanLlvmsStackAreRefused) {
  llvm::LLVMContext context;
  llvm::Module module("deep", context);
  module.setTargetTriple("x86_64-unknown-linux-gnu");
  llvm::Type* type = llvm::Type::getInt8Ty(context);
  for (int i = 0; i < 100000; ++i) type = llvm::StructType::create({type}, "t");
  new llvm::GlobalVariable(module, type, false, llvm::GlobalValue::ExternalLinkage,
                           llvm::Constant::getNullValue(type), "g");
  Status checked = checkClientModule(module, "deep.bc");
  EXPECT_EQ(checked.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(checked.message().find("nest"), std::string::npos) << checked.toString();
  // Ordinary nesting passes.
  llvm::Module shallow("shallow", context);
  llvm::Type* few = llvm::Type::getInt8Ty(context);
  for (int i = 0; i < 10; ++i) few = llvm::ArrayType::get(llvm::StructType::create({few}), 2);
  new llvm::GlobalVariable(shallow, few, false, llvm::GlobalValue::ExternalLinkage,
                           llvm::Constant::getNullValue(few), "g");
  EXPECT_TRUE(checkClientModule(shallow, "shallow.bc").ok());
}

// Issue 48's attacker: 400 KB of IR text nesting array types 100,000 deep
// killed the worker inside LLVM's parser, before there was a module to check.
TEST(ModulePolicyTest, IrTextNestedDeeperThanTheParsersStackIsRefused) {
  Scratch scratch;
  const std::string main = "define i32 @main() {\n  ret i32 0\n}\n";
  std::string deep = "@g = global ";
  for (int i = 0; i < 100000; ++i) deep += "[1 x ";
  deep += "i8";
  deep += std::string(100000, ']') + " zeroinitializer\n" + main;
  std::ofstream(scratch.path / "deep.ll") << deep;
  auto assembled = runSubprocess({"llvm-as-19", "-o", (scratch.path / "deep.bc").string(),
                                  (scratch.path / "deep.ll").string()},
                                 std::chrono::seconds(60));
  ASSERT_TRUE(assembled.ok());
  EXPECT_TRUE(assembled->status.signaled())
      << "llvm-as-19 no longer overflows its stack on this; the case shows nothing";
  expectRefusedEverywhere(deep, "nests brackets");
  // Brackets in strings and comments do not count; ordinary nesting passes.
  const std::string quiet = "; " + std::string(1000, '[') + "\n@s = constant [1001 x i8] c\"" +
                            std::string(1000, '{') + "\\00\"\n" + main;
  auto state = ModuleState::fromIrText(passTable(), quiet, "quiet.ll");
  EXPECT_TRUE(state.ok()) << state.status().toString();
  EXPECT_TRUE(checkModule(quiet, "quiet.ll").ok());
}

// Issue 48's attacker: 300 KB of bitcode whose one initializer nests 50,000
// xor/add constant expressions (LLVM's reader and verifier take it) killed
// the worker when it was compiled or printed. Built in memory here, as the
// reader builds it.
TEST(ModulePolicyTest, ConstantsNestedDeeperThanLlvmsStackAreRefused) {
  auto deepInitializer = [](int levels) {
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>("deep", *context);
    llvm::Type* i64 = llvm::Type::getInt64Ty(*context);
    auto* target = new llvm::GlobalVariable(*module, i64, false, llvm::GlobalValue::ExternalLinkage,
                                            llvm::ConstantInt::get(i64, 0), "h");
    llvm::Constant* value = llvm::ConstantExpr::getPtrToInt(target, i64);
    for (int i = 0; i < levels; ++i) {
      // Alternating operations, so that nothing folds them together.
      llvm::Constant* one = llvm::ConstantInt::get(i64, 1 + i % 3);
      value =
          i % 2 ? llvm::ConstantExpr::getAdd(value, one) : llvm::ConstantExpr::getXor(value, one);
    }
    new llvm::GlobalVariable(*module, i64, false, llvm::GlobalValue::ExternalLinkage, value, "g");
    return std::make_pair(std::move(context), std::move(module));
  };
  auto deep = deepInitializer(50000);
  Status checked = checkClientModule(*deep.second, "deep.bc");
  EXPECT_EQ(checked.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(checked.message().find("constants nest"), std::string::npos) << checked.toString();
  auto shallow = deepInitializer(20);
  EXPECT_TRUE(checkClientModule(*shallow.second, "shallow.bc").ok());
}

// IR text parsed by LLVM alone, without kiln's checks.
std::unique_ptr<llvm::Module> parsedPastThePolicy(const std::string& ir,
                                                  llvm::LLVMContext& context) {
  llvm::SMDiagnostic diagnostic;
  return llvm::parseAssembly(llvm::MemoryBufferRef(ir, "module.ll"), diagnostic, context);
}

// Defence in depth: past the policy (the module is parsed directly here), the
// in-process code generator still cannot read a file the module names.
TEST(ModulePolicyTest, InProcessCodegenOpensNoFileEvenPastThePolicy) {
  if (FileConfinement::kernelAbi() == 0) GTEST_SKIP() << "this kernel has no Landlock";
  Scratch scratch;
  const std::string file = (scratch.path / "canary.s").string();
  for (const std::string& ir : {moduleWithAsm(".include \\22" + file + "\\22"),
                                moduleWithInlineAsm(".include \\22" + file + "\\22")}) {
    llvm::LLVMContext context;
    auto module = parsedPastThePolicy(ir, context);
    ASSERT_NE(module, nullptr);
    auto object = emitObject(*module, /*addressSanitizer=*/false);
    ASSERT_FALSE(object.ok()) << "the included file was assembled";
    EXPECT_EQ(object.status().message().find(kCanaryLine), std::string::npos)
        << object.status().toString();
  }
  // An ordinary module still compiles on the confined thread.
  const std::string plain = moduleWithAsm(".globl kiln_y\\0Akiln_y: .byte 1");
  llvm::LLVMContext context;
  auto module = parsedPastThePolicy(plain, context);
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(emitObject(*module, false).ok());
}

TEST(AsmPolicyTest, VerdictsOnText) {
  EXPECT_FALSE(checkAssembly("nop", AsmSource::kModule).refused);
  EXPECT_EQ(checkAssembly(".zero 16\n.zero 32", AsmSource::kModule).fillBytes, 48u);
  EXPECT_EQ(checkAssembly(".p2align 4", AsmSource::kModule).fillBytes, 16u);
  // In module asm `$` is text; in an inline template `$$` is one '$'.
  EXPECT_FALSE(checkAssembly("movl $$1, %eax", AsmSource::kInline).refused);
  EXPECT_FALSE(checkAssembly("jmp ${1:c}", AsmSource::kInline, 2).refused);
  struct Refused {
    const char* text;
    AsmSource source;
  };
  for (const Refused& refused : {
           Refused{".IncBin \"x\"", AsmSource::kModule},
           Refused{"$(.include$|nop$) \"x\"", AsmSource::kInline},
           Refused{"$(nop$|.include$) \"x\"", AsmSource::kInline},
           Refused{"$(a$(b$)$)", AsmSource::kInline},
           // Found by fuzz_module_content: LLVM's AsmPrinter stops on these.
           Refused{"jmp ${:pri)}", AsmSource::kInline},
           Refused{"jmp $\x92", AsmSource::kInline},
           Refused{"jmp ${0x}", AsmSource::kInline},
           Refused{".print \"x\"", AsmSource::kModule},
           Refused{".secure_log_unique x", AsmSource::kModule},
           Refused{".ds.l 10000000", AsmSource::kModule},
           Refused{".nops 100000000", AsmSource::kModule},
           Refused{".org 0x100000000", AsmSource::kModule},
       }) {
    EXPECT_TRUE(checkAssembly(refused.text, refused.source).refused) << refused.text;
  }
  EXPECT_TRUE(checkAssembly("jmp $2", AsmSource::kInline, 2).refused);
}

}  // namespace
}  // namespace kiln::llvm_engine
