#include "compilers/llvm_engine/codegen.h"

#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/security/file_confinement.h"

#include "compilers/llvm_engine/crash_guard.h"
#include "compilers/llvm_engine/ir_text.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Instrumentation/AddressSanitizer.h"

namespace kiln::llvm_engine {

void initializeNativeTargetOnce() {
  // LLVM's target registry is process-wide; registering the native target
  // twice concurrently is a data race, so it happens exactly once.
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

namespace {

std::string effectiveTriple(const llvm::Module& module) {
  const std::string& triple = module.getTargetTriple();
  return triple.empty() ? llvm::sys::getDefaultTargetTriple() : triple;
}

// What clang -fsanitize=address does to a module after optimizing it: every
// defined function asks for instrumentation, then ASan's module pass runs.
void instrumentWithAsan(llvm::Module& module, llvm::TargetMachine& tm) {
  for (llvm::Function& function : module) {
    if (!function.isDeclaration()) function.addFnAttr(llvm::Attribute::SanitizeAddress);
  }
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&tm);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::ModulePassManager passes;
  passes.addPass(llvm::AddressSanitizerPass(llvm::AddressSanitizerOptions{}));
  passes.run(module, modules);
}

}  // namespace

std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const llvm::Module& module) {
  initializeNativeTargetOnce();
  const std::string triple = effectiveTriple(module);
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) return nullptr;
  llvm::TargetOptions options;
  options.UseInitArray = true;  // what opt/llc's codegen flags default to
  return std::unique_ptr<llvm::TargetMachine>(
      target->createTargetMachine(triple, /*CPU=*/"", /*Features=*/"", options, /*RM=*/std::nullopt,
                                  /*CM=*/std::nullopt, llvm::CodeGenOptLevel::Default));
}

namespace {

Result<std::string> emitObjectHere(const llvm::Module& module, bool addressSanitizer) {
  // Codegen rewrites the IR it compiles (CodeGenPrepare and friends), so it
  // works on a copy, in a context of its own: if the backend crashes, only
  // that context is poisoned (and leaked), never the caller's state.
  DiagnosticCollector diagnostics;  // outlives the context that points to it
  auto context = std::make_unique<llvm::LLVMContext>();
  diagnostics.install(*context);
  const std::string bitcode = writeBitcode(module);
  auto parsed = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(llvm::StringRef(bitcode), "kiln-codegen"), *context);
  if (!parsed) return internalError("codegen copy: " + llvm::toString(parsed.takeError()));
  std::unique_ptr<llvm::Module> copy = std::move(*parsed);
  std::unique_ptr<llvm::TargetMachine> tm = makeTargetMachine(*copy);
  if (tm == nullptr) {
    return unimplemented("no code generator for target triple '" + effectiveTriple(module) +
                         "' in this LLVM build");
  }
  if (copy->getTargetTriple().empty()) copy->setTargetTriple(tm->getTargetTriple().str());
  if (copy->getDataLayout().isDefault()) copy->setDataLayout(tm->createDataLayout());

  llvm::SmallVector<char, 0> object;
  bool cannotEmit = false;
  Status status = runGuarded("codegen", [&] {
    if (addressSanitizer) instrumentWithAsan(*copy, *tm);
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager pm;
    llvm::TargetLibraryInfoImpl tlii(llvm::Triple(copy->getTargetTriple()));
    pm.add(new llvm::TargetLibraryInfoWrapperPass(tlii));
    if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
      cannotEmit = true;
      return;
    }
    pm.run(*copy);
  });
  if (!status.ok()) {
    // The copy may be half rewritten by the failed backend: never touch it again.
    (void)copy.release();
    (void)tm.release();
    (void)context.release();
    return status;
  }
  if (cannotEmit) return unimplemented("the target cannot emit object files");
  if (diagnostics.hasErrors()) return compileError("codegen: " + diagnostics.takeErrors());
  return std::string(object.data(), object.size());
}

}  // namespace

Result<std::string> emitObject(const llvm::Module& module, bool addressSanitizer) {
  // The code generator assembles a client's inline asm: whatever a module
  // gets past module_policy.h, it runs on a thread of its own that may open
  // no file at all (Landlock confines a thread, and that thread ends here).
  KILN_ASSIGN_OR_RETURN(std::optional<FileConfinement> confinement,
                        FileConfinement::prepareIfSupported(ConfinementPaths{}));
  if (!confinement) return emitObjectHere(module, addressSanitizer);
  Result<std::string> object = internalError("the code generation thread did not run");
  std::thread confined([&] {
    if (!confinement->enter()) {
      object = internalError(std::string("cannot confine the code generation thread: ") +
                             std::strerror(errno));
      return;
    }
    object = emitObjectHere(module, addressSanitizer);
  });
  confined.join();
  return object;
}

Result<std::int64_t> objectTextSizeBytes(const llvm::Module& module) {
  KILN_ASSIGN_OR_RETURN(std::string object, emitObject(module, false));
  llvm::MemoryBufferRef buffer(llvm::StringRef(object.data(), object.size()), "kiln-object");
  auto file = llvm::object::ObjectFile::createObjectFile(buffer);
  if (!file) {
    return internalError("cannot read the object the backend emitted: " +
                         llvm::toString(file.takeError()));
  }
  return textSectionBytes(**file);
}

std::int64_t textSectionBytes(const llvm::object::ObjectFile& object) {
  std::int64_t textBytes = 0;
  for (const llvm::object::SectionRef& section : object.sections()) {
    auto name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name == ".text" || name->starts_with(".text.")) {
      textBytes += static_cast<std::int64_t>(section.getSize());
    }
  }
  return textBytes;
}

}  // namespace kiln::llvm_engine
