// Benchmark URIs from clients (programs/datasets/benchmark_uri.h) and the resolution
// paths that take them without a network or a compiler: the embedded
// kiln-bench-v0 suite, a small on-disk corpus, generator seeds, dataset
// listings and file:// checks. Properties checked: an accepted URI is its own
// canonical text, names a valid dataset, and cannot step out of a corpus
// root; an accepted seed prints back to the same digits; every failure is one
// of the codes the registry documents.
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "programs/datasets/benchmark_uri.h"
#include "programs/datasets/file_source.h"
#include "programs/datasets/generators.h"
#include "programs/datasets/registry.h"

namespace {

namespace ds = kiln::datasets;

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_benchmark_uri: property violated: %s\n", what);
    std::abort();
  }
}

// A registry with one small corpus, file:// URIs off (the fuzzer must not read
// the machine's files) and no generator runs (only their seeds are parsed).
struct Fixture {
  Fixture() {
    root = std::filesystem::temp_directory_path() / ("kiln-fuzz-uri-" + std::to_string(::getpid()));
    std::filesystem::create_directories(root / "sub");
    // libFuzzer leaves with exit(), not through the fixture's destructor.
    static const std::filesystem::path removeAtExit = root;
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(removeAtExit, ignored);
    });
    std::ofstream(root / "sub" / "mod.ll") << "define i32 @f() {\n  ret i32 0\n}\n";
    std::ofstream(root / "tiny.bc") << std::string("BC\xc0\xde", 4) << std::string(12, '\0');
    ds::DatasetConfig config;
    config.fileAccess = {};  // no directory: file:// refused
    config.maxBenchmarkBytes = 1 << 20;
    config.corpora.push_back({"corpus-v0", root});
    auto created = ds::DatasetRegistry::create(config);
    require(created.ok(), "the fuzz corpus does not scan");
    registry = std::make_unique<ds::DatasetRegistry>(std::move(created).value());
  }
  ~Fixture() {
    std::error_code ignored;
    std::filesystem::remove_all(root, ignored);
  }
  std::filesystem::path root;
  std::unique_ptr<ds::DatasetRegistry> registry;
};

bool documentedFailure(kiln::ErrorCode code) {
  return code == kiln::ErrorCode::kInvalidArgument || code == kiln::ErrorCode::kNotFound ||
         code == kiln::ErrorCode::kPermissionDenied;
}

void checkAccepted(std::string_view text, const ds::BenchmarkUri& uri) {
  require(uri.toString() == text, "an accepted URI is not its own canonical text");
  auto again = ds::parseBenchmarkUri(uri.toString());
  require(again.ok() && *again == uri, "the canonical text does not parse to the same URI");
  if (uri.scheme == "file") {
    require(uri.dataset.empty() && uri.name.starts_with("/"), "a file URI is not absolute");
    return;
  }
  require(ds::isValidDatasetName(uri.dataset), "an accepted URI names an invalid dataset");
  // Corpora map the name onto root/name: it must stay below the root.
  std::filesystem::path inside = std::filesystem::path(uri.name).lexically_normal();
  require(!inside.is_absolute() && !inside.empty() && *inside.begin() != "..",
          "an accepted benchmark name escapes its corpus root");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Fixture* fixture = new Fixture();
  std::string_view text(reinterpret_cast<const char*>(data), size);

  auto uri = ds::parseBenchmarkUri(text);
  if (uri.ok()) {
    checkAccepted(text, *uri);
  } else {
    require(uri.status().code() == kiln::ErrorCode::kInvalidArgument,
            "a rejected URI is not invalid-argument");
    require(uri.status().message().size() < 1024, "an error message grows with the input");
  }

  if (uri.ok() && uri->scheme == "generator") {
    // Resolving would run csmith or llvm-stress; the seed is the outside input.
    auto seed = ds::parseSeed(uri->name);
    if (seed.ok()) require(std::to_string(*seed) == uri->name, "a seed is not canonical");
  } else {
    auto resolved = fixture->registry->resolve(text);
    if (resolved.ok()) {
      require(uri.ok(), "an unparsable URI resolved");
      require(resolved->uri == uri->toString(), "a resolved URI is not canonical");
    } else {
      require(documentedFailure(resolved.status().code()), "resolve failed with an odd code");
    }
  }
  if (uri.ok() && uri->scheme == "file") (void)ds::formatFromExtension(uri->name);

  auto listed = fixture->registry->benchmarkUris(text, 4);
  if (listed.ok()) {
    for (const std::string& member : *listed) {
      require(fixture->registry->resolve(member).ok(), "a listed benchmark does not resolve");
    }
  }
  (void)ds::isValidDatasetName(text);
  auto seed = ds::parseSeed(text);
  if (seed.ok()) require(std::to_string(*seed) == text, "a seed is not canonical");
  return 0;
}
