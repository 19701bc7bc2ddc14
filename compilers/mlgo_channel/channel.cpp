// The FIFO mechanics of the channel; the record stream itself is parsed by
// compilers/mlgo_channel/record_stream.h over a FifoSource.
#include "compilers/mlgo_channel/channel.h"

#include <system_error>
#include <utility>

#include "compilers/mlgo_channel/tensor_codec.h"

namespace kiln::mlgo_channel {

struct InteractiveChannel::State {
  std::filesystem::path base;
  ChannelOptions options;
  bool inCreated = false;
  bool outCreated = false;
  UniqueFd advice;                     // write end of BASE.in
  FifoReader records;                  // read end of BASE.out
  std::optional<RecordReader> reader;  // set once the header arrived
  // Taken whole from the buffer by nextReadiness(); next() hands it out.
  std::optional<Observation> taken;
  bool pendingAdvice = false;
  bool ended = false;
  // Named in errors of every advice write: built once, not per decision.
  std::string inName;

  std::filesystem::path in() const { return base.string() + ".in"; }
  std::filesystem::path out() const { return base.string() + ".out"; }

  ~State() {
    advice.reset();
    records.close();
    std::error_code ignored;
    if (inCreated) std::filesystem::remove(in(), ignored);
    if (outCreated) std::filesystem::remove(out(), ignored);
  }
};

namespace {

// The FIFO as a RecordSource: every read waits at most until `deadline`.
class FifoSource final : public RecordSource {
 public:
  FifoSource(FifoReader& reader, TimePoint deadline, const AliveCheck& alive)
      : reader_(reader), deadline_(deadline), alive_(alive) {}
  Result<std::optional<std::string>> readLine(std::size_t maxBytes) override {
    return reader_.readLine(maxBytes, deadline_, alive_);
  }
  Result<std::string> readExact(std::size_t n) override {
    return reader_.readExact(n, deadline_, alive_);
  }

