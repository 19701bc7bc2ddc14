// Client secrets and experiment keys for tests that build envelopes by hand:
// client n's secret holds n in its first 8 bytes (0 = no secret), so that a
// test can speak as several clients, or as a client that claims another's id.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "common/security/identity.h"
#include "schema/kiln.capnp.h"

namespace kiln::testsupport {

inline std::string testSecret(std::uint64_t n) {
  if (n == 0) return {};
  std::string secret(kSecretBytes, '\0');
  std::memcpy(secret.data(), &n, sizeof(n));
  return secret;
}

inline capnp::Data::Reader asData(const std::string& bytes) {
  return {reinterpret_cast<const kj::byte*>(bytes.data()), bytes.size()};
}

inline void setTestClient(wire::Envelope::Builder envelope, std::uint64_t n) {
  envelope.setClientSecret(asData(testSecret(n)));
}

// The id a server derives for client n.
inline ClientId testClientId(std::uint64_t n) {
  std::string secret = testSecret(n);
  return clientIdOf(asData(secret));
}

}  // namespace kiln::testsupport
