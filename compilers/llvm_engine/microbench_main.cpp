// llvm_engine_microbench FILE.bc [ITERATIONS]: p50/p99 latency of the engine's
// operations on one benchmark, for `kiln bench llvm`. Not a test: it only
// measures and prints one line per operation.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/process/subprocess.h"
#include "common/security/file_confinement.h"
#include "compilers/llvm_engine/autophase.h"
#include "compilers/llvm_engine/codegen.h"
#include "compilers/llvm_engine/fingerprint.h"
#include "compilers/llvm_engine/inst_count.h"
#include "compilers/llvm_engine/ir_text.h"
#include "compilers/llvm_engine/module_policy.h"
#include "compilers/llvm_engine/module_state.h"
#include "compilers/llvm_engine/pass_runner.h"
#include "compilers/llvm_engine/pass_table.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"

namespace {

using kiln::llvm_engine::ModuleState;

struct Stats {
  double p50;
  double p99;
};

Stats percentiles(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) {
    const std::size_t i = static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1));
    return samples[i];
  };
  return {at(0.50), at(0.99)};
}

// Times `op` `n` times; `setup` runs before each call, untimed.
void bench(const char* name, int n, const std::function<void()>& setup,
           const std::function<bool()>& op) {
  std::vector<double> micros;
  micros.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (setup) setup();
    const auto start = std::chrono::steady_clock::now();
    if (!op()) {
      std::printf("%-24s FAILED\n", name);
      return;
    }
    const auto end = std::chrono::steady_clock::now();
    micros.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  const double min = *std::min_element(micros.begin(), micros.end());
  const Stats s = percentiles(std::move(micros));
  std::printf("%-24s p50 %10.1f us   p99 %10.1f us   min %8.1f us  (n=%d)\n", name, s.p50, s.p99,
              min, n);
}

