// Writes the seed corpus of every fuzz target (tests/fuzz/corpus/<target>/):
// valid frames of each request kind, conversations that reach deep into the
// handlers, benchmark URIs and MLGO channel streams, plus a few broken ones;
// tests/fuzz/outside_seeds.cpp adds those of HTTP, job specs, parameters, the
// isolation link and key files.
// Usage: make_seed_corpus <corpus directory>  (rewrites its files)
#include <capnp/message.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "common/security/identity.h"
#include "common/transport/frame.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/seed_writer.h"

namespace {

namespace fs = std::filesystem;
using kiln::fuzz::encodeRecord;
using kiln::fuzz::RecordKind;
using Fill = std::function<void(kiln::wire::Request::Builder)>;

std::string frameOf(const std::function<void(kiln::wire::Envelope::Builder)>& fill,
                    std::uint64_t requestId = 7, std::uint64_t client = 1,
                    const char* experiment = "") {
  capnp::MallocMessageBuilder builder;
  auto envelope = kiln::initEnvelope(builder, requestId);
  // The same fixed secrets the envelope builder picks from (one per client).
  const std::string secret(kiln::kSecretBytes, static_cast<char>('a' + client));
  envelope.setClientSecret(
      capnp::Data::Reader(reinterpret_cast<const kj::byte*>(secret.data()), secret.size()));
  envelope.setExperiment(experiment);
  fill(envelope);
  zmq::message_t frame = kiln::encodeFrame(builder);
  return std::string(frame.data<char>(), frame.size());
}

std::string requestFrame(const Fill& fill, std::uint64_t requestId = 7,
                         const char* experiment = "") {
  return frameOf([&](kiln::wire::Envelope::Builder e) { fill(e.initRequest()); }, requestId, 1,
                 experiment);
}

void setTexts(capnp::List<capnp::Text>::Builder list, const std::vector<std::string>& texts) {
  for (unsigned i = 0; i < texts.size(); ++i) list.set(i, texts[i]);
}

// One valid request of every kind, by name.
std::vector<std::pair<std::string, Fill>> everyRequest() {
  return {
      {"get_version", [](auto r) { r.initGetVersion(); }},
      {"get_spaces", [](auto r) { r.initGetSpaces().setSessionType("noop"); }},
      {"start_session",
       [](auto r) {
         auto s = r.initStartSession();
         s.setSessionType("noop");
         s.initBenchmark().setUri("benchmark://kiln-bench-v0/crc32");
         s.initObservationSpaces(2).set(1, 4);
       }},
      {"step",
       [](auto r) {
         auto s = r.initStep();
         s.setSessionId(1);
         s.initActions(2)[0].setInt64(3);
         s.initObservationSpaces(1).set(0, 0);
       }},
      {"fork", [](auto r) { r.initFork().setSessionId(1); }},
      {"end_session", [](auto r) { r.initEndSession().setSessionId(1); }},
      {"add_benchmark",
       [](auto r) {
         auto b = r.initAddBenchmark().initBenchmarks(1)[0];
         b.setUri("benchmark://user-v0/a");
         const char program[] = "define void @f() {\n  ret void\n}\n";
         b.setProgram(kj::arrayPtr(reinterpret_cast<const kj::byte*>(program), sizeof(program)));
       }},
      {"send_session_parameter",
       [](auto r) {
         auto p = r.initSendSessionParameter();
         p.setKey("service.benchmark_cache.set_max_size_in_bytes");
         p.setValue("4096");
       }},
      {"keep_alive", [](auto r) { r.initKeepAlive(); }},
      {"register_worker",
       [](auto r) {
         auto w = r.initRegisterWorker();
         w.setEndpoint("tcp://127.0.0.1:7001");
         w.setSlots(2);
         w.setMaxSessions(8);
         setTexts(w.initSessionTypes(1), {"noop"});
         w.setVersion("kiln 0.1.0");
         w.setHostname("seed");
         w.setPid(42);
       }},
      {"list_cluster", [](auto r) { r.initListCluster(); }},
      {"place",
       [](auto r) {
         auto p = r.initPlace();
         p.setSessionType("noop");
         setTexts(p.initAvoid(1), {"tcp://127.0.0.1:9"});
       }},
      {"create_worker",
       [](auto r) {
         auto s = r.initCreateWorker().initSpec();
         s.setExperiment("exp-a");
         s.setWeight(1);
       }},
      {"release_worker", [](auto r) { r.initReleaseWorker().setWorkerId(2); }},
      {"list_underlying", [](auto r) { r.initListUnderlying(); }},
      {"open_experiment",
       [](auto r) {
         auto s = r.initOpenExperiment().initSpec();
         s.setName("exp-a");
         s.setWorkers(2);
         s.setWeight(1);
         setTexts(s.initSessionTypes(1), {"noop"});
       }},
      {"close_experiment", [](auto r) { r.initCloseExperiment().setName("exp-a"); }},
      {"get_experiment", [](auto r) { r.initGetExperiment().setName("exp-a"); }},
  };
}

using Writer = kiln::fuzz::SeedWriter;

std::string raw(const std::string& frame, std::uint8_t peer = 0) {
  return encodeRecord(RecordKind::kRawFrame, peer, frame);
}
std::string tick(std::uint16_t millis) {
  std::string payload{static_cast<char>(millis & 0xff), static_cast<char>(millis >> 8)};
  return encodeRecord(RecordKind::kTick, 0, payload);
}
// Structured records: the bytes only steer the envelope builder.
std::string structured(std::uint32_t seed, std::size_t length, std::uint8_t peer = 0) {
  std::string payload;
  for (std::size_t i = 0; i < length; ++i) {
    seed = seed * 1664525u + 1013904223u;
    payload += static_cast<char>(seed >> 24);
  }
  return encodeRecord(RecordKind::kStructured, peer, payload);
}

void writeFrames(Writer& out, const std::vector<std::pair<std::string, Fill>>& requests) {
  for (const auto& [name, fill] : requests) out.put("fuzz_frame", name, requestFrame(fill));
  out.put("fuzz_frame", "heartbeat", frameOf([](auto e) {
            auto h = e.initHeartbeat();
            h.setWorkerId(1);
            h.initLoad().setLiveSessions(1);
            h.initUnderlying(1)[0].initSpec().setExperiment("exp-a");
          }));
  out.put("fuzz_frame", "reply_error", frameOf([](auto e) {
            auto error = e.initReply().initError();
            error.setCode(kiln::wire::ErrorCode::NOT_FOUND);
            error.setMessage("no such session");
          }));
  out.put("fuzz_frame", "reply_stepped", frameOf([](auto e) {
            auto s = e.initReply().initStepped();
            auto obs = s.initObservations(2);
            auto tensor = obs[0].initInt64Tensor();
            tensor.initShape(1).set(0, 2);
            auto values = tensor.initValues(2);
            values.set(0, 1);
            values.set(1, 2);
            obs[1].initList(1)[0].setString("x");
            s.setHasNewActionSpace(true);
            s.initNewActionSpace().setName("a");
          }));
  out.put("fuzz_frame", "disconnect", frameOf([](auto e) { e.initDisconnect().setMessage("?"); }));
  std::string valid = requestFrame(requests[0].second);
  out.put("fuzz_frame", "broken_truncated", valid.substr(0, valid.size() - 8));
  out.put("fuzz_frame", "broken_odd_size", valid.substr(0, valid.size() - 3));
}

void writeWorkerConversations(Writer& out,
                              const std::vector<std::pair<std::string, Fill>>& requests) {
  for (const auto& [name, fill] : requests) {
    out.put("fuzz_worker_host", name, raw(requestFrame(fill)));
  }
  const Fill& start = requests[2].second;
  out.put("fuzz_worker_host", "start_then_structured",
          raw(requestFrame(start)) + structured(1, 40) + structured(2, 40) + tick(500) +
              structured(3, 40));
  out.put("fuzz_worker_host", "lease_expiry", raw(requestFrame(start)) + tick(60000) + tick(60000));
  out.put("fuzz_worker_host", "structured_only",
          structured(4, 64) + structured(5, 64) + structured(6, 64) + structured(7, 64));
}

void writeCoordinatorConversations(Writer& out,
                                   const std::vector<std::pair<std::string, Fill>>& requests) {
  for (const auto& [name, fill] : requests) {
    out.put("fuzz_coordinator", name, raw(requestFrame(fill), 2));
  }
  Fill registerWorker = requests[9].second;
  Fill place = requests[11].second;
  out.put("fuzz_coordinator", "register_place_heartbeat",
          raw(requestFrame(registerWorker), 0) + raw(requestFrame(place), 2) +
              raw(frameOf([](auto e) { e.initHeartbeat().setWorkerId(1); }), 0) + tick(300) +
              raw(requestFrame(requests[10].second), 2));
  // A nesting host, an experiment on it, placement inside the experiment.
  std::string host = requestFrame([](auto r) {
    auto w = r.initRegisterWorker();
    w.setEndpoint("tcp://127.0.0.1:7002");
    w.setSlots(4);
    w.setMaxSessions(16);
    setTexts(w.initSessionTypes(1), {"noop"});
    w.setNesting(true);
  });
  std::string heartbeat = frameOf(
      [](auto e) {
        auto h = e.initHeartbeat();
        h.setWorkerId(1);
        auto spec = h.initUnderlying(1)[0].initSpec();
        spec.setWorkerId(1);
        spec.setExperiment("exp-a");
      },
      0);
  out.put("fuzz_coordinator", "experiment_on_nesting_host",
          raw(host, 0) + raw(requestFrame(requests[15].second, 8, "exp-a"), 3) + tick(100) +
              raw(heartbeat, 0) + raw(requestFrame(place, 9, "exp-a"), 3) +
              raw(requestFrame(requests[17].second, 10, "exp-a"), 3) + tick(5000) +
              raw(requestFrame(requests[16].second, 11, "exp-a"), 3));
  out.put("fuzz_coordinator", "structured_only",
          structured(11, 64, 0) + structured(12, 64, 1) + tick(200) + structured(13, 64, 2));
}

// Direct channel streams: [limit selector][chunk selector] then frames,
// each a 4-byte little-endian length and its bytes (common/transport/stream_frames.h).
std::string streamFrame(const std::string& bytes) {
  const auto length = static_cast<std::uint32_t>(bytes.size());
  std::string out;
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  return out + bytes;
}

// The input's first two bytes: the reader's limit (16 + 8 * (limit % 64)
// bytes) and the chunk size (1 + chunk % 64 bytes).
std::string selectors(std::uint8_t limit, std::uint8_t chunk) {
  return {static_cast<char>(limit), static_cast<char>(chunk)};
}

void writeStreamFrames(Writer& out, const std::vector<std::pair<std::string, Fill>>& requests) {
  const std::string token(16, '\x5a');
  std::string session = streamFrame(token);
  for (const auto& [name, fill] : requests) session += streamFrame(requestFrame(fill));
  // Limit 520 bytes; chunks of 64, 7 and 1 bytes.
  out.put("fuzz_stream_frames", "session_chunk64", selectors(0x3f, 0x3f) + session);
  out.put("fuzz_stream_frames", "session_chunk7", selectors(0x3f, 6) + session);
  out.put("fuzz_stream_frames", "two_requests_chunk1",
          selectors(0x3f, 0) + streamFrame(token) + streamFrame(requestFrame(requests[0].second)));
  out.put("fuzz_stream_frames", "empty_frames",
          selectors(0, 5) + streamFrame("") + streamFrame("") + streamFrame("garbage"));
  // Limit 16 bytes: the request's length is over it.
  out.put("fuzz_stream_frames", "broken_oversized",
          selectors(0, 0x3f) + streamFrame(token) + streamFrame(requestFrame(requests[0].second)));
  out.put("fuzz_stream_frames", "broken_huge_length",
          selectors(0x3f, 0x3f) + streamFrame(token) + std::string("\x00\x00\x00\x40", 4) + "body");
  std::string cut =
      selectors(0x3f, 10) + streamFrame(token) + streamFrame(requestFrame(requests[2].second));
  out.put("fuzz_stream_frames", "broken_truncated", cut.substr(0, cut.size() - 5));
}

void writeUris(Writer& out) {
  const std::vector<std::string> uris = {"benchmark://kiln-bench-v0/crc32",
                                         "benchmark://kiln-bench-v0/qsort",
                                         "benchmark://kiln-bench-v0",
                                         "benchmark://corpus-v0/sub/mod",
                                         "benchmark://corpus-v0/tiny",
                                         "generator://csmith-v0/42",
                                         "generator://llvm-stress-v0/0",
                                         "generator://csmith-v0/4294967296",
                                         "file:///tmp/module.bc",
                                         "file:///a/../b.ll",
                                         "benchmark://x/a//b",
                                         "Benchmark://x/y",
                                         "benchmark://x/%2e%2e/y",
                                         "cbench-v1/crc32"};
  for (std::size_t i = 0; i < uris.size(); ++i) {
    out.put("fuzz_benchmark_uri", "uri_" + std::to_string(i), uris[i]);
  }
}

std::string spec(const std::string& name, const std::string& type, const std::string& shape) {
  return "{\"name\":\"" + name + "\",\"port\":0,\"shape\":[" + shape + "],\"type\":\"" + type +
         "\"}";
}
template <class T>
std::string bytesOf(T value) {
  std::string out(sizeof(T), '\0');
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

void writeMlgoStreams(Writer& out) {
  std::string header = "{\"features\":[" + spec("a", "int64_t", "1") + "," +
                       spec("f", "float", "1,2") + "," + spec("small", "int32_t", "3") +
                       "],\"advice\":" + spec("decision", "int64_t", "1") + "}\n";
  auto record = [](int index, std::int64_t a) {
    return "{\"observation\":" + std::to_string(index) + "}\n" + bytesOf(a) + bytesOf(1.5f) +
           bytesOf(-2.0f) + bytesOf(std::int32_t{3}) + bytesOf(std::int32_t{-1}) +
           bytesOf(std::int32_t{7}) + "\n";
  };
  out.put(
      "fuzz_mlgo_channel", "episode",
      header + "{\"context\":\"f1\"}\n" + record(0, 42) + "{\"context\":\"f2\"}\n" + record(1, -7));
  std::string scored = "{\"features\":[" + spec("u8", "uint8_t", "2") + "," +
                       spec("u64", "uint64_t", "") + "," + spec("d", "double", "1") +
                       "],\"score\":" + spec("reward", "float", "") +
                       ",\"advice\":" + spec("decision", "int8_t", "1") + "}\n";
  out.put("fuzz_mlgo_channel", "with_outcome",
          scored + "{\"observation\":0}\n" + std::string("\x01\xff", 2) +
              bytesOf(std::uint64_t{1} << 63) + bytesOf(0.25) + "\n" + "{\"outcome\":0}\n" +
              bytesOf(3.0f) + "\n");
  out.put("fuzz_mlgo_channel", "header_only", header);
  out.put("fuzz_mlgo_channel", "broken_short_record", header + record(0, 1).substr(0, 20));
  out.put("fuzz_mlgo_channel", "broken_no_newline", header + record(0, 1).substr(0, 58) + "x");
  out.put("fuzz_mlgo_channel", "broken_header",
          "{\"features\":[" + spec("a", "int64_t", "-1") + "],\"advice\":{}}\n");
  out.put("fuzz_mlgo_channel", "broken_line", header + "{\"observation\":\"zero\"}\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_seed_corpus <corpus directory>\n";
    return 2;
  }
  Writer out{fs::path(argv[1])};
  auto requests = everyRequest();
  writeFrames(out, requests);
  writeWorkerConversations(out, requests);
  writeCoordinatorConversations(out, requests);
  writeUris(out);
  writeMlgoStreams(out);
  writeStreamFrames(out, requests);
  kiln::fuzz::writeOutsideSeeds(out);
  std::cout << "wrote " << out.written() << " seed files under " << argv[1] << "\n";
  return 0;
}
