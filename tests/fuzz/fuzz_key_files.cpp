// The CURVE key files an operator hands to every kiln process
// (include/kiln/curve_keys.h): the cluster key file (`parseKeyFile`, what
// `loadKeyFile` reads) and the authorized-keys list (`parseAuthorizedKeys`,
// what `loadAuthorizedKeys` reads). The first input byte picks the parser,
// the rest is the file's text. Properties checked: a refusal is
// invalid-argument naming the file; every key accepted is 40 characters of
// the Z85 alphabet that decode to 32 bytes and encode back to the same text
// (checked here without the parser's own helpers); an accepted key pair
// belongs together and survives formatKeyFile; an accepted list survives
// being written back one key per line.
#include <zmq.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <kiln/curve_keys.h>

namespace {

constexpr std::string_view kOrigin = "fuzzed.key";
constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_key_files: property violated: %s\n", what);
    std::abort();
  }
}

void requireRefusal(const kiln::Status& status) {
  require(status.code() == kiln::ErrorCode::kInvalidArgument, "a refusal is not invalid-argument");
  require(status.message().find(kOrigin) != std::string::npos, "a refusal does not name the file");
}

// The whole key, not just a prefix up to a NUL byte, is a Z85 key of 32 bytes.
void requireWholeKey(const std::string& key) {
  require(key.size() == 40, "an accepted key is not 40 characters long");
  require(key.find_first_not_of(kZ85Alphabet) == std::string::npos,
          "an accepted key has a character outside the Z85 alphabet");
  std::uint8_t binary[32] = {};
  require(zmq_z85_decode(binary, key.c_str()) != nullptr, "an accepted key does not decode");
  char text[41] = {};
  require(zmq_z85_encode(text, binary, sizeof(binary)) != nullptr, "a decoded key does not encode");
  require(key == text, "an accepted key does not encode back to itself");
}

void checkKeyFile(const std::string& text) {
  auto keys = kiln::parseKeyFile(text, std::string(kOrigin));
  if (!keys.ok()) return requireRefusal(keys.status());
  requireWholeKey(keys->publicKey);
  requireWholeKey(keys->secretKey);
  char derived[41] = {};
  require(zmq_curve_public(derived, keys->secretKey.c_str()) == 0 && keys->publicKey == derived,
          "an accepted public key does not belong to its secret key");
  auto again = kiln::parseKeyFile(kiln::formatKeyFile(*keys), std::string(kOrigin));
  require(again.ok() && again->publicKey == keys->publicKey && again->secretKey == keys->secretKey,
          "an accepted key pair does not survive formatKeyFile");
}

void checkAuthorizedKeys(const std::string& text) {
  auto keys = kiln::parseAuthorizedKeys(text, std::string(kOrigin));
  if (!keys.ok()) return requireRefusal(keys.status());
  std::string written;
  for (const std::string& key : *keys) {
    requireWholeKey(key);
    written += key + "\n";
  }
  auto again = kiln::parseAuthorizedKeys(written, std::string(kOrigin));
  require(again.ok() && *again == *keys, "an accepted list does not survive being written back");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > 16 * 1024) return 0;  // key files are a few hundred bytes
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    checkKeyFile(text);
  } else {
    checkAuthorizedKeys(text);
  }
  return 0;
}
