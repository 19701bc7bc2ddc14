// One compilation state of the pass-ordering environment: an LLVM module in
// its own LLVMContext, so that different states can be stepped on different
// threads at once (one state must not be used by two threads at a time).
// States are built by factories that verify their input; a pass that breaks
// the module or crashes LLVM leaves the state unusable (every later call
// returns compileError): fork with clone() before risky steps if needed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <kiln/status.h>
#include <kiln/value.h>
#include "compilers/llvm_engine/crash_guard.h"
#include "compilers/llvm_engine/module_policy.h"
#include "compilers/llvm_engine/module_shape.h"
#include "compilers/llvm_engine/pass_table.h"

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
}  // namespace llvm

namespace kiln::llvm_engine {

struct PassOutcome {
  std::string pass;  // registry name, or the pipeline text for applyPipeline()
  // Exact: true iff the canonical IR text (see ir_text.h) differs from before
  // the pass. PreservedAnalyses is not trusted for this (passes may report
  // "changed" conservatively, and the loop adaptors' canonicalization counts).
  bool changed = false;
};

// What a benchmark cache keeps: the bitcode plus the canonical text, so that
// materialize() needs neither verification nor printing.
struct SerializedModule {
  std::string name;
  std::string bitcode;
  std::string irText;  // the canonical text, or empty when it was never printed
};

// The exact identity of a state: BLAKE3-256 over its name and the bitcode
// its module was read from (see ModuleState::identity()).
using StateDigest = std::array<std::uint8_t, 32>;

class ModuleState {
 public:
  // Parses, verifies and applies checkClientModule (module_policy.h): these
  // are the doors of bytes from outside. Bad input (random bytes, truncated
  // bitcode, syntax errors, invalid IR, assembly that reads files, ...)
  // gives invalidArgument with LLVM's diagnostic text or the policy's reason.
  // `maxDataBytes`: the operator's --max-module-data-bytes.
  static Result<std::unique_ptr<ModuleState>> fromBitcode(
      std::shared_ptr<const PassTable> passes, std::string_view bytes, std::string name = "module",
      std::uint64_t maxDataBytes = kDefaultModuleDataBytes);
  static Result<std::unique_ptr<ModuleState>> fromIrText(
      std::shared_ptr<const PassTable> passes, std::string_view text, std::string name = "module",
      std::uint64_t maxDataBytes = kDefaultModuleDataBytes);
  // Rebuilds a state from serialize() output without re-verifying it; the
  // bitcode is read on the state's first use.
  static Result<std::unique_ptr<ModuleState>> materialize(std::shared_ptr<const PassTable> passes,
                                                          const SerializedModule& cached);

  ModuleState(const ModuleState&) = delete;
  ModuleState& operator=(const ModuleState&) = delete;
  ~ModuleState();

  // A deep copy in a new LLVMContext: the bitcode this state's module was
  // read from (use-list order preserved), so both behave identically under
  // every pass. The copy reads the bytes on its first use, not here.
  Result<std::unique_ptr<ModuleState>> clone() const;
  Result<SerializedModule> serialize() const;

  // Runs pass `index` of the table (one fresh pass manager, like one
  // `opt-19 -passes=<pipeline>` call), verifies the module, and moves it
  // through bitcode into a fresh context (see reload()) so that the state is
  // exactly what opt would read back from its output file. A pass that
  // claims no change and leaves the module's fingerprint (fingerprint.h) as
  // it was skips all of that (see applyPipeline in the .cpp): the common
  // no-effect step costs a pass run and one walk over the module.
  Result<PassOutcome> applyPass(std::size_t index);
  // Same for any PassBuilder pipeline text (baselines, tests, tools).
  Result<PassOutcome> applyPipeline(std::string_view pipeline);

  // What the state is, exactly: every step from it depends on the bytes its
  // module was read from and its name alone (reload() drops everything else),
  // so equal identities step identically. Computed on first use (BLAKE3:
  // ~5 us for 12 KB of bitcode, ~65 us for 150 KB) and kept until the IR
  // changes. nullopt while the module was parsed from text (not yet read
  // from bitcode) or the state is unusable.
  std::optional<StateDigest> identity() const;
  // Becomes the state `after` (a serialize() of a state with identity
  // `digest`) without running anything: how a transition cache replays a
  // step. The module is read from the bytes on first use, in a fresh
  // context, exactly as after reload().
  Status adopt(const SerializedModule& after, const StateDigest& digest);
  // What serialize() would copy, in bytes (0 for what is not held yet).
  struct SerializedSize {
    std::uint64_t bitcodeBytes = 0;
    std::uint64_t textBytes = 0;
  };
  SerializedSize serializedSize() const;

