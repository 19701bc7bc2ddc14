// kiln sessions against real opt-19: random pass sequences stepped through a
// cluster end with the IR (same SHA-1 of the canonical text, same instruction
// count) that one `opt-19 -passes=<pipeline>` call per pass produces from the
// same bitcode, and the O3/Oz baselines equal opt's default<O3>/<Oz>.
#include <random>

#include "compilers/llvm_engine/ir_text.h"
#include "compilers/llvm_engine/module_state.h"
#include "tests/llvm_session/support.h"

namespace kiln::llvm_session {
namespace {

using namespace testing;
namespace fs = std::filesystem;

std::string opt() { return KILN_OPT19; }

// opt -S text without the two lines that name the input (see compilers/llvm_engine/ir_text.h).
std::string canonicalText(const fs::path& ll) {
  std::istringstream in(readFile(ll));
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.starts_with("; ModuleID = ") || line.starts_with("source_filename = ")) continue;
    out += line + "\n";
  }
  return out;
}

std::int64_t countOf(const fs::path& ll) {
  static const auto table = llvm_engine::PassTable::fromRegistry().value();
  auto state = llvm_engine::ModuleState::fromIrText(table, readFile(ll), ll.string());
  EXPECT_TRUE(state.ok()) << state.status().toString();
  return state.ok() ? *(*state)->instructionCount() : -1;
}

// The exact pipeline of every action, from the action space's metadata.
std::vector<std::string> pipelinesOf(const Space& space) {
  std::vector<std::string> pipelines;
  const Value* list = findInDict(space.metadata, "pipelines");
  if (list == nullptr || !list->is<ValueList>()) {
    ADD_FAILURE() << "the action space has no pipelines in its metadata";
    return pipelines;
  }
  for (const Value& pipeline : list->as<ValueList>())
    pipelines.push_back(pipeline.as<std::string>());
  EXPECT_EQ(pipelines.size(), space.names.size());
  return pipelines;
}

class OptMatchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cluster_ = new Cluster(startCluster()); }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  static Cluster* cluster_;
};
Cluster* OptMatchTest::cluster_ = nullptr;

TEST_F(OptMatchTest, RandomSequencesEndWhereOneOptCallPerPassEnds) {
  ScratchDir dir("sequences");
  const std::vector<std::string> programs = {"crc32", "quicksort", "dijkstra", "json_tokenizer"};
  for (std::size_t p = 0; p < programs.size(); ++p) {
    for (unsigned seed = 1; seed <= 2; ++seed) {
      auto session = cluster_->client->startSession(llvmOptions(benchUri(programs[p])));
      ASSERT_TRUE(session.ok()) << session.status().toString();
      auto& s = **session;
      const std::vector<std::string> pipelines = pipelinesOf(s.spaces().actionSpaces[0]);
      std::mt19937 rng(seed * 100 + static_cast<unsigned>(p));
      fs::path current = benchPath(programs[p]);
      std::string trace;
      for (int step = 0; step < 10; ++step) {
        const std::size_t action = rng() % pipelines.size();
        trace += pipelines[action] + " ";
        auto r = s.step({Value(static_cast<std::int64_t>(action))}, std::vector<std::string>{});
        ASSERT_TRUE(r.ok()) << trace << r.status().toString();
        const fs::path next =
            dir.path() / (programs[p] + std::to_string(seed) + "-" + std::to_string(step) + ".bc");
        ASSERT_TRUE(run(opt() + " -preserve-bc-uselistorder -passes='" + pipelines[action] + "' " +
                        current.string() + " -o " + next.string()))
            << pipelines[action];
        current = next;
      }
      const fs::path ll = dir.path() / (programs[p] + std::to_string(seed) + ".ll");
      ASSERT_TRUE(run(opt() + " -S " + current.string() + " -o " + ll.string()));
      auto final = s.step({}, std::vector<std::string>{"IrSha1", "IrInstructionCount"});
      ASSERT_TRUE(final.ok());
      EXPECT_EQ(final->observations[0].as<std::string>(), llvm_engine::sha1Hex(canonicalText(ll)))
          << programs[p] << " seed " << seed << ": " << trace;
      EXPECT_EQ(final->observations[1].as<std::int64_t>(), countOf(ll)) << trace;
    }
  }
}

TEST_F(OptMatchTest, BaselinesEqualOptDefaultPipelines) {
  ScratchDir dir("baselines");
  for (const std::string program : {"heapsort", "lz77", "matmul"}) {
    auto session = cluster_->client->startSession(llvmOptions(benchUri(program)));
    ASSERT_TRUE(session.ok()) << session.status().toString();
    auto r = (*session)->step(
        {}, std::vector<std::string>{"IrInstructionCountO3", "IrInstructionCountOz"});
    ASSERT_TRUE(r.ok()) << r.status().toString();
    for (auto [level, index] : {std::pair<std::string, int>{"O3", 0}, {"Oz", 1}}) {
      const fs::path bc = dir.path() / (program + level + ".bc");
      const fs::path ll = dir.path() / (program + level + ".ll");
      ASSERT_TRUE(run(opt() + " -passes='default<" + level + ">' " + benchPath(program).string() +
                      " -o " + bc.string()));
      ASSERT_TRUE(run(opt() + " -S " + bc.string() + " -o " + ll.string()));
      EXPECT_EQ(r->observations[index].as<std::int64_t>(), countOf(ll)) << program << " " << level;
    }
  }
}

}  // namespace
}  // namespace kiln::llvm_session
