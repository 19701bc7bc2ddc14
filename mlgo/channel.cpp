// Record framing of the channel. The control lines are parsed with llvm::json
// like the header; tensor bytes are read in one bounded block per record.
#include "mlgo/channel.h"

#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>

#include <system_error>

#include "mlgo/tensor_codec.h"

namespace kiln::mlgo {

struct InteractiveChannel::State {
  std::filesystem::path base;
  ChannelOptions options;
  bool inCreated = false;
  bool outCreated = false;
  UniqueFd advice;     // write end of BASE.in
  FifoReader records;  // read end of BASE.out
  std::optional<ChannelHeader> header;
  std::string context;
  bool pendingAdvice = false;
  bool ended = false;

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

Status protocolError(const std::string& what) {
  return compileError("the compiler broke the MLGO channel protocol: " + what);
}

std::string shown(std::string_view text) {
  constexpr std::size_t kShown = 80;
  std::string visible(text.substr(0, kShown));
  for (char& c : visible) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  }
  return "\"" + visible + (text.size() > kShown ? "...\"" : "\"");
}

// A control line is a one-key object: {"context":S}, {"observation":N} or {"outcome":N}.
struct ControlLine {
  std::string key;
  std::optional<std::string> text;
  std::optional<std::int64_t> number;
};

Result<ControlLine> parseControlLine(const std::string& line) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(line);
  if (!parsed) {
    return protocolError("expected a JSON record line, got " + shown(line) + " (" +
                         llvm::toString(parsed.takeError()) + ")");
  }
  const llvm::json::Object* object = parsed->getAsObject();
  if (object == nullptr || object->size() != 1) {
    return protocolError("expected a one-field JSON object, got " + shown(line));
  }
  const auto& [key, value] = *object->begin();
  ControlLine control{key.str(), std::nullopt, value.getAsInteger()};
  if (auto text = value.getAsString()) control.text = text->str();
  return control;
}

}  // namespace

const Value* findFeature(const ChannelHeader& header, const Observation& observation,
                         std::string_view name) {
  std::optional<std::size_t> index = header.featureIndex(name);
  if (!index || *index >= observation.features.size()) return nullptr;
  return &observation.features[*index];
}

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
  KILN_RETURN_IF_ERROR(makeFifo(state->in()));
  state->inCreated = true;
  KILN_RETURN_IF_ERROR(makeFifo(state->out()));
  state->outCreated = true;
  return InteractiveChannel(std::move(state));
}

const std::filesystem::path& InteractiveChannel::basePath() const { return state_->base; }
std::filesystem::path InteractiveChannel::inPath() const { return state_->in(); }
std::filesystem::path InteractiveChannel::outPath() const { return state_->out(); }
bool InteractiveChannel::connected() const { return state_ && state_->header.has_value(); }
const ChannelHeader& InteractiveChannel::header() const { return *state_->header; }
bool InteractiveChannel::awaitingAdvice() const { return state_->pendingAdvice; }

Status InteractiveChannel::connect(TimePoint deadline, const AliveCheck& alive) {
  State& s = *state_;
  if (s.header || s.advice.valid()) return invalidArgument("the channel is already connected");
  // The read end first: a non-blocking read open never waits, and holding it
  // lets a compiler that opens BASE.out before BASE.in proceed too. LLVM 19
  // opens BASE.in (read) first, which the write open below then satisfies.
  KILN_ASSIGN_OR_RETURN(UniqueFd outFd, openFifoForReading(s.out()));
  s.records = FifoReader(std::move(outFd));
  KILN_ASSIGN_OR_RETURN(s.advice, openFifoForWriting(s.in(), deadline, alive));

  KILN_ASSIGN_OR_RETURN(std::optional<std::string> line,
                        s.records.readLine(s.options.limits.maxHeaderBytes, deadline, alive));
  if (!line) return disconnected("the compiler closed its output before sending the header");
  Result<ChannelHeader> header = parseHeader(*line, s.options.limits);
  if (!header.ok()) return protocolError("bad header: " + header.status().message());
  s.header = std::move(header).value();
  return okStatus();
}

Result<std::optional<Observation>> InteractiveChannel::next(TimePoint deadline,
                                                            const AliveCheck& alive) {
  State& s = *state_;
  if (!s.header) return invalidArgument("next() before connect()");
  if (s.pendingAdvice) {
    return invalidArgument("the previous observation has not been answered; call sendAdvice first");
  }
  if (s.ended) return std::optional<Observation>();
  while (true) {
    KILN_ASSIGN_OR_RETURN(std::optional<std::string> line,
                          s.records.readLine(s.options.maxLineBytes, deadline, alive));
    if (!line) {
      s.ended = true;
      return std::optional<Observation>();
    }
    KILN_ASSIGN_OR_RETURN(ControlLine control, parseControlLine(*line));
    if (control.key == "context" && control.text) {
      s.context = *control.text;
      continue;
    }
    const bool isObservation = control.key == "observation";
    if (!(isObservation || (control.key == "outcome" && s.header->score)) || !control.number) {
      return protocolError("unexpected record line " + shown(*line));
    }
    // Observations carry every feature; outcomes (reward logging) carry the score.
    std::size_t bytes = isObservation ? s.header->observationBytes() : s.header->score->byteSize;
    KILN_ASSIGN_OR_RETURN(std::string data, s.records.readExact(bytes + 1, deadline, alive));
    if (data.back() != '\n') {
      return protocolError("record " + shown(*line) + " is not followed by exactly " +
                           std::to_string(bytes) + " tensor bytes and a newline");
    }
    if (!isObservation) continue;
    Observation observation;
    observation.index = *control.number;
    observation.context = s.context;
    observation.features.reserve(s.header->features.size());
    std::size_t offset = 0;
    for (const FeatureSpec& spec : s.header->features) {
      KILN_ASSIGN_OR_RETURN(
          Value value, decodeTensor(spec, std::string_view(data).substr(offset, spec.byteSize)));
      observation.features.push_back(std::move(value));
      offset += spec.byteSize;
    }
    s.pendingAdvice = true;
    return std::optional<Observation>(std::move(observation));
  }
}

Status InteractiveChannel::sendAdvice(const Value& advice, TimePoint deadline,
                                      const AliveCheck& alive) {
  if (!state_->header) return invalidArgument("sendAdvice() before connect()");
  KILN_ASSIGN_OR_RETURN(std::string bytes, encodeTensor(state_->header->advice, advice));
  return sendAdviceBytes(bytes, deadline, alive);
}

Status InteractiveChannel::sendAdviceBytes(std::string_view bytes, TimePoint deadline,
                                           const AliveCheck& alive) {
  State& s = *state_;
  if (!s.header) return invalidArgument("sendAdvice() before connect()");
  if (!s.pendingAdvice) return invalidArgument("no observation is waiting for advice");
  if (bytes.size() != s.header->advice.byteSize) {
    return invalidArgument("advice \"" + s.header->advice.name + "\" must be exactly " +
                           std::to_string(s.header->advice.byteSize) + " bytes, got " +
                           std::to_string(bytes.size()));
  }
  if (!s.advice.valid()) return invalidArgument("the channel is closed");
  // Once some bytes may have gone out the record cannot be retried: stay "answered".
  s.pendingAdvice = false;
  return writeAll(s.advice.get(), bytes, deadline, alive, s.in().string());
}

void InteractiveChannel::close() {
  if (!state_) return;
  state_->advice.reset();
  state_->records.close();
}

}  // namespace kiln::mlgo
