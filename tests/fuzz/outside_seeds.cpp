// Seeds of the targets for what reaches kiln besides its own protocol frames:
// HTTP requests to the coordinator's endpoint, job specs and opt flags,
// worker and session parameters, the isolation link's messages, key files.
// Each target gets valid inputs and near misses (one field off).
#include <capnp/message.h>
#include <zmq.h>

#include <string>
#include <utility>
#include <vector>

#include <kiln/curve_keys.h>
#include "common/transport/frame.h"
#include "common/types/program_graph.h"
#include "common/types/underlying_wire.h"
#include "nesting/isolation_messages.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/seed_writer.h"

namespace kiln::fuzz {
namespace {

namespace iso = nesting::isolation;

void writeHttpRequests(SeedWriter& out) {
  const std::vector<std::pair<std::string, std::string>> requests = {
      {"get_metrics", "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"},
      {"get_dashboard", "GET /dashboard HTTP/1.1\r\nHost: x\r\nAccept: text/html\r\n\r\n"},
      {"head_root", "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"get_status_query", "GET /api/status?experiment=exp-a&x=%41%zz&&=1 HTTP/1.1\r\n\r\n"},
      {"get_range", "GET /dashboard HTTP/1.1\r\nRange: bytes=0-9,20-,-5\r\n\r\n"},
      {"pipelined", "GET / HTTP/1.1\r\n\r\nGET /api/status HTTP/1.1\r\nConnection: close\r\n\r\n"},
      {"post_body", "POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"},
      {"post_chunked",
       "POST /api/status HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"},
      {"expect_continue",
       "PUT /metrics HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: "
       "3\r\n\r\nabc"},
      {"unknown_path", "GET /nope/../metrics HTTP/1.1\r\n\r\n"},
      {"encoded_path", "GET /%6detrics HTTP/1.1\r\n\r\n"},
      {"http10", "GET /metrics HTTP/1.0\r\n\r\n"},
      {"options_star", "OPTIONS * HTTP/1.1\r\n\r\n"},
      {"no_version", "GET /metrics\r\n\r\n"},
      {"bare_lf", "GET /metrics HTTP/1.1\nHost: x\n\n"},
      {"folded_header", "GET / HTTP/1.1\r\nX-A: 1\r\n  continued\r\n\r\n"},
      {"huge_length", "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n"},
      {"partial_line", "GET /metr"},
  };
  for (const auto& [name, bytes] : requests) out.put("fuzz_http_endpoint", name, bytes);
}

void writeDashboardNames(SeedWriter& out) {
  const std::vector<std::pair<std::string, std::string>> names = {
      {"cluster", "htcp://10.0.0.1:7000\tnode-1\t\nhtcp://10.0.0.2:7000\tnode-2\neexp-a\neexp-b\n"},
      {"quotes", "htcp://\"a\"\\b:1\th\"o\\st\t\ne{\"name\": 1}\n"},
      {"control", std::string("h\x01\x1f\x7f\tnode\r\ne\x00x\n", 15)},
      {"utf8", "htcp://n\xc3\xbcrnberg:1\t\xe6\x9d\xb1\xe4\xba\xac\ne\xf0\x9f\x94\xa5\n"},
      {"not_utf8", "h\xff\xfe:1\t\xc0\xaf\ne\xed\xa0\x80\ne\xe2\x82\n"},
      {"same_endpoint", "hx:1\tone\nhx:1\ttwo\t\nex\nex\n"},
  };
  for (const auto& [name, text] : names) out.put("fuzz_dashboard_status", name, text);
}

void writeJobSpecs(SeedWriter& out) {
  const std::vector<std::pair<std::string, std::string>> specs = {
      {"full", R"({"steps":[{"kind":"compile","flags":["-Oz"]},{"kind":"inline-default"},)"
               R"({"kind":"native-size"},{"kind":"training-log"}],"timeout_ms":60000,)"
               R"("memory_limit_mb":2048})"},
      {"minimal", R"({"steps":[{"kind":"native-size"}]})"},
      {"flagless_compile", R"({"steps":[{"kind":"compile"},{"kind":"native-size"}]})"},
      {"pipeline",
       R"({"steps":[{"kind":"compile","flags":["-passes=function(instcombine,simplifycfg),)"
       R"(loop-unroll<O3;full-unroll-max=4>","-inline-threshold=-5"]}]})"},
      {"unknown_field", R"({"steps":[{"kind":"native-size"}],"surprise":true})"},
      {"bad_timeout", R"({"steps":[{"kind":"native-size"}],"timeout_ms":1.5})"},
      {"huge_memory", R"({"steps":[{"kind":"native-size"}],"memory_limit_mb":1e400})"},
      {"flags_elsewhere", R"({"steps":[{"kind":"training-log","flags":[]}]})"},
      {"escaped", R"({"st\u0065ps":[{"kind":"native-size\u0000"}]})"},
      {"duplicate_key", R"({"steps":[],"steps":[{"kind":"native-size"}]})"},
      {"nested", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{}]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"},
  };
  for (const auto& [name, json] : specs) out.put("fuzz_job_spec", "spec_" + name, '\0' + json);
  const std::vector<std::string> flags = {
      "-Oz",
      "-O3",
      "-passes=default<O2>",
      "-passes=cgscc(inline),function(dot-cfg)",
      "-passes=memprof-use<profile-filename=x>",
      "-inline-threshold=225",
      "-inline-threshold=-",
      "-load=plugin.so",
      "-o=/tmp/x",
      "@flags.rsp",
      "-passes=",
  };
  for (std::size_t i = 0; i < flags.size(); ++i) {
    out.put("fuzz_job_spec", "flag_" + std::to_string(i), '\1' + flags[i]);
  }
}

