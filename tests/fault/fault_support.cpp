#include "tests/fault/fault_support.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <kiln/logging.h>

namespace kiln::fault {

InProcessCoordinator::InProcessCoordinator(Duration heartbeat) {
  CoordinatorConfig config;
  config.listen = "tcp://127.0.0.1:0";
  config.heartbeatInterval = heartbeat;
  config.experimentLease = 2s;
  server_ = std::move(
      CoordinatorServer::create(config, zmq_, clock_, makeNullLogger("coordinator")).value());
  thread_ = std::thread([this] { server_->run(); });
}

InProcessCoordinator::~InProcessCoordinator() {
  server_->stop();
  thread_.join();
}

int freePort() {
  zmq::context_t zmq(1);
  zmq::socket_t probe(zmq, zmq::socket_type::router);
  probe.set(zmq::sockopt::linger, 0);
  probe.bind("tcp://127.0.0.1:0");
  std::string bound = probe.get(zmq::sockopt::last_endpoint);
  return std::stoi(bound.substr(bound.rfind(':') + 1));
}

std::unique_ptr<client::Client> connectClient(const std::string& coordinator,
                                              const std::string& experiment,
                                              Duration requestTimeout) {
  client::ClientOptions options;
  options.coordinator = coordinator;
  options.experiment = experiment;
  options.requestTimeout = requestTimeout;
  options.leasePeriod = 100ms;
  return std::move(client::Client::connect(options).value());
}

client::SessionOptions llvmSession(const std::string& benchmark) {
  client::SessionOptions options;
  options.sessionType = "llvm";
  options.benchmark = benchmark;
  return options;
}

Value passAction(const client::Session& session, const std::string& pass) {
  // Names are pipelines: "function(gvn)", "function(loop(loop-bound-split))".
  const std::vector<std::string>& names = session.spaces().actionSpaces.at(0).names;
  auto found = std::find_if(names.begin(), names.end(), [&](const std::string& name) {
    return name == pass || name.find("(" + pass + ")") != std::string::npos ||
           name.find("(" + pass + "<") != std::string::npos;
  });
  EXPECT_NE(found, names.end()) << "no action " << pass;
  return Value(static_cast<std::int64_t>(found - names.begin()));
}

std::int64_t instructionCountAfter(client::Client& client, const std::string& benchmark,
                                   const std::vector<std::string>& passes) {
  auto session = client.startSession(llvmSession(benchmark));
  if (!session.ok()) return -1;
  std::vector<Value> actions;
  for (const std::string& pass : passes) actions.push_back(passAction(**session, pass));
  auto stepped = (*session)->step(actions, std::vector<std::string>{"IrInstructionCount"});
  return stepped.ok() ? stepped->observations.at(0).as<std::int64_t>() : -1;
}

BackgroundStepper::BackgroundStepper(std::vector<std::unique_ptr<client::Session>> sessions)
    : sessions_(std::move(sessions)) {
  thread_ = std::thread([this] {
    // Bounded: at most 100,000 steps even if nobody stops it.
    for (std::uint64_t i = 0; !stopping_.load() && i < 100000; ++i) {
      auto& session = sessions_[i % sessions_.size()];
      auto stepped = session->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"});
      if (!stepped.ok()) {
        if (failures_.fetch_add(1) == 0) firstFailure_ = stepped.status().toString();
      }
      ++steps_;
    }
  });
}

void BackgroundStepper::stop() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
}

}  // namespace kiln::fault
