// The MLGO pipe reader: what a compiler writes on BASE.out (a header line,
// then context / observation / outcome records with raw tensor bytes) read
// with the channel's own parser (compilers/mlgo_channel/record_stream.h), once from memory and
// once through FifoReader over a real pipe. Properties checked: both readers
// see the same header, observations and final status (the FIFO buffering
// loses and invents nothing); every decoded feature re-encodes to exactly the
// bytes it came from when its type allows (see tensor_codec.h).
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "compilers/mlgo_channel/channel.h"
#include "compilers/mlgo_channel/fifo.h"
#include "compilers/mlgo_channel/record_stream.h"
#include "compilers/mlgo_channel/tensor_codec.h"

namespace {

namespace mlgo_channel = kiln::mlgo_channel;

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_mlgo_channel: property violated: %s\n", what);
    std::abort();
  }
}

constexpr std::size_t kMaxObservations = 64;
constexpr std::size_t kPipeBytes = 60000;  // below the default pipe capacity: one write

mlgo_channel::ChannelOptions smallOptions() {
  mlgo_channel::ChannelOptions options;
  // Small limits so that the fuzzer reaches them with small inputs.
  options.limits.maxHeaderBytes = 4096;
  options.limits.maxFeatures = 16;
  options.limits.maxTensorBytes = 1024;
  options.limits.maxObservationBytes = 4096;
  options.maxLineBytes = 256;
  return options;
}

struct Transcript {
  std::string outcome;  // "ok" or the final status
  std::vector<std::string> observations;
};

std::vector<kiln::Value> featuresOf(const mlgo_channel::ChannelHeader& header,
                                    const mlgo_channel::Observation& observation) {
  auto features = mlgo_channel::decodeFeatures(header, observation);
  require(features.ok(), "an observation does not decode");
  require(features->size() == header.features.size(), "an observation lacks features");
  return std::move(features).value();
}

std::string describe(const mlgo_channel::ChannelHeader& header,
                     const mlgo_channel::Observation& observation) {
  std::string text = std::to_string(observation.index) + "@" + observation.context + ":";
  for (const kiln::Value& feature : featuresOf(header, observation)) {
    text += feature.describe() + ";";
  }
  return text;
}

void checkReencodes(const mlgo_channel::ChannelHeader& header,
                    const mlgo_channel::Observation& observation, std::string_view payload) {
  std::vector<kiln::Value> features = featuresOf(header, observation);
  std::size_t offset = 0;
  for (std::size_t i = 0; i < header.features.size(); ++i) {
    const mlgo_channel::FeatureSpec& spec = header.features[i];
    auto bytes = mlgo_channel::encodeTensor(spec, features[i]);
    std::string_view original = payload.substr(offset, spec.byteSize);
    offset += spec.byteSize;
    // uint64 values above INT64_MAX wrap to negative int64 on the way in and
    // are then refused on the way out; every other type round-trips exactly.
    if (spec.type == mlgo_channel::ElementType::kUInt64 && !bytes.ok()) continue;
    require(bytes.ok(), "a decoded feature does not encode");
    require(*bytes == original, "a feature does not re-encode to its bytes");
  }
}

// `inMemory`: the bytes behind `source` when it is a BufferSource, so that
// each observation can be compared with the tensor bytes it came from.
Transcript play(mlgo_channel::RecordSource& source, const mlgo_channel::ChannelOptions& options,
                const std::string_view* inMemory = nullptr) {
  Transcript transcript;
  auto header = mlgo_channel::readHeader(source, options.limits);
  if (!header.ok()) {
    transcript.outcome = header.status().toString();
    return transcript;
  }
  mlgo_channel::RecordReader reader(*header, options.maxLineBytes);
  for (std::size_t i = 0; i < kMaxObservations; ++i) {
    auto next = reader.next(source);
    if (!next.ok()) {
      transcript.outcome = next.status().toString();
      return transcript;
    }
    if (!next->has_value()) break;
    transcript.observations.push_back(describe(*header, **next));
    if (inMemory != nullptr) {
      // The observation's bytes end just before the '\n' the reader stopped after.
      std::size_t end = static_cast<mlgo_channel::BufferSource&>(source).position() - 1;
      std::size_t length = header->observationBytes();
      checkReencodes(*header, **next, inMemory->substr(end - length, length));
    }
    // The advice the host would send must have the advertised size.
    auto advice = mlgo_channel::encodeTensor(header->advice, kiln::Value(std::int64_t{0}));
    if (advice.ok()) require(advice->size() == header->advice.byteSize, "advice has a bad size");
  }
  transcript.outcome = "ok";
  return transcript;
}

// FifoReader over a pipe holding the whole input (written at once, then closed).
class PipeSource final : public mlgo_channel::RecordSource {
 public:
  explicit PipeSource(std::string_view bytes) {
    int fds[2];
    require(::pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0, "pipe2 failed");
    require(::write(fds[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()),
            "the pipe did not take the whole input");
    ::close(fds[1]);
    reader_ = mlgo_channel::FifoReader(mlgo_channel::UniqueFd(fds[0]));
  }
  kiln::Result<std::optional<std::string>> readLine(std::size_t maxBytes) override {
    return reader_.readLine(maxBytes, deadline(), {});
  }
  kiln::Result<std::string> readExact(std::size_t n) override {
    return reader_.readExact(n, deadline(), {});
  }

 private:
  static kiln::TimePoint deadline() {
    return std::chrono::steady_clock::now() + std::chrono::seconds(5);
  }
  mlgo_channel::FifoReader reader_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const mlgo_channel::ChannelOptions options = smallOptions();

  mlgo_channel::BufferSource memory(bytes);
  Transcript fromMemory = play(memory, options, &bytes);

  if (size <= kPipeBytes) {
    PipeSource pipe(bytes);
    Transcript fromPipe = play(pipe, options);
    require(fromPipe.observations == fromMemory.observations,
            "the FIFO reader and the buffer reader saw different observations");
    require(fromPipe.outcome == fromMemory.outcome,
            "the FIFO reader and the buffer reader ended differently");
  }
  return 0;
}
