#include "compilers/llvm_engine/module_state.h"

#include <utility>

#include "common/base/sanitizers.h"
#include "compilers/llvm_engine/autophase.h"
#include "compilers/llvm_engine/codegen.h"
#include "compilers/llvm_engine/fingerprint.h"
#include "compilers/llvm_engine/inst_count.h"
#include "compilers/llvm_engine/ir_text.h"
#include "compilers/llvm_engine/module_policy.h"
#include "compilers/llvm_engine/name_counters.h"
#include "compilers/llvm_engine/observations.h"
#include "compilers/llvm_engine/pass_runner.h"
#include "compilers/llvm_engine/program_graph.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace kiln::llvm_engine {
namespace {

// The first terminator that a pass handling only branches (and switches,
// once lowered) cannot take, described; nullopt when there is none.
std::optional<std::string> unsupportedTerminator(const llvm::Module& module) {
  for (const llvm::Function& function : module) {
    for (const llvm::BasicBlock& block : function) {
      const llvm::Instruction* terminator = block.getTerminator();
      if (terminator == nullptr) continue;
      if (llvm::isa<llvm::InvokeInst, llvm::IndirectBrInst, llvm::CallBrInst>(terminator)) {
        return std::string(terminator->getOpcodeName()) + " in function '" +
               function.getName().str() + "'";
      }
    }
  }
  return std::nullopt;
}

}  // namespace

ModuleState::ModuleState(std::shared_ptr<const PassTable> passes, std::string name)
    : passes_(std::move(passes)),
      name_(std::move(name)),
      context_(std::make_unique<llvm::LLVMContext>()) {
  diagnostics_.install(*context_);
}

ModuleState::~ModuleState() = default;

void ModuleState::poison(const Status& why) {
  // A caught crash may have left these half-changed: never touched again,
  // not even by their destructors.
  declareLeakedOnPurpose(module_.release());
  declareLeakedOnPurpose(context_.release());
  declareLeakedOnPurpose(tm_.release());
  ir_.reset();
  textSize_.reset();
  graph_.reset();
  bitcode_.reset();
  fingerprint_.reset();
  shape_.reset();
  digest_.reset();
  broken_ = why.message();
}

Status ModuleState::checkUsable() const {
  if (usable()) return okStatus();
  return compileError("module '" + name_ + "' is unusable after an earlier failure (" + broken_ +
                      "); start again from a clone or the benchmark");
}

Status ModuleState::verifyParsed(std::string_view what) {
  if (diagnostics_.hasErrors()) {
    return invalidArgument(std::string(what) + ": " + diagnostics_.takeErrors());
  }
  std::string report;
  llvm::raw_string_ostream os(report);
  if (llvm::verifyModule(*module_, &os)) {
    os.flush();
    return invalidArgument(std::string(what) + " is not a valid LLVM module: " + report);
  }
  return okStatus();
}

Result<std::unique_ptr<ModuleState>> ModuleState::parseBitcode(
    std::shared_ptr<const PassTable> passes, std::string_view bytes, std::string name, bool verify,
    std::uint64_t maxDataBytes) {
  if (passes == nullptr) return invalidArgument("a ModuleState needs a pass table");
  if (bytes.empty()) return invalidArgument("empty bitcode for module '" + name + "'");
  std::unique_ptr<ModuleState> state(new ModuleState(std::move(passes), std::move(name)));
  std::string parseError;
  Status guard = runGuarded("reading bitcode", [&] {
    auto buffer = llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(bytes.data(), bytes.size()),
                                                   state->name_, /*RequiresNullTerminator=*/false);
    auto parsed = llvm::parseBitcodeFile(buffer->getMemBufferRef(), *state->context_);
    if (parsed) {
      state->module_ = std::move(*parsed);
      state->bitcode_ = std::string(bytes);
    } else {
      parseError = llvm::toString(parsed.takeError());
    }
  });
  if (!guard.ok()) {
    state->poison(guard);
    return invalidArgument("module '" + state->name_ + "': " + guard.message());
  }
  if (!parseError.empty()) {
    return invalidArgument("module '" + state->name_ +
                           "' is not valid LLVM bitcode: " + parseError);
  }
  if (verify) {
    KILN_RETURN_IF_ERROR(state->verifyParsed("bitcode of '" + state->name_ + "'"));
    // Bytes that came from outside: nothing in them may reach beyond the
    // compile (module_policy.h).
    KILN_RETURN_IF_ERROR(checkClientModule(*state->module_, state->name_, maxDataBytes));
  }
  return state;
}