std::string fail(const kiln::Status& status) { return status.toString(); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.bc [ITERATIONS]\n", argv[0]);
    return 2;
  }
  const int n = argc > 2 ? std::max(1, std::atoi(argv[2])) : 200;
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();

  auto table = kiln::llvm_engine::PassTable::fromRegistry();
  if (!table.ok()) {
    std::fprintf(stderr, "%s\n", fail(table.status()).c_str());
    return 1;
  }
  auto base = ModuleState::fromBitcode(*table, bytes, argv[1]);
  if (!base.ok()) {
    std::fprintf(stderr, "%s\n", fail(base.status()).c_str());
    return 1;
  }
  const ModuleState& state = **base;
  auto cached = state.serialize();
  const std::size_t globaldce = (*table)->find("globaldce").value_or(0);
  const std::size_t gvn = (*table)->find("gvn").value_or(0);
  std::printf("module %s: %lld instructions, %zu bytes of bitcode; %zu passes (table %s)\n",
              argv[1], static_cast<long long>(*state.instructionCount()), bytes.size(),
              (*table)->size(), (*table)->fingerprint().substr(0, 12).c_str());

  std::unique_ptr<ModuleState> scratch;
  auto freshCopy = [&] { scratch = state.clone().value(); };

  bench("parse+verify", n, nullptr, [&] { return ModuleState::fromBitcode(*table, bytes).ok(); });
  bench("clone", n, nullptr, [&] { return state.clone().ok(); });
  bench("materialize", n, nullptr, [&] { return ModuleState::materialize(*table, *cached).ok(); });
  // clone() and materialize() defer the bitcode read to the first use.
  bench("clone+first use", n, nullptr,
        [&] { return state.clone().value()->instructionCount().ok(); });
  bench("applyPass(globaldce)", n, freshCopy, [&] { return scratch->applyPass(globaldce).ok(); });
  bench("applyPass(gvn)", n, freshCopy, [&] { return scratch->applyPass(gvn).ok(); });
  // The steady state of an episode: the same pass again, now with no effect.
  auto appliedOnce = [&](std::size_t pass) {
    return [&, pass] {
      freshCopy();
      (void)scratch->applyPass(pass);
    };
  };
  bench("applyPass(globaldce) x2", n, appliedOnce(globaldce),
        [&] { return scratch->applyPass(globaldce).ok(); });
  bench("applyPass(gvn) x2", n, appliedOnce(gvn), [&] { return scratch->applyPass(gvn).ok(); });
  // The parts of a step, to see where its time goes.
  bench("step: run globaldce", n, freshCopy, [&] {
    return kiln::llvm_engine::runPipeline(*const_cast<llvm::Module*>(scratch->module()), nullptr,
                                          "globaldce")
        .ok();
  });
  bench("step: run gvn", n, freshCopy, [&] {
    return kiln::llvm_engine::runPipeline(*const_cast<llvm::Module*>(scratch->module()), nullptr,
                                          scratch->passes().at(gvn).pipeline)
        .ok();
  });
  bench("step: fingerprint", n, nullptr,
        [&] { return kiln::llvm_engine::moduleFingerprint(*state.module()) != 0; });
  bench("step: verify", n, nullptr, [&] { return !llvm::verifyModule(*state.module()); });
  bench("step: writeBitcode", n, nullptr,
        [&] { return !kiln::llvm_engine::writeBitcode(*state.module()).empty(); });
  // The transition cache's costs (compilers/llvm_session/transition_cache.h): a state's
  // identity, and what a hit does instead of running a step.
  bench("identity (BLAKE3)", n, freshCopy, [&] { return scratch->identity().has_value(); });
  const kiln::llvm_engine::StateDigest digest = state.identity().value();
  bench("hit: adopt", n, freshCopy, [&] { return scratch->adopt(*cached, digest).ok(); });
  bench("hit: adopt+first use", n, freshCopy,
        [&] { return scratch->adopt(*cached, digest).ok() && scratch->instructionCount().ok(); });
  bench("printIr", n, nullptr,
        [&] { return !kiln::llvm_engine::canonicalIrText(*state.module()).empty(); });
  bench("instCount", n, nullptr,
        [&] { return !kiln::llvm_engine::computeInstCount(*state.module()).empty(); });
  bench("autophase", n, nullptr,
        [&] { return !kiln::llvm_engine::computeAutophase(*state.module()).empty(); });
  bench("objectTextSize", std::max(1, n / 4), nullptr,
        [&] { return kiln::llvm_engine::objectTextSizeBytes(*state.module()).ok(); });
  // What confining codegen adds to it (codegen.h): a ruleset, a thread, entering it.
  bench("confined thread (no work)", n, nullptr, [&] {
    auto confinement = kiln::FileConfinement::prepareIfSupported(kiln::ConfinementPaths{});
    if (!confinement.ok() || !*confinement) return false;
    bool entered = false;
    std::thread thread([&] { entered = (*confinement)->enter(); });
    thread.join();
    return entered;
  });
  // What confining a compiler child adds (compilers/mlgo_session/run_tool.cpp): its
  // ruleset, and llc-19 on this module with and without it.
  // The compiler reads the module from its own directory, as sessions do.
  const std::filesystem::path tmp =
      std::filesystem::temp_directory_path() / ("kiln-microbench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(tmp);
  const std::string input = (tmp / "input.bc").string();
  std::ofstream(input, std::ios::binary) << bytes;
  bench("compiler ruleset", n, nullptr,
        [&] { return kiln::FileConfinement::prepare(kiln::compilerPaths(tmp, "llc-19")).ok(); });
  auto llc = [&](bool confined) {
    auto confinement = kiln::FileConfinement::prepare(kiln::compilerPaths(tmp, "llc-19"));
    kiln::SubprocessOptions options;
    if (confined && confinement.ok()) options.confinement = &*confinement;
    auto ran = kiln::runSubprocess({"llc-19", "-filetype=obj", "-o", "/dev/null", input},
                                   std::chrono::seconds(120), options);
    return ran.ok() && ran->status.success();
  };
  bench("llc-19 child", std::max(1, n / 8), nullptr, [&] { return llc(false); });
  bench("llc-19 child (confined)", std::max(1, n / 8), nullptr, [&] { return llc(true); });
  std::filesystem::remove_all(tmp);
  // What the module policy adds to parse+verify (module_policy.h).
  bench("client module check", n, nullptr,
        [&] { return kiln::llvm_engine::checkClientModule(*state.module(), "bench").ok(); });
  return 0;
}
