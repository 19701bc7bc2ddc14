// Who a request comes from and what it may touch, taken from secrets the
// sender holds, never from names it writes (docs/security.md):
//   - a client draws a 16-byte secret (Envelope.clientSecret) when it starts;
//     servers know it by clientIdOf(secret), a hash, so claiming another
//     client's id means finding a preimage;
//   - only the coordinator sees that secret; a worker the coordinator placed
//     the client on sees (clientId, clientPass): the pass is a MAC of the id
//     under a key that worker drew and told only the coordinator
//     (RegisterWorker.passKey), so it is good on that worker alone, and a
//     worker that captures it cannot act as the client anywhere else;
//   - the coordinator issues each experiment a 16-byte key when it is opened
//     (Envelope.experimentKey) and keeps only its digest; only the
//     coordinator sees the key. A nesting host sees the experiment's pass
//     for itself (Envelope.experimentPass): a MAC of the host's endpoint
//     under the key's digest, which the coordinator gives the host with each
//     worker it creates there (UnderlyingSpec.experimentPass) and the client
//     derives from its key, so it is good on that host alone;
//   - a worker or nesting host registers with the operator's token
//     (RegisterWorker.token, --worker-token-file) where the coordinator has one.
// Hashing is BLAKE2b, passes SipHash-2-4 (libsodium); comparisons take
// constant time.
#pragma once

#include <capnp/blob.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <kiln/ids.h>
#include <kiln/secret.h>
#include <kiln/status.h>
#include "schema/kiln.capnp.h"

namespace kiln {

inline constexpr std::size_t kKeyDigestBytes = 32;
inline constexpr std::size_t kPassKeyBytes = 16;
inline constexpr std::size_t kClientPassBytes = 16;
inline constexpr std::size_t kExperimentPassBytes = 32;

// The key a worker process's client passes are made with: drawn when the
// process starts, sent only to its coordinator (RegisterWorker.passKey). A
// default PassKey is none: no pass is good with it.
class PassKey {
 public:
  PassKey() = default;
  static PassKey draw();
  // Exactly kPassKeyBytes, or an error that says so.
  static Result<PassKey> fromWire(capnp::Data::Reader bytes);
  bool empty() const { return !set_; }
  capnp::Data::Reader wire() const { return {bytes_.data(), bytes_.size()}; }
  const std::uint8_t* data() const { return bytes_.data(); }

 private:
  std::array<std::uint8_t, kPassKeyBytes> bytes_{};
  bool set_ = false;
};

using ClientPass = std::array<std::uint8_t, kClientPassBytes>;

// The pass of `client` on the worker that holds `key`: SipHash-2-4 with a
// 128-bit tag (libsodium's crypto_shorthash_siphashx24), a MAC made for
// short inputs such as this 8-byte id, several times faster than a keyed
// BLAKE2b on the step path.
ClientPass clientPass(const PassKey& key, ClientId client);

// A secret as the wire carries it (Envelope.clientSecret, experimentKey).
inline capnp::Data::Reader wireBytes(const Secret& secret) {
  const std::string_view bytes = secret.bytes();
  return {reinterpret_cast<const capnp::byte*>(bytes.data()), bytes.size()};
}

// The id servers know a client by: a hash of its secret (never 0). An
// envelope without a well-formed secret has no client (ClientId{0}).
ClientId clientIdOf(capnp::Data::Reader secret);

// Who an envelope speaks for at a server whose passes are made with `key`:
// the hash of its secret, else its clientId when its clientPass is that
// id's pass under `key`, else no client (ClientId{0}).
ClientId clientOf(wire::Envelope::Reader envelope, const PassKey& key);

// clientOf with the last secret and the last pass remembered: a server's
// requests mostly come from the client that sent the one before, and a hash
// is ~0.5 us of a ~5 us same-host step. What is remembered is compared in
// constant time, so a request's timing says nothing about another client's
// secret or pass.
class ClientIdMemo {
 public:
  explicit ClientIdMemo(PassKey key = {}) : key_(key) {}
  ClientId of(wire::Envelope::Reader envelope);

 private:
  ClientId ofSecret(capnp::Data::Reader secret);
  ClientId ofPass(std::uint64_t claimed, capnp::Data::Reader pass);

  PassKey key_;
  std::array<std::uint8_t, kSecretBytes> lastSecret_{};
  ClientId lastSecretId_{0};  // 0 while nothing is remembered
  ClientPass lastPass_{};
  ClientId lastPassId_{0};
};

// The answer to a request that needs a client and carries no secret, or a
// pass that is not this server's.
Status anonymousClient();

// Whether `presented` is the registration token `token` (constant time;
// false when either is empty).
bool tokenMatches(capnp::Data::Reader presented, const Secret& token);

// The digest servers store for an experiment key (kKeyDigestBytes raw bytes).
std::string keyDigest(std::string_view key);

// Whether `presented` is the key of `digest`. False when either is empty.
bool keyMatches(capnp::Data::Reader presented, std::string_view digest);

// An experiment's pass on the nesting host whose advertised endpoint is
// `hostEndpoint`: BLAKE2b-256 of the endpoint keyed with the digest of the
// experiment's key (kExperimentPassBytes raw bytes). The coordinator makes
// it from the digest it keeps; a client from its key (experimentPassOf).
// A host that captures its own learns neither the key nor the digest, so it
// cannot make the pass of another host or open the experiment's door at
// the coordinator.
std::string experimentPass(std::string_view keyDigest, std::string_view hostEndpoint);
std::string experimentPassOf(const Secret& key, std::string_view hostEndpoint);

// Whether `presented` is `pass` (constant time). False when either is empty.
bool passMatches(capnp::Data::Reader presented, std::string_view pass);

}  // namespace kiln