Result<std::unique_ptr<ModuleState>> ModuleState::fromBitcode(
    std::shared_ptr<const PassTable> passes, std::string_view bytes, std::string name,
    std::uint64_t maxDataBytes) {
  return parseBitcode(std::move(passes), bytes, std::move(name), /*verify=*/true, maxDataBytes);
}

Result<std::unique_ptr<ModuleState>> ModuleState::fromIrText(
    std::shared_ptr<const PassTable> passes, std::string_view text, std::string name,
    std::uint64_t maxDataBytes) {
  if (passes == nullptr) return invalidArgument("a ModuleState needs a pass table");
  KILN_RETURN_IF_ERROR(checkIrTextNesting(text, name));
  std::unique_ptr<ModuleState> state(new ModuleState(std::move(passes), std::move(name)));
  std::string parseError;
  Status guard = runGuarded("parsing IR text", [&] {
    // A copy: the lexer needs a NUL-terminated buffer.
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(text.data(), text.size()),
                                                       state->name_);
    llvm::SMDiagnostic diagnostic;
    state->module_ = llvm::parseAssembly(buffer->getMemBufferRef(), diagnostic, *state->context_);
    if (state->module_ == nullptr) {
      llvm::raw_string_ostream os(parseError);
      diagnostic.print(/*ProgName=*/nullptr, os, /*ShowColors=*/false);
    }
  });
  if (!guard.ok()) {
    state->poison(guard);
    return invalidArgument("module '" + state->name_ + "': " + guard.message());
  }
  if (state->module_ == nullptr) {
    return invalidArgument("module '" + state->name_ + "' is not valid LLVM IR: " + parseError);
  }
  state->readFromBitcode_ = false;  // until the first change reloads it from bitcode
  KILN_RETURN_IF_ERROR(state->verifyParsed("IR of '" + state->name_ + "'"));
  KILN_RETURN_IF_ERROR(checkClientModule(*state->module_, state->name_, maxDataBytes));
  return state;
}

Result<std::unique_ptr<ModuleState>> ModuleState::materialize(
    std::shared_ptr<const PassTable> passes, const SerializedModule& cached) {
  if (passes == nullptr) return invalidArgument("a ModuleState needs a pass table");
  if (cached.bitcode.empty())
    return invalidArgument("empty bitcode for module '" + cached.name + "'");
  std::unique_ptr<ModuleState> state(new ModuleState(std::move(passes), cached.name));
  state->bitcode_ = cached.bitcode;
  if (!cached.irText.empty()) state->ir_ = cached.irText;
  return state;
}

Result<std::unique_ptr<ModuleState>> ModuleState::clone() const {
  KILN_RETURN_IF_ERROR(checkUsable());
  std::unique_ptr<ModuleState> copy(new ModuleState(passes_, name_));
  copy->bitcode_ = cachedBitcode();
  copy->ir_ = ir_;
  copy->textSize_ = textSize_;
  copy->graph_ = graph_;
  copy->digest_ = readFromBitcode_ ? digest_ : std::nullopt;  // the copy reads the bytes
  return copy;
}

Status ModuleState::load() const {
  KILN_RETURN_IF_ERROR(checkUsable());
  if (module_ != nullptr) return okStatus();
  // A state made by clone() or materialize() holds only the bytes until its
  // first use: forks and cached starts cost a copy, and a fork that is never
  // stepped never pays for a parse.
  std::string parseError;
  Status guard = runGuarded("reading bitcode", [&] {
    auto parsed =
        llvm::parseBitcodeFile(llvm::MemoryBufferRef(llvm::StringRef(*bitcode_), name_), *context_);
    if (parsed) {
      module_ = std::move(*parsed);
    } else {
      parseError = llvm::toString(parsed.takeError());
    }
  });
  if (guard.ok() && parseError.empty()) return okStatus();
  // The bytes are the benchmark's (verified when first read) or what this
  // state's passes produced, so a failure here is the pass sequence's: LLVM
  // wrote a module it cannot read back (or crashes reading). It ends the
  // episode like any other compile error.
  broken_ = guard.ok() ? "its bitcode does not read back: " + parseError : guard.message();
  return compileError("module '" + name_ + "': " + broken_);
}

