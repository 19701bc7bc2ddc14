// Who a request comes from and what it may touch, taken from secrets the
// sender holds, never from names it writes (docs/security.md):
//   - a client draws a 16-byte secret (Envelope.clientSecret) when it starts;
//     servers know it by clientIdOf(secret), a hash, so claiming another
//     client's id means finding a preimage;
//   - the coordinator issues each experiment a 16-byte key when it is opened
//     (Envelope.experimentKey); servers keep only its digest
//     (UnderlyingSpec.keyDigest) and check presented keys against it.
// Hashing is BLAKE2b (libsodium); comparisons take constant time.
#pragma once

#include <capnp/blob.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/ids.h"
#include "common/secret.h"
#include "common/status.h"

namespace kiln {

inline constexpr std::size_t kKeyDigestBytes = 32;

// A secret as the wire carries it (Envelope.clientSecret, experimentKey).
inline capnp::Data::Reader wireBytes(const Secret& secret) {
  const std::string_view bytes = secret.bytes();
  return {reinterpret_cast<const capnp::byte*>(bytes.data()), bytes.size()};
}

// The id servers know a client by: a hash of its secret (never 0). An
// envelope without a well-formed secret has no client (ClientId{0}).
ClientId clientIdOf(capnp::Data::Reader secret);

// clientIdOf with the last secret remembered: a server's requests mostly
// come from the client that sent the one before, and the hash is ~0.5 us of
// a ~5 us same-host step. The remembered secret is compared in constant
// time, so a request's timing says nothing about another client's secret.
class ClientIdMemo {
 public:
  ClientId of(capnp::Data::Reader secret);

 private:
  std::array<std::uint8_t, kSecretBytes> last_{};
  ClientId lastId_{0};  // 0 while nothing is remembered
};

// The answer to a request that needs a client and carries no secret.
Status anonymousClient();

// The digest servers store for an experiment key (kKeyDigestBytes raw bytes).
std::string keyDigest(std::string_view key);

// Whether `presented` is the key of `digest`. False when either is empty.
bool keyMatches(capnp::Data::Reader presented, std::string_view digest);

}  // namespace kiln
