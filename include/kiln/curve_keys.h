// The cluster key: one CURVE key pair shared by every kiln process of a
// cluster (servers use it as their server key, clients and workers present
// it as their client key), so one secret file is all a deployment handles.
// `kiln keygen --out FILE` writes it; --key-file / ClientOptions::keys read
// it. Extra client public keys may be authorized in a separate file.
//
// Key file (text, mode 0600, lines starting with '#' ignored):
//   public-key = <40 Z85 characters>
//   secret-key = <40 Z85 characters>
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>

namespace zmq {
class socket_t;
}

namespace kiln {

struct ClusterKeys {
  std::string publicKey;  // Z85, 40 characters
  std::string secretKey;  // Z85, 40 characters
};

// Whether this libzmq can do CURVE (built with libsodium).
bool curveAvailable();

// Whether `key` is a CURVE key as Z85 text: exactly 40 characters of the Z85
// alphabet, decoding to 32 bytes. libzmq's decoder alone stops at the first
// NUL byte: it takes a NUL and 39 more bytes for a key and decodes nothing.
bool isZ85Key(std::string_view key);

Result<ClusterKeys> generateClusterKeys();

// The key file's text; and its parser (`origin` names the file in errors).
std::string formatKeyFile(const ClusterKeys& keys);
Result<ClusterKeys> parseKeyFile(const std::string& text, const std::string& origin);

// Writes a new key file with mode 0600; refuses to replace an existing file
// unless `replace` (then replaced atomically).
Status writeKeyFile(const std::filesystem::path& path, const ClusterKeys& keys, bool replace);
// Reads a key file, refusing one that other users may read or write.
Result<ClusterKeys> loadKeyFile(const std::filesystem::path& path);

// The text of a file of the operator's (key files, worker token files), or
// an error naming `what`. With `secret` (what it holds, for the message),
// a file other users may read or write is refused, with `remedy`.
Result<std::string> readOwnersFile(const std::filesystem::path& path, std::string_view what,
                                   std::string_view secret, std::string_view remedy);
// Writes `text` as a new file of mode 0600, never readable by others on the
// way; refuses to replace an existing file unless `replace` (then replaced
// atomically). An existing file left alone is an error that names --force.
Status writeOwnersFile(const std::filesystem::path& path, const std::string& text, bool replace);

// Public keys (Z85), one per line, '#' comments: clients allowed besides the
// cluster key. The file's text; and its parser (`origin` names the file in errors).
Result<std::vector<std::string>> parseAuthorizedKeys(const std::string& text,
                                                     const std::string& origin);
Result<std::vector<std::string>> loadAuthorizedKeys(const std::filesystem::path& path);

// Socket options, to set before bind()/connect().
void applyCurveServer(zmq::socket_t& socket, const ClusterKeys& keys, const std::string& domain);
void applyCurveClient(zmq::socket_t& socket, const ClusterKeys& keys);

// A client-side handshake failure reported by a ZeroMQ socket monitor
// (ZMQ_EVENT_HANDSHAKE_FAILED_*), turned into the error the caller sees.
// `value` is the event's value (status or protocol error code).
bool isHandshakeFailure(std::uint16_t event);
Status handshakeRefusal(std::uint16_t event, std::uint32_t value, const std::string& endpoint,
                        bool haveKeys);

}  // namespace kiln