Result<SerializedModule> ModuleState::serialize() const {
  KILN_RETURN_IF_ERROR(bitcode_ ? checkUsable() : load());
  // The text only if it was printed already: printing costs more than most
  // steps, and a state made from this prints it when it is asked for.
  return SerializedModule{name_, cachedBitcode(), ir_.value_or(std::string())};
}

const std::string& ModuleState::cachedBitcode() const {
  if (!bitcode_) bitcode_ = writeBitcode(*module_);
  return *bitcode_;
}

const std::string& ModuleState::cachedIr() const {
  if (!ir_) ir_ = canonicalIrText(*module_);
  return *ir_;
}

Result<PassOutcome> ModuleState::applyPass(std::size_t index) {
  if (index >= passes_->size()) {
    return invalidArgument("pass index " + std::to_string(index) + " is out of range [0, " +
                           std::to_string(passes_->size()) + ")");
  }
  const PassInfo& pass = passes_->at(index);
  if (pass.needsBranchTerminators) {
    KILN_RETURN_IF_ERROR(load());
    if (auto found = unsupportedTerminator(*module_)) {
      return invalidArgument(pass.name + " cannot run on '" + name_ + "': it handles only br and " +
                             "switch terminators in LLVM 19, and the module has an " + *found +
                             " (the state is unchanged)");
    }
  }
  KILN_ASSIGN_OR_RETURN(PassOutcome outcome, applyPipeline(pass.pipeline));
  outcome.pass = pass.name;
  return outcome;
}

