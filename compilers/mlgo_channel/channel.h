// The host end of LLVM's interactive model runner channel (two FIFOs).
// Sequence on BASE.out: header JSON line; then any mix of {"context":NAME}
// lines and {"observation":N} lines, each observation followed by the raw bytes
// of every feature in header order and a '\n'; EOF ends the episode. After each
// observation the host writes exactly the advice tensor's bytes to BASE.in.
// The stream's parsing lives in compilers/mlgo_channel/record_stream.h; this owns the FIFOs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <kiln/clock.h>
#include <kiln/status.h>
#include <kiln/value.h>
#include "compilers/mlgo_channel/channel_header.h"
#include "compilers/mlgo_channel/fifo.h"
#include "compilers/mlgo_channel/record_ready.h"
#include "compilers/mlgo_channel/record_stream.h"

namespace kiln::mlgo_channel {

struct ChannelOptions {
  HeaderLimits limits;
  std::size_t maxLineBytes = 64 << 10;  // context and observation lines (long C++ names)
};

// Owns BASE.in and BASE.out in a directory. Errors: a timeout when a deadline
// passes, disconnected when the compiler goes away (EOF inside a record, dead
// process, closed advice pipe), compile-error when it sends something that is
// not the protocol, invalid-argument when the caller breaks the sequence.
class InteractiveChannel {
 public:
  // Creates DIR/BASE.in and DIR/BASE.out as FIFOs (fails if either exists).
  static Result<InteractiveChannel> create(const std::filesystem::path& directory,
                                           const std::string& baseName,
                                           ChannelOptions options = {});

  InteractiveChannel(InteractiveChannel&&) noexcept;
  InteractiveChannel& operator=(InteractiveChannel&&) noexcept;
  ~InteractiveChannel();  // closes both ends and removes both FIFOs

  // DIR/BASE: the value of LLVM's -*-interactive-channel-base flag.
  const std::filesystem::path& basePath() const;
  std::filesystem::path inPath() const;   // host writes advice here
  std::filesystem::path outPath() const;  // host reads observations here

  // Opens both ends and reads the header. Call once, after starting the compiler.
  Status connect(TimePoint deadline, const AliveCheck& alive = {});
  bool connected() const;
  const ChannelHeader& header() const;  // valid after connect()

  // The next observation, or nullopt when the compiler closed its output at a
  // record boundary (the episode ended). The previous one must be answered first.
  Result<std::optional<Observation>> next(TimePoint deadline, const AliveCheck& alive = {});
  bool awaitingAdvice() const;
  // Never waits: reads what the compiler has written so far and says whether
  // next() can now return an observation without waiting (kObservation; it
  // is parsed here, once, and next() hands it out).
  // The fd to poll for more is observationFd() (valid after connect()).
  Result<RecordReadiness> nextReadiness();
  int observationFd() const;

  // Answers the pending observation with exactly header().advice.byteSize bytes.
  // A value of the wrong type or size is rejected before anything is written.
  Status sendAdvice(const Value& advice, TimePoint deadline, const AliveCheck& alive = {});
  Status sendAdviceBytes(std::string_view bytes, TimePoint deadline, const AliveCheck& alive = {});

  // Closes both ends (the compiler sees EOF / EPIPE); the FIFOs stay until destruction.
  void close();

 private:
  struct State;
  explicit InteractiveChannel(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace kiln::mlgo_channel