 private:
  FifoReader& reader_;
  TimePoint deadline_;
  const AliveCheck& alive_;
};

}  // namespace

InteractiveChannel::InteractiveChannel(std::unique_ptr<State> state) : state_(std::move(state)) {}
InteractiveChannel::InteractiveChannel(InteractiveChannel&&) noexcept = default;
InteractiveChannel& InteractiveChannel::operator=(InteractiveChannel&&) noexcept = default;
InteractiveChannel::~InteractiveChannel() = default;

Result<InteractiveChannel> InteractiveChannel::create(const std::filesystem::path& directory,
                                                      const std::string& baseName,
                                                      ChannelOptions options) {
  if (baseName.empty() || baseName.find('/') != std::string::npos) {
    return invalidArgument("channel base name " + shown(baseName) +
                           " must be a non-empty file name without '/'");
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(directory, ec)) {
    return notFound("channel directory " + directory.string() + " does not exist");
  }
  auto state = std::make_unique<State>();
  state->base = directory / baseName;
  state->options = options;
  state->inName = state->in().string();
  KILN_RETURN_IF_ERROR(makeFifo(state->in()));
  state->inCreated = true;
  KILN_RETURN_IF_ERROR(makeFifo(state->out()));
  state->outCreated = true;
  return InteractiveChannel(std::move(state));
}

const std::filesystem::path& InteractiveChannel::basePath() const { return state_->base; }
std::filesystem::path InteractiveChannel::inPath() const { return state_->in(); }
std::filesystem::path InteractiveChannel::outPath() const { return state_->out(); }
bool InteractiveChannel::connected() const { return state_ && state_->reader.has_value(); }
const ChannelHeader& InteractiveChannel::header() const { return state_->reader->header(); }
bool InteractiveChannel::awaitingAdvice() const { return state_->pendingAdvice; }

Status InteractiveChannel::connect(TimePoint deadline, const AliveCheck& alive) {
  State& s = *state_;
  if (s.reader || s.advice.valid()) return invalidArgument("the channel is already connected");
  // The read end first: a non-blocking read open never waits, and holding it
  // lets a compiler that opens BASE.out before BASE.in proceed too. LLVM 19
  // opens BASE.in (read) first, which the write open below then satisfies.
  KILN_ASSIGN_OR_RETURN(UniqueFd outFd, openFifoForReading(s.out()));
  s.records = FifoReader(std::move(outFd));
  KILN_ASSIGN_OR_RETURN(s.advice, openFifoForWriting(s.in(), deadline, alive));

  FifoSource source(s.records, deadline, alive);
  KILN_ASSIGN_OR_RETURN(ChannelHeader header, readHeader(source, s.options.limits));
  s.reader.emplace(std::move(header), s.options.maxLineBytes);
  return okStatus();
}

Result<std::optional<Observation>> InteractiveChannel::next(TimePoint deadline,
                                                            const AliveCheck& alive) {
  State& s = *state_;
  if (!s.reader) return invalidArgument("next() before connect()");
  if (s.pendingAdvice) {
    return invalidArgument("the previous observation has not been answered; call sendAdvice first");
  }
  if (s.ended) return std::optional<Observation>();
  if (s.taken) {
    s.pendingAdvice = true;
    return std::exchange(s.taken, std::nullopt);
  }
  FifoSource source(s.records, deadline, alive);
  KILN_ASSIGN_OR_RETURN(std::optional<Observation> observation, s.reader->next(source));
  if (!observation) {
    s.ended = true;
  } else {
    s.pendingAdvice = true;
  }
  return observation;
}

Status InteractiveChannel::sendAdvice(const Value& advice, TimePoint deadline,
                                      const AliveCheck& alive) {
  if (!state_->reader) return invalidArgument("sendAdvice() before connect()");
  KILN_ASSIGN_OR_RETURN(std::string bytes, encodeTensor(header().advice, advice));
  return sendAdviceBytes(bytes, deadline, alive);
}

Status InteractiveChannel::sendAdviceBytes(std::string_view bytes, TimePoint deadline,
                                           const AliveCheck& alive) {
  State& s = *state_;
  if (!s.reader) return invalidArgument("sendAdvice() before connect()");
  if (!s.pendingAdvice) return invalidArgument("no observation is waiting for advice");
  const FeatureSpec& advice = s.reader->header().advice;
  if (bytes.size() != advice.byteSize) {
    return invalidArgument("advice \"" + advice.name + "\" must be exactly " +
                           std::to_string(advice.byteSize) + " bytes, got " +
                           std::to_string(bytes.size()));
  }
  if (!s.advice.valid()) return invalidArgument("the channel is closed");
  // Once some bytes may have gone out the record cannot be retried: stay "answered".
  s.pendingAdvice = false;
  return writeAll(s.advice.get(), bytes, deadline, alive, s.inName);
}

Result<RecordReadiness> InteractiveChannel::nextReadiness() {
  State& s = *state_;
  if (!connected()) return invalidArgument("nextReadiness() before connect()");
  if (s.pendingAdvice) {
    return invalidArgument("the previous observation has not been answered; call sendAdvice first");
  }
  if (s.taken) return RecordReadiness::kObservation;
  if (s.ended || !s.records.open()) return RecordReadiness::kOther;
  // One observation's worth per call bounds the work; the rest waits for the next call.
  std::size_t budget = s.reader->observationBytes() + s.options.maxLineBytes + 1;
  KILN_ASSIGN_OR_RETURN(bool open, s.records.readAvailable(budget));
  // A whole observation is taken now, parsed once, for next() to hand out.
  BufferedObservation buffered = s.reader->takeBuffered(s.records.buffered(), !open);
  if (buffered.observation) {
    s.records.consume(buffered.consumed);
    s.taken = std::move(buffered.observation);
  }
  return buffered.readiness;
}

int InteractiveChannel::observationFd() const { return state_ ? state_->records.fd() : -1; }

void InteractiveChannel::close() {
  if (!state_) return;
  state_->advice.reset();
  state_->records.close();
}

}  // namespace kiln::mlgo_channel