  // Reads the module's bytes now instead of on first use (a no-op once
  // read): compileError if LLVM cannot read them back.
  Status readModule() const { return load(); }

  bool usable() const { return broken_.empty(); }
  const std::string& name() const { return name_; }
  const PassTable& passes() const { return *passes_; }
  // Read-only access for observations written elsewhere (nullptr if broken
  // by a crash or unreadable). Mutating it would bypass the caches: don't.
  const llvm::Module* module() const {
    (void)load();
    return module_.get();
  }

  // Observations (all deterministic; only objectTextSizeBytes depends on the
  // host, see observations.h).
  Result<std::string> ir() const;      // canonical text, cached between passes
  Result<std::string> irSha1() const;  // hex SHA-1 of ir()
  Result<Bytes> bitcode() const;       // the bytes the current module was read from
  Result<std::int64_t> instructionCount() const;
  Result<Int64Tensor> instCount() const;  // shape [70]
  Result<ValueDict> instCountDict() const;
  Result<Int64Tensor> autophase() const;  // shape [56]
  Result<ValueDict> autophaseDict() const;
  Result<std::int64_t> objectTextSizeBytes() const;  // cached until the IR changes
  // The program graph's wire form (common/types/program_graph.h), cached until
  // the IR changes (a step with no effect keeps it; a fork shares it).
  Result<Bytes> programGraph() const;
  // The same bytes, shared with the state's cache rather than copied.
  Result<std::shared_ptr<const std::string>> sharedProgramGraph() const;
  // Whether the state holds its graph already (no walk to observe it).
  bool keepsProgramGraph() const { return graph_ != nullptr; }

 private:
  ModuleState(std::shared_ptr<const PassTable> passes, std::string name);
  static Result<std::unique_ptr<ModuleState>> parseBitcode(std::shared_ptr<const PassTable> passes,
                                                           std::string_view bytes, std::string name,
                                                           bool verify, std::uint64_t maxDataBytes);
  Status checkUsable() const;
  // Reads bitcode_ into module_ if this state was made without reading it.
  Status load() const;
  Status verifyParsed(std::string_view what);
  const std::string& cachedIr() const;
  const std::string& cachedBitcode() const;
  // Replaces module and context by those read from `bytes` (a bitcode
  // round trip of the module, or the bytes it was read from).
  Status reload(std::string bytes);
  // Marks the state unusable after a pass left an invalid module.
  Status markBroken(std::string why);
  // Leaks the LLVM objects after a crash inside them (destroying them could
  // crash again) and marks the state unusable.
  void poison(const Status& why);

  std::shared_ptr<const PassTable> passes_;
  std::string name_;
  DiagnosticCollector diagnostics_;  // before context_: the context points to it
  // Mutable for load(): a state is observably the same before and after.
  mutable std::unique_ptr<llvm::LLVMContext> context_;
  mutable std::unique_ptr<llvm::Module> module_;  // after context_: destroyed first
  std::unique_ptr<llvm::TargetMachine> tm_;
  bool tmBuilt_ = false;
  mutable std::string broken_;  // why the state is unusable; empty while usable
  mutable std::optional<std::string> ir_;
  // The bytes module_ was read from (input or the last reload), so clone(),
  // serialize() and bitcode() need no writer; computed lazily for text input.
  mutable std::optional<std::string> bitcode_;
  mutable std::optional<std::int64_t> textSize_;
  mutable std::shared_ptr<const std::string> graph_;
  // moduleFingerprint() of module_ (see applyPipeline), kept until the IR changes.
  std::optional<std::uint64_t> fingerprint_;
  // moduleShape() of module_, kept likewise: a step with no effect walks
  // the module once, for the fingerprint, not again for its shape.
  std::optional<ModuleShape> shape_;
  // identity(), kept until bitcode_ changes; meaningful only while module_
  // is (or will be) read from bitcode_, which is false for text input.
  mutable std::optional<StateDigest> digest_;
  bool readFromBitcode_ = true;
};

}  // namespace kiln::llvm_engine
