#include "common/security/identity.h"

#include <fmt/format.h>
#include <sodium.h>

#include <cstring>
#include <stdexcept>

namespace kiln {

namespace {

// sodium_init() is idempotent and thread-safe; every entry point calls it so
// that no caller has to remember (there is no process-wide setup in kiln).
void ensureSodium() {
  if (sodium_init() < 0) throw std::runtime_error("libsodium cannot initialize");
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Secret Secret::draw() {
  ensureSodium();
  Secret secret;
  randombytes_buf(secret.bytes_.data(), secret.bytes_.size());
  secret.set_ = true;
  return secret;
}

Result<Secret> Secret::fromHex(std::string_view text) {
  if (text.size() != 2 * kSecretBytes) {
    return invalidArgument(
        fmt::format("an experiment key is {} hexadecimal digits, got {} characters",
                    2 * kSecretBytes, text.size()));
  }
  Secret secret;
  for (std::size_t i = 0; i < kSecretBytes; ++i) {
    int high = hexDigit(text[2 * i]);
    int low = hexDigit(text[2 * i + 1]);
    if (high < 0 || low < 0) {
      return invalidArgument("an experiment key holds only hexadecimal digits (0-9, a-f)");
    }
    secret.bytes_[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  secret.set_ = true;
  return secret;
}

Result<Secret> Secret::fromBytes(std::string_view bytes, std::string_view what) {
  if (bytes.size() != kSecretBytes) {
    return invalidArgument(
        fmt::format("{} must be {} bytes, got {}", what, kSecretBytes, bytes.size()));
  }
  Secret secret;
  std::memcpy(secret.bytes_.data(), bytes.data(), kSecretBytes);
  secret.set_ = true;
  return secret;
}

std::string Secret::hex() const {
  if (!set_) return {};
  std::string out;
  out.reserve(2 * kSecretBytes);
  for (std::uint8_t byte : bytes_) out += fmt::format("{:02x}", byte);
  return out;
}

std::string_view Secret::bytes() const {
  if (!set_) return {};
  return {reinterpret_cast<const char*>(bytes_.data()), bytes_.size()};
}

ClientId clientIdOf(capnp::Data::Reader secret) {
  if (secret.size() != kSecretBytes) return ClientId{0};
  ensureSodium();
  std::uint64_t id = 0;
  crypto_generichash(reinterpret_cast<unsigned char*>(&id), sizeof(id), secret.begin(),
                     secret.size(), nullptr, 0);
  return ClientId{id == 0 ? 1 : id};
}

PassKey PassKey::draw() {
  ensureSodium();
  PassKey key;
  randombytes_buf(key.bytes_.data(), key.bytes_.size());
  key.set_ = true;
  return key;
}

Result<PassKey> PassKey::fromWire(capnp::Data::Reader bytes) {
  if (bytes.size() != kPassKeyBytes) {
    return invalidArgument(
        fmt::format("a worker's pass key is {} random bytes, got {}", kPassKeyBytes, bytes.size()));
  }
  PassKey key;
  std::memcpy(key.bytes_.data(), bytes.begin(), kPassKeyBytes);
  key.set_ = true;
  return key;
}

ClientPass clientPass(const PassKey& key, ClientId client) {
  ensureSodium();
  ClientPass pass{};
  const std::uint64_t id = client.value;
  static_assert(kClientPassBytes == crypto_shorthash_siphashx24_BYTES &&
                kPassKeyBytes == crypto_shorthash_siphashx24_KEYBYTES);
  crypto_shorthash_siphashx24(pass.data(), reinterpret_cast<const unsigned char*>(&id), sizeof(id),
                              key.data());
  return pass;
}

namespace {

// Whether `pass` is the pass of `claimed` under `key` (never with no key).
bool passMatches(const PassKey& key, std::uint64_t claimed, capnp::Data::Reader pass) {
  if (key.empty() || claimed == 0 || pass.size() != kClientPassBytes) return false;
  const ClientPass expected = clientPass(key, ClientId{claimed});
  return sodium_memcmp(expected.data(), pass.begin(), kClientPassBytes) == 0;
}

}  // namespace

ClientId clientOf(wire::Envelope::Reader envelope, const PassKey& key) {
  if (envelope.hasClientSecret()) return clientIdOf(envelope.getClientSecret());
  const std::uint64_t claimed = envelope.getClientId();
  return passMatches(key, claimed, envelope.getClientPass()) ? ClientId{claimed} : ClientId{0};
}

ClientId ClientIdMemo::of(wire::Envelope::Reader envelope) {
  if (envelope.hasClientSecret()) return ofSecret(envelope.getClientSecret());
  return ofPass(envelope.getClientId(), envelope.getClientPass());
}

ClientId ClientIdMemo::ofSecret(capnp::Data::Reader secret) {
  if (secret.size() != kSecretBytes) return ClientId{0};
  if (lastSecretId_.valid() &&
      sodium_memcmp(secret.begin(), lastSecret_.data(), kSecretBytes) == 0) {
    return lastSecretId_;
  }
  lastSecretId_ = clientIdOf(secret);
  std::memcpy(lastSecret_.data(), secret.begin(), kSecretBytes);
  return lastSecretId_;
}

ClientId ClientIdMemo::ofPass(std::uint64_t claimed, capnp::Data::Reader pass) {
  if (pass.size() != kClientPassBytes || claimed == 0) return ClientId{0};
  // The remembered pass was checked for lastPassId_: the same bytes for the
  // same id are good again. The id is no secret; the pass is compared in
  // constant time.
  if (lastPassId_.value == claimed &&
      sodium_memcmp(pass.begin(), lastPass_.data(), kClientPassBytes) == 0) {
    return lastPassId_;
  }
  if (!passMatches(key_, claimed, pass)) return ClientId{0};
  lastPassId_ = ClientId{claimed};
  std::memcpy(lastPass_.data(), pass.begin(), kClientPassBytes);
  return lastPassId_;
}

Status anonymousClient() {
  return invalidArgument(fmt::format(
      "this request needs a client: Envelope.clientSecret must hold {} random bytes, drawn once "
      "per client (kiln's C++ and Python clients do this), or, on a worker the coordinator placed "
      "the client on, Envelope.clientId with the clientPass of that placement (a pass made for "
      "another worker is good only there: ask the coordinator for a placement here)",
      kSecretBytes));
}

bool tokenMatches(capnp::Data::Reader presented, const Secret& token) {
  if (token.empty() || presented.size() == 0) return false;
  // Digests of both: equal lengths, and a comparison in constant time that
  // says nothing about the token's length.
  const std::string want = keyDigest(token.bytes());
  const std::string got =
      keyDigest({reinterpret_cast<const char*>(presented.begin()), presented.size()});
  return sodium_memcmp(want.data(), got.data(), kKeyDigestBytes) == 0;
}

std::string keyDigest(std::string_view key) {
  ensureSodium();
  std::string digest(kKeyDigestBytes, '\0');
  crypto_generichash(reinterpret_cast<unsigned char*>(digest.data()), digest.size(),
                     reinterpret_cast<const unsigned char*>(key.data()), key.size(), nullptr, 0);
  return digest;
}

bool keyMatches(capnp::Data::Reader presented, std::string_view digest) {
  if (presented.size() != kSecretBytes || digest.size() != kKeyDigestBytes) return false;
  std::string computed =
      keyDigest({reinterpret_cast<const char*>(presented.begin()), presented.size()});
  return sodium_memcmp(computed.data(), digest.data(), kKeyDigestBytes) == 0;
}

std::string experimentPass(std::string_view keyDigest, std::string_view hostEndpoint) {
  ensureSodium();
  // A domain tag keeps the pass apart from any other keyed hash of a digest.
  static constexpr std::string_view kDomain = "kiln experiment pass on host\n";
  std::string pass(kExperimentPassBytes, '\0');
  crypto_generichash_state state;
  crypto_generichash_init(&state, reinterpret_cast<const unsigned char*>(keyDigest.data()),
                          keyDigest.size(), pass.size());
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(kDomain.data()),
                            kDomain.size());
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(hostEndpoint.data()),
                            hostEndpoint.size());
  crypto_generichash_final(&state, reinterpret_cast<unsigned char*>(pass.data()), pass.size());
  return pass;
}

std::string experimentPassOf(const Secret& key, std::string_view hostEndpoint) {
  return experimentPass(keyDigest(key.bytes()), hostEndpoint);
}

bool passMatches(capnp::Data::Reader presented, std::string_view pass) {
  if (presented.size() != kExperimentPassBytes || pass.size() != kExperimentPassBytes) {
    return false;
  }
  return sodium_memcmp(presented.begin(), pass.data(), kExperimentPassBytes) == 0;
}

}  // namespace kiln
