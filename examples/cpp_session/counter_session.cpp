// A user-defined session type built against kiln's public headers only: a
// toy "compiler" whose state is a string that actions edit, with a per-process
// context that counts the sessions it served (state that outlives a session).
//
//   build/examples/cpp_session/kiln-counter-worker --coordinator tcp://127.0.0.1:7700 --slots 2
#include <atomic>

#include <kiln/kit/compilation_session.h>
#include <kiln/kit/run_worker.h>
#include <kiln/kit/service_context.h>

namespace {

class CounterContext : public kiln::ServiceContext {
 public:
  using ServiceContext::ServiceContext;
  kiln::Status init() override {
    logger().info("counter context starts in {}", workingDirectory().string());
    return kiln::okStatus();
  }
  kiln::Status shutdown() override {
    logger().info("counter context served {} sessions", sessionsServed.load());
    return kiln::okStatus();
  }
  std::atomic<int> sessionsServed{0};
};

class CounterSession final : public kiln::CompilationSession {
 public:
  static constexpr const char* kSessionTypeName = "counter";
  explicit CounterSession(CounterContext& context) : context_(context) {}

  std::vector<kiln::Space> actionSpaces() const override {
    return {kiln::Space::namedDiscrete("edits", {"append-a", "append-b", "pop", "finish"})};
  }
  std::vector<kiln::Space> observationSpaces() const override {
    // A reward is measured since it was last computed: flagged so, a client
    // that restores a lost session (by replay, below) recomputes it where the
    // lost one last did, and the next reward is the same as without the loss.
    kiln::Space gained = kiln::Space::int64Scalar("Reward:LengthGained", {});
    gained.sinceLastObserved = true;
    return {kiln::Space::string("Text"), kiln::Space::int64Scalar("Length", {0, std::nullopt}),
            std::move(gained)};
  }
  std::string compilerVersion() const override { return "counter 1.0"; }
  // The same edits always give the same text: a lost session is rebuilt by
  // replaying them elsewhere, and "Text" proves the rebuilt one is equal.
  kiln::ReplayPolicy replayPolicy() const override { return {true, "Text"}; }

  kiln::Status init(std::size_t, const kiln::Benchmark& benchmark) override {
    ++context_.sessionsServed;
    text_ = benchmark.program ? *benchmark.program : benchmark.uri;
    rewardedLength_ = static_cast<std::int64_t>(text_.size());
    return kiln::okStatus();
  }
  kiln::Status initAsFork(const kiln::CompilationSession& parent) override {
    const auto& other = static_cast<const CounterSession&>(parent);
    text_ = other.text_;
    rewardedLength_ = other.rewardedLength_;
    return kiln::okStatus();
  }
  kiln::Status applyAction(const kiln::Value& action, kiln::ActionOutcome& outcome) override {
    switch (action.as<std::int64_t>()) {
      case 0:
        text_ += 'a';
        break;
      case 1:
        text_ += 'b';
        break;
      case 2:
        outcome.actionHadNoEffect = text_.empty();
        if (!text_.empty()) text_.pop_back();
        break;
      default:
        outcome.endOfEpisode = true;
    }
    return kiln::okStatus();
  }
  kiln::Status computeObservation(std::size_t space, kiln::Value& observation) override {
    const auto length = static_cast<std::int64_t>(text_.size());
    if (space == 0) {
      observation = text_;
    } else if (space == 1) {
      observation = length;
    } else {
      observation = length - rewardedLength_;
      rewardedLength_ = length;
    }
    return kiln::okStatus();
  }

 private:
  CounterContext& context_;
  std::string text_;
  std::int64_t rewardedLength_ = 0;  // the length when the reward was last computed
};

}  // namespace

int main(int argc, char** argv) {
  return kiln::runWorker<CounterSession, CounterContext>(argc, argv);
}
