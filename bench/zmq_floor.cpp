#include "bench/zmq_floor.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>
#include <zmq.hpp>

namespace kiln::bench {

Result<LatencySummary> rawZmqRoundTrips(const std::string& bind, unsigned samples) {
  using Clock = std::chrono::steady_clock;
  zmq::context_t serverZmq(1);
  zmq::context_t clientZmq(1);
  zmq::socket_t router(serverZmq, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  try {
    router.bind(bind);
  } catch (const zmq::error_t& e) {
    return internalError("the raw ZeroMQ echo cannot listen on " + bind + ": " + e.what());
  }
  std::string endpoint = router.get(zmq::sockopt::last_endpoint);
  std::atomic<bool> stop{false};
  std::thread echo([&] {
    while (!stop.load()) {
      zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(50));
      zmq::message_t id, frame;
      while (router.recv(id, zmq::recv_flags::dontwait)) {
        if (!router.recv(frame)) break;
        router.send(id, zmq::send_flags::sndmore);
        router.send(frame, zmq::send_flags::none);
      }
    }
  });
  zmq::socket_t dealer(clientZmq, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvtimeo, 5000);
  dealer.connect(endpoint);
  std::vector<std::int64_t> nanos;
  std::string payload(64, 'x');
  Status status = okStatus();
  const auto limit = Clock::now() + std::chrono::seconds(20);
  for (unsigned i = 0; i < samples + 100 && Clock::now() < limit; ++i) {
    auto sent = Clock::now();
    dealer.send(zmq::buffer(payload), zmq::send_flags::none);
    zmq::message_t reply;
    if (!dealer.recv(reply)) {
      status = timeoutError("the raw ZeroMQ echo did not answer within 5 s");
      break;
    }
    // The first ones warm up.
    if (i >= 100) {
      nanos.push_back(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - sent).count());
    }
  }
  stop.store(true);
  echo.join();
  KILN_RETURN_IF_ERROR(status);
  if (nanos.empty()) return timeoutError("no raw ZeroMQ round trip completed within 20 s");
  return summarize(nanos);
}

Result<StreamFloor> measureZmqEchoFloor(const std::string& endpoint, std::size_t payloadBytes,
                                        unsigned samples, double seconds) {
  using Clock = std::chrono::steady_clock;
  zmq::context_t zmq(1);
  zmq::socket_t socket(zmq, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::rcvtimeo, 5000);
  socket.connect(endpoint);
  const std::string data(payloadBytes, 'x');
  std::vector<std::int64_t> nanos;
  nanos.reserve(samples);
  auto begin = Clock::now();
  const auto limit = begin + std::chrono::duration<double>(seconds);
  for (unsigned i = 0; i < samples + 100 && Clock::now() < limit; ++i) {
    if (i == 100) begin = Clock::now();
    auto sent = Clock::now();
    socket.send(zmq::buffer(data), zmq::send_flags::none);
    zmq::message_t reply;
    if (!socket.recv(reply)) {
      return timeoutError("the raw ZeroMQ echo at " + endpoint + " did not answer within 5 s");
    }
    if (i >= 100) {  // the first ones warm up
      nanos.push_back(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - sent).count());
    }
  }
  if (nanos.empty()) return timeoutError("no raw ZeroMQ round trip to " + endpoint + " in time");
  StreamFloor floor;
  floor.perSecond = nanos.size() / std::chrono::duration<double>(Clock::now() - begin).count();
  floor.nanos = nanos;
  floor.latency = summarize(nanos);
  return floor;
}

}  // namespace kiln::bench
