// A client's secret or an experiment's key as a plain value (common/security/identity.h
// has what servers do with them); no Cap'n Proto here, so that public headers
// such as include/kiln/client/client.h can hold one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <kiln/status.h>

namespace kiln {

inline constexpr std::size_t kSecretBytes = 16;

// 16 bytes from the OS's random source: a client's secret or an experiment key.
class Secret {
 public:
  Secret() = default;  // empty: no secret
  static Secret draw();
  // 32 hexadecimal digits, as users pass experiment keys around.
  static Result<Secret> fromHex(std::string_view text);
  // Exactly kSecretBytes raw bytes, or an error naming `what`.
  static Result<Secret> fromBytes(std::string_view bytes, std::string_view what);

  bool empty() const { return !set_; }
  std::string hex() const;
  std::string_view bytes() const;

 private:
  std::array<std::uint8_t, kSecretBytes> bytes_{};
  bool set_ = false;
};

}  // namespace kiln