// Module contents: assembly that reaches for files in the disguises LLVM's
// assembler accepts, ordinary assembly, and whole modules (fuzz_module_content).
void writeModuleContents(SeedWriter& out) {
  const std::vector<std::pair<std::string, std::string>> seeds = {
      {"asm_include", std::string(1, '\0') + ".include \"/etc/hostname\""},
      {"asm_incbin_upper", std::string(1, '\0') + "  .INCBIN\t\"/etc/hostname\", 0, 4"},
      {"asm_quoted_directive", std::string(1, '\0') + "\".incbin\" \"/etc/hostname\""},
      {"asm_macro", std::string(1, '\0') + ".macro m d\n.\\d \"/etc/hostname\"\n.endm\nm include"},
      {"asm_irp", std::string(1, '\0') + ".irp d,incbin\n.\\d \"/etc/hostname\"\n.endr"},
      {"asm_separators", std::string(1, '\0') + "nop; /* c */ lbl: .include \"x\" # y"},
      {"asm_ordinary", std::string(1, '\0') +
                           ".symver main,main@V_1\n.p2align 4, 0x90\n.globl k\nk: .zero 16\n"
                           ".section .note.GNU-stack,\"\",@progbits"},
      {"asm_fill", std::string(1, '\0') + ".fill 1048576, 8, 0\n.balign 65536"},
      {"inline_variants", std::string(1, '\1') + ".inc$(lude$|x$) \"/etc/hostname\""},
      {"inline_operand", std::string(1, '\1') + ".${0:c} \"/etc/hostname\"\nmovl $1, %eax"},
      {"inline_ordinary",
       std::string(1, '\1') + "${:private}l${:uid}: lock; bswap $1\njmp ${:private}l${:uid}"},
      {"module_gcov", std::string(1, '\2') +
                          "define void @f() {\n  ret void\n}\n!llvm.gcov = !{!0}\n"
                          "!0 = !{!\"/tmp/x.gcno\", !\"/tmp/x.gcda\", !1}\n!1 = !{}\n"},
      {"module_symbol", std::string(1, '\2') +
                            "@\".incbin\" = global i32 0\ndefine void @f() {\n  call void asm "
                            "sideeffect \"${0:c} \\22/etc/hostname\\22\", \"s\"(ptr @\".incbin\")\n"
                            "  ret void\n}\n"},
      {"module_data", std::string(1, '\2') +
                          "@g = constant [1000 x i8] zeroinitializer, align 4096\n"
                          "define void @f() align 64 {\n  ret void\n}\n"},
  };
  for (const auto& [name, bytes] : seeds) out.put("fuzz_module_content", name, bytes);
}

void writeParameters(SeedWriter& out) {
  const std::vector<std::pair<std::string, std::string>> scripts = {
      {"benchmark_cache",
       "w service.benchmark_cache.get_counters\n"
       "w service.benchmark_cache.set_max_size_in_bytes 1024\n"
       "w service.benchmark_cache.get_size_in_bytes\n"
       "w service.benchmark_cache.evict_to_capacity 0\n"
       "w service.benchmark_cache.get_max_size\n"},
      {"llvm_caches",
       "c1 service.parsed_module_cache.set_max_size 0\n"
       "c1 service.parsed_module_cache.get_size\n"
       "w service.transition_cache.set_max_size_in_bytes 4096\n"
       "c1 service.transition_cache.evict_to_capacity 10\n"
       "w service.transition_cache.bogus 1\n"},
      {"llvm_datasets",
       "w llvm.datasets\nw llvm.benchmarks benchmark://kiln-bench-v0:3\n"
       "c1 llvm.benchmarks generator://csmith-v0\nc1 llvm.benchmarks :12\n"},
      {"mlgo_timeouts",
       "c2 mlgo.decision_timeout_ms 1000\nw mlgo.compile_timeout_ms 0\n"
       "c4 mlgo.compile_timeout_ms 3600000\nw mlgo.unknown 1\n"},
      {"noop",
       "w noop.skew_next_starts 2\np0 noop.sum\ns3\ns7\ns9\np0 noop.sum\n"
       "c0 noop.skew_next_starts 1001\n"},
      {"sessions", "p1 llvm.anything x\np2 mlgo.decision_timeout_ms 5\np4 x y\np0 noop.nope 1\n"},
      {"unknown", "w unknown.key value with spaces\nw \nc3\nx junk\n"},
  };
  for (const auto& [name, script] : scripts) out.put("fuzz_session_parameters", name, script);
}

