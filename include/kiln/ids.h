// Strong ids, so a session id cannot be passed where a worker id is expected.
// Session ids are drawn at random so that they cannot be guessed by a peer.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>

namespace kiln {

template <class Tag>
struct Id {
  std::uint64_t value = 0;
  bool valid() const { return value != 0; }
  auto operator<=>(const Id&) const = default;
};

using SessionId = Id<struct SessionTag>;
using WorkerId = Id<struct WorkerTag>;
using ClientId = Id<struct ClientTag>;

// Draws non-zero 64-bit ids. Seeded from the OS so ids differ across processes.
class RandomIds {
 public:
  RandomIds() : engine_(seed()) {}
  explicit RandomIds(std::uint64_t fixedSeed) : engine_(fixedSeed) {}
  std::uint64_t next() {
    std::uint64_t v;
    do {
      v = engine_();
    } while (v == 0);
    return v;
  }

 private:
  static std::uint64_t seed() {
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
  }
  std::mt19937_64 engine_;
};

}  // namespace kiln

template <class Tag>
struct std::hash<kiln::Id<Tag>> {
  std::size_t operator()(const kiln::Id<Tag>& id) const noexcept {
    return std::hash<std::uint64_t>{}(id.value);
  }
};