Result<PassOutcome> ModuleState::applyPipeline(std::string_view pipeline) {
  KILN_RETURN_IF_ERROR(load());
  // Before the pass: the bytes the module was read from and its hash (both
  // cached between steps), and its shape (one walk). Not its text: printing
  // costs more than the pass for most cheap passes, and a change of shape
  // shows most changes without it (see below).
  const std::string& beforeBitcode = cachedBitcode();  // unchanged until reload()
  if (!shape_) shape_ = moduleShape(*module_);
  if (!fingerprint_) fingerprint_ = moduleFingerprint(*module_);
  const std::uint64_t beforeFingerprint = *fingerprint_;
  if (!tmBuilt_) {
    tm_ = makeTargetMachine(*module_);
    tmBuilt_ = true;
  }
  Status runStatus;
  bool allPreserved = false;
  const std::string label = "pass '" + std::string(pipeline) + "' on '" + name_ + "'";
  std::uint64_t afterFingerprint = 0;
  Status guard = runGuarded(label, [&] {
    runStatus = runPipeline(*module_, tm_.get(), pipeline, &allPreserved);
    // Walks what the pass left, so it runs guarded too.
    if (runStatus.ok() && allPreserved) afterFingerprint = moduleFingerprint(*module_);
  });
  if (!guard.ok()) {
    poison(guard);
    return guard;
  }
  if (!runStatus.ok()) return runStatus;  // the pipeline did not parse: nothing ran
  if (diagnostics_.hasErrors()) {
    return markBroken(label + " reported: " + diagnostics_.takeErrors());
  }

  // Fast path, for a pass that claims it changed nothing (PreservedAnalyses
  // all) and whose module fingerprint (fingerprint.h) is unchanged. The
  // claim alone is not enough: LLVM only promises that analyses stay valid,
  // and some passes change what analyses ignore (instnamer renames values
  // and returns all()), which is why the fingerprint covers names,
  // attributes, metadata and flags beyond what LLVM's own check of the
  // claim (-verify-analysis-invalidation, a StructuralHash) covers. When
  // both hold, the module is the one that was verified and read from
  // bitcode_, so verification, the bitcode round trip and the printing are
  // skipped and every cached observation stays valid: the common no-effect
  // step costs one pass run and one walk over the module (~25 us on a
  // 650-instruction module, against ~150 us to write its bitcode, ~120 us
  // to verify it and ~500 us to print it).
  // The fingerprint covers use-list order, but not the symbol tables'
  // suffix counters (name_counters.h): those are set back to what a module
  // read from bitcode_ has.
  if (allPreserved && afterFingerprint == beforeFingerprint) {
    resetNameCounters(*module_);
    return PassOutcome{std::string(pipeline), false};
  }
  fingerprint_.reset();
  const ModuleShape beforeShape = *std::exchange(shape_, std::nullopt);

  // Verified before anything reads the module again: LLVM's writer and
  // printer may crash on a broken one. The verifier and the writer walk what
  // the pass left, and a buggy pass can leave dangling pointers that crash
  // them (seen in the soak): both run guarded like the pass itself.
  std::string report;
  std::string afterBitcode;
  bool invalid = false;
  Status checked = runGuarded(label + " (checking its result)", [&] {
    llvm::raw_string_ostream os(report);
    invalid = llvm::verifyModule(*module_, &os);
    os.flush();
    if (!invalid) afterBitcode = writeBitcode(*module_);
  });
  if (!checked.ok()) {
    poison(checked);
    return checked;
  }
  if (invalid) return markBroken(label + " produced an invalid module: " + report);
  if (afterBitcode == beforeBitcode) {
    // Same IR, but the pass claimed a change: it may have advanced hidden
    // counters (see reload()), so start again from the bytes. The text and
    // the other cached observations are still those of these bytes.
    std::optional<StateDigest> digest = readFromBitcode_ ? digest_ : std::nullopt;
    KILN_RETURN_IF_ERROR(reload(std::move(afterBitcode)));
    digest_ = digest;
    return PassOutcome{std::string(pipeline), false};
  }
  // Different bytes do not prove different text (use-list order, attributes
  // the reader resets on intrinsics). A different shape does: every
  // function, block and instruction is in the text. Only a module of the
  // same shape has its canonical text compared with the one before (read
  // again from the bytes before when it was not kept): rare, since nearly
  // every pass that changes the text adds or removes something.
  std::optional<std::string> beforeIr = std::move(ir_);
  std::string beforeBytes;
  const bool sameShape = moduleShape(*module_) == beforeShape;
  if (sameShape && !beforeIr) beforeBytes = beforeBitcode;  // reload() replaces them
  ir_.reset();
  textSize_.reset();
  graph_.reset();
  KILN_RETURN_IF_ERROR(reload(std::move(afterBitcode)));
  if (!sameShape) return PassOutcome{std::string(pipeline), true};
  if (!beforeIr) {
    KILN_ASSIGN_OR_RETURN(
        auto before, parseBitcode(passes_, beforeBytes, name_, false, kDefaultModuleDataBytes));
    beforeIr = before->cachedIr();
  }
  return PassOutcome{std::string(pipeline), cachedIr() != *beforeIr};
}

Status ModuleState::markBroken(std::string why) {
  ir_.reset();
  textSize_.reset();
  graph_.reset();
  bitcode_.reset();
  fingerprint_.reset();
  shape_.reset();
  digest_.reset();
  Status error = compileError(std::move(why));
  broken_ = error.message();
  return error;
}

Status ModuleState::reload(std::string bytes) {
  // Passes leave state behind that the IR text does not show: symbol tables
  // keep counting suffixes of deleted names (".lcssa3" instead of ".lcssa1"),
  // the bitcode reader resets intrinsic declarations to their canonical
  // attributes (a pass may have added "mustprogress"), and the context keeps
  // every constant and type ever created. A bitcode round trip into a fresh
  // context drops all of it, so the state is exactly what `opt-19` would read
  // back from its output file, and the result of a step depends on the
  // canonical IR alone (a state is fully described by its IR text).
  auto context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module;
  std::string parseError;
  Status guard = runGuarded("reading back '" + name_ + "'", [&] {
    auto parsed =
        llvm::parseBitcodeFile(llvm::MemoryBufferRef(llvm::StringRef(bytes), name_), *context);
    if (parsed) {
      module = std::move(*parsed);
    } else {
      parseError = llvm::toString(parsed.takeError());
    }
  });
  if (!guard.ok()) {
    declareLeakedOnPurpose(context.release());  // touched by the crash: never reused
    poison(guard);
    return guard;
  }
  if (module == nullptr) {
    return markBroken("bitcode round trip of '" + name_ + "' failed: " + parseError);
  }
  module_.reset();
  context_ = std::move(context);
  module_ = std::move(module);
  diagnostics_.install(*context_);
  bitcode_ = std::move(bytes);  // the module was read from exactly these bytes
  readFromBitcode_ = true;
  digest_.reset();
  return okStatus();
}