std::string frame(capnp::MallocMessageBuilder& builder) {
  zmq::message_t bytes = encodeFrame(builder);
  return std::string(bytes.data<char>(), bytes.size());
}

std::string u64(std::uint64_t value) {
  std::string out;
  iso::putU64(out, value);
  return out;
}

// A raw-parts input: the direction byte, then one record per part.
std::string parts(bool fromChild, const std::vector<std::string>& fields) {
  std::string input(1, static_cast<char>(fromChild ? 1 : 0));
  for (const std::string& field : fields) input += encodeRecord(RecordKind::kRawFrame, 0, field);
  return input;
}

void writeIsolationMessages(SeedWriter& out) {
  capnp::MallocMessageBuilder started;
  initEnvelope(started, 7).initReply().initSessionStarted().setSessionId(3);
  capnp::MallocMessageBuilder forked;
  initEnvelope(forked, 8).initReply().initForked().setSessionId(4);
  capnp::MallocMessageBuilder step;
  auto stepEnvelope = initEnvelope(step, 9);
  stepEnvelope.setTarget(5);
  stepEnvelope.initRequest().initStep().setSessionId(3);
  capnp::MallocMessageBuilder create;
  UnderlyingSpec spec{5, "exp-a", 2, 4, {"noop", "llvm"}};
  toWire(spec, initEnvelope(create, 0).initRequest().initCreateWorker().initSpec());
  capnp::MallocMessageBuilder add;
  auto program = initEnvelope(add, 0).initRequest().initAddBenchmark().initBenchmarks(1)[0];
  program.setUri("benchmark://user-v0/a");
  program.setProgram(kj::arrayPtr(reinterpret_cast<const kj::byte*>("BC\xc0\xde"), 4));
  std::string load = u64(5) + u64(1) + u64(1) + u64(0) + u64(42);

  const std::vector<std::pair<std::string, std::string>> seeds = {
      {"child_hello", parts(true, {"h"})},
      {"child_reply_started", parts(true, {"r", "client-1", frame(started)})},
      {"child_reply_forked", parts(true, {"r", "client-1", frame(forked)})},
      {"child_reply_garbage", parts(true, {"r", "client-1", "not a frame"})},
      {"child_acquire", parts(true, {"a"})},
      {"child_token_back", parts(true, {"t", u64(1500000)})},
      {"child_token_back_short", parts(true, {"t", u64(1).substr(0, 7)})},
      {"child_load", parts(true, {"l", load + load})},
      {"child_load_partial", parts(true, {"l", load.substr(0, 39)})},
      {"child_released", parts(true, {"d", u64(5), u64(2)})},
      {"child_released_no_count", parts(true, {"d", u64(5)})},
      {"child_unknown", parts(true, {"z", "x"})},
      {"host_request", parts(false, {"R", "client-1", frame(step)})},
      {"host_create", parts(false, {"C", frame(create)})},
      {"host_create_not_create", parts(false, {"C", frame(step)})},
      {"host_release", parts(false, {"D", u64(5)})},
      {"host_grant", parts(false, {"G"})},
      {"host_keep_alive", parts(false, {"K", u64(1)})},
      {"host_benchmark", parts(false, {"B", frame(add)})},
      {"host_no_kind", parts(false, {"", "x"})},
  };
  for (const auto& [name, input] : seeds) out.put("fuzz_isolation_link", name, input);
  // Structured inputs: the bytes steer the message builder.
  std::uint32_t state = 12345;
  for (int i = 0; i < 8; ++i) {
    std::string input(1, static_cast<char>(2 | (i & 1)));
    for (int b = 0; b < 96; ++b) {
      state = state * 1664525u + 1013904223u;
      input += static_cast<char>(state >> 24);
    }
    out.put("fuzz_isolation_link", "structured_" + std::to_string(i), input);
  }
}

