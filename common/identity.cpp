#include "common/identity.h"

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

ClientId ClientIdMemo::of(capnp::Data::Reader secret) {
  if (secret.size() != kSecretBytes) return ClientId{0};
  if (lastId_.valid() && sodium_memcmp(secret.begin(), last_.data(), kSecretBytes) == 0) {
    return lastId_;
  }
  lastId_ = clientIdOf(secret);
  std::memcpy(last_.data(), secret.begin(), kSecretBytes);
  return lastId_;
}

Status anonymousClient() {
  return invalidArgument(fmt::format(
      "this request needs a client: Envelope.clientSecret must hold {} random bytes, drawn once "
      "per client (kiln's C++ and Python clients do this)",
      kSecretBytes));
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

}  // namespace kiln