std::optional<StateDigest> ModuleState::identity() const {
  if (!usable() || !readFromBitcode_ || !bitcode_) return std::nullopt;
  if (!digest_) {
    // The name is the module's identifier when it is read: part of the state.
    llvm::BLAKE3 hasher;
    const std::uint64_t nameSize = name_.size();
    hasher.update(llvm::ArrayRef<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(&nameSize),
                                               sizeof(nameSize)));
    hasher.update(llvm::StringRef(name_));
    hasher.update(llvm::StringRef(*bitcode_));
    digest_ = hasher.final();
  }
  return digest_;
}

Status ModuleState::adopt(const SerializedModule& after, const StateDigest& digest) {
  KILN_RETURN_IF_ERROR(checkUsable());
  if (after.bitcode.empty()) {
    return invalidArgument("cannot adopt an empty module for '" + name_ + "'");
  }
  if (after.name != name_) {
    return invalidArgument("module '" + name_ + "' cannot become a state of '" + after.name + "'");
  }
  module_.reset();
  context_ = std::make_unique<llvm::LLVMContext>();
  diagnostics_.install(*context_);
  bitcode_ = after.bitcode;
  if (after.irText.empty()) {
    ir_.reset();
  } else {
    ir_ = after.irText;
  }
  textSize_.reset();
  graph_.reset();
  fingerprint_.reset();
  shape_.reset();
  digest_ = digest;
  readFromBitcode_ = true;
  return okStatus();
}

ModuleState::SerializedSize ModuleState::serializedSize() const {
  return {bitcode_ ? bitcode_->size() : 0, ir_ ? ir_->size() : 0};
}

Result<std::string> ModuleState::ir() const {
  KILN_RETURN_IF_ERROR(ir_ ? checkUsable() : load());
  return cachedIr();
}

Result<std::string> ModuleState::irSha1() const {
  KILN_RETURN_IF_ERROR(ir_ ? checkUsable() : load());
  return sha1Hex(cachedIr());
}

Result<Bytes> ModuleState::bitcode() const {
  KILN_RETURN_IF_ERROR(checkUsable());
  return Bytes{cachedBitcode()};
}

Result<std::int64_t> ModuleState::instructionCount() const {
  KILN_RETURN_IF_ERROR(load());
  return countInstructions(*module_);
}

Result<Int64Tensor> ModuleState::instCount() const {
  KILN_RETURN_IF_ERROR(load());
  return toTensor(computeInstCount(*module_));
}

Result<ValueDict> ModuleState::instCountDict() const {
  KILN_RETURN_IF_ERROR(load());
  return toDict(instCountFeatureNames(), computeInstCount(*module_));
}

Result<Int64Tensor> ModuleState::autophase() const {
  KILN_RETURN_IF_ERROR(load());
  return toTensor(computeAutophase(*module_));
}

Result<ValueDict> ModuleState::autophaseDict() const {
  KILN_RETURN_IF_ERROR(load());
  return toDict(autophaseFeatureNames(), computeAutophase(*module_));
}

Result<std::shared_ptr<const std::string>> ModuleState::sharedProgramGraph() const {
  KILN_RETURN_IF_ERROR(checkUsable());
  if (graph_ == nullptr) {
    KILN_RETURN_IF_ERROR(load());
    KILN_ASSIGN_OR_RETURN(ProgramGraph graph, buildProgramGraph(*module_));
    graph_ = std::make_shared<const std::string>(encodeProgramGraph(graph));
  }
  return graph_;
}

Result<Bytes> ModuleState::programGraph() const {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const std::string> graph, sharedProgramGraph());
  return Bytes{*graph};
}

Result<std::int64_t> ModuleState::objectTextSizeBytes() const {
  KILN_RETURN_IF_ERROR(checkUsable());
  if (!textSize_) {
    KILN_RETURN_IF_ERROR(load());
    KILN_ASSIGN_OR_RETURN(std::int64_t size, llvm_engine::objectTextSizeBytes(*module_));
    textSize_ = size;
  }
  return *textSize_;
}

}  // namespace kiln::llvm_engine