void writeKeyFiles(SeedWriter& out) {
  char publicKey[41] = {}, secretKey[41] = {}, otherPublic[41] = {}, otherSecret[41] = {};
  if (zmq_curve_keypair(publicKey, secretKey) != 0 ||
      zmq_curve_keypair(otherPublic, otherSecret) != 0) {
    return;  // libzmq without CURVE: no key seeds
  }
  ClusterKeys keys{publicKey, secretKey};
  const std::string pub = publicKey, sec = secretKey, other = otherPublic;
  const std::vector<std::pair<std::string, std::string>> files = {
      {"valid", formatKeyFile(keys)},
      {"crlf_tabs", "public-key\t=\t" + pub + "\r\nsecret-key = " + sec + "\r\n"},
      {"secret_first", "# comment\n\nsecret-key=" + sec + "\npublic-key=" + pub},
      {"mismatched", "public-key = " + other + "\nsecret-key = " + sec + "\n"},
      {"missing_secret", "public-key = " + pub + "\n"},
      {"short_key", "public-key = " + pub.substr(1) + "\nsecret-key = " + sec + "\n"},
      {"bad_character", "public-key = " + pub.substr(1) + "~\nsecret-key = " + sec + "\n"},
      {"unknown_field", "colour = blue\n"},
  };
  for (const auto& [name, text] : files) out.put("fuzz_key_files", "key_" + name, '\0' + text);
  const std::vector<std::pair<std::string, std::string>> lists = {
      {"two", "# ops laptop\n" + pub + "\n\n" + other + "\n"},
      {"indented", "  " + pub + "  \r\n"},
      {"bad_line", pub + "\nnot-a-key\n"},
      {"empty", ""},
  };
  for (const auto& [name, text] : lists) {
    out.put("fuzz_key_files", "authorized_" + name, '\1' + text);
  }
}

// A small graph in its wire form, and run specs, valid and not (the first
// byte picks the parser: 0 graph, 1 a client's spec, 2 a corpus's).
void writeProgramObservationInputs(SeedWriter& out) {
  ProgramGraph graph;
  graph.texts = {"[external]", "main", "add", "i32", "ret"};
  graph.functionNames = {1};
  graph.nodeKind = {GraphNodeKind::kInstruction, GraphNodeKind::kInstruction,
                    GraphNodeKind::kVariable, GraphNodeKind::kConstant,
                    GraphNodeKind::kInstruction};
  graph.nodeText = {0, 2, 3, 3, 4};
  graph.nodeFunction = {kNoIndex, 0, 0, kNoIndex, 0};
  graph.nodeBlock = {kNoIndex, 0, 0, kNoIndex, 0};
  graph.edgeFlow = {GraphEdgeFlow::kCall,    GraphEdgeFlow::kData, GraphEdgeFlow::kData,
                    GraphEdgeFlow::kControl, GraphEdgeFlow::kData, GraphEdgeFlow::kCall};
  graph.edgeSource = {0, 1, 3, 1, 2, 4};
  graph.edgeTarget = {1, 2, 1, 4, 4, 0};
  graph.edgePosition = {0, 0, 1, 0, 0, 0};
  graph.fullTexts = {"", "%1 = add i32 %0, 1", "i32 %1", "i32 1", "ret i32 %1"};
  graph.nodeFullText = {0, 1, 2, 3, 4};
  const std::string wire = encodeProgramGraph(graph);
  out.put("fuzz_program_graph", "graph_small", std::string(1, '\0') + wire);
  out.put("fuzz_program_graph", "graph_truncated",
          std::string(1, '\0') + wire.substr(0, wire.size() / 2));
  const std::vector<std::pair<std::string, std::string>> specs = {
      {"inputs",
       R"({"inputs": [{"args": ["1"], "stdin": "text"}, {"args": []}], "libraries": ["m"]})"},
      {"file", R"({"inputs": [{"stdin_file": "inputs/a.txt"}]})"},
      {"escape", R"({"inputs": [{"stdin_file": "../outside"}]})"},
      {"unknown", R"({"inputs": [{}], "link": ["-fplugin=x"]})"},
      {"library", R"({"inputs": [{}], "libraries": ["ssl"]})"},
      {"empty", R"({"inputs": []})"},
  };
  for (const auto& [name, text] : specs) {
    out.put("fuzz_program_graph", "client_spec_" + name, '\1' + text);
    out.put("fuzz_program_graph", "corpus_spec_" + name, '\2' + text);
  }
}

}  // namespace

void writeOutsideSeeds(SeedWriter& out) {
  writeProgramObservationInputs(out);
  writeHttpRequests(out);
  writeDashboardNames(out);
  writeJobSpecs(out);
  writeModuleContents(out);
  writeParameters(out);
  writeIsolationMessages(out);
  writeKeyFiles(out);
}

}  // namespace kiln::fuzz
