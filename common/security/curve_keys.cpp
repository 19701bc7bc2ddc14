#include <kiln/curve_keys.h>

#include <zmq.hpp>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kiln {

namespace {

constexpr std::size_t kZ85KeyLength = 40;

std::string trim(const std::string& text) {
  const char* space = " \t\r\n";
  std::size_t begin = text.find_first_not_of(space);
  if (begin == std::string::npos) return {};
  return text.substr(begin, text.find_last_not_of(space) - begin + 1);
}

Result<std::string> readPrivateText(const std::filesystem::path& path, bool mustBePrivate) {
  return readOwnersFile(path, "key file",
                        mustBePrivate ? "the cluster's secret key" : std::string_view(),
                        "(or make a new key with `kiln keygen`)");
}

}  // namespace

Result<std::string> readOwnersFile(const std::filesystem::path& path, std::string_view what,
                                   std::string_view secret, std::string_view remedy) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return invalidArgument(
        fmt::format("cannot read {} '{}': {}", what, path.string(), std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    return invalidArgument(fmt::format("{} '{}' is not a regular file", what, path.string()));
  }
  if (!secret.empty() && (info.st_mode & 077) != 0) {
    return invalidArgument(
        fmt::format("{} '{}' has mode {:04o}: other users may read {}; run `chmod 600 {}` {}", what,
                    path.string(), info.st_mode & 07777, secret, path.string(), remedy));
  }
  std::ifstream in(path);
  if (!in) {
    return invalidArgument(
        fmt::format("cannot read {} '{}': {}", what, path.string(), std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool curveAvailable() { return zmq_has("curve") != 0; }

bool isZ85Key(std::string_view key) {
  static constexpr std::string_view kAlphabet =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
  if (key.size() != kZ85KeyLength || key.find_first_not_of(kAlphabet) != std::string_view::npos) {
    return false;
  }
  std::uint8_t binary[32];
  return zmq_z85_decode(binary, std::string(key).c_str()) != nullptr;
}

Result<ClusterKeys> generateClusterKeys() {
  if (!curveAvailable()) {
    return unimplemented("this libzmq was built without CURVE (libsodium); no keys can be made");
  }
  char publicKey[kZ85KeyLength + 1];
  char secretKey[kZ85KeyLength + 1];
  if (zmq_curve_keypair(publicKey, secretKey) != 0) {
    return internalError(fmt::format("zmq_curve_keypair failed: {}", zmq_strerror(zmq_errno())));
  }
  return ClusterKeys{publicKey, secretKey};
}

std::string formatKeyFile(const ClusterKeys& keys) {
  return fmt::format(
      "# kiln cluster key (CURVE). Secret: anyone holding this file can join the cluster.\n"
      "# Give the same file to the coordinator, workers, nesting hosts and clients.\n"
      "public-key = {}\n"
      "secret-key = {}\n",
      keys.publicKey, keys.secretKey);
}

Result<ClusterKeys> parseKeyFile(const std::string& text, const std::string& origin) {
  ClusterKeys keys;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    std::size_t equals = line.find('=');
    if (equals == std::string::npos) {
      return invalidArgument(
          fmt::format("key file '{}' line {}: expected 'public-key = ...' or 'secret-key = ...'",
                      origin, number));
    }
    std::string name = trim(line.substr(0, equals));
    std::string value = trim(line.substr(equals + 1));
    std::string* slot = name == "public-key"   ? &keys.publicKey
                        : name == "secret-key" ? &keys.secretKey
                                               : nullptr;
    if (slot == nullptr) {
      return invalidArgument(
          fmt::format("key file '{}' line {}: unknown field '{}'", origin, number, name));
    }
    if (!isZ85Key(value)) {
      return invalidArgument(fmt::format("key file '{}' line {}: {} is not a 40-character Z85 key",
                                         origin, number, name));
    }
    *slot = value;
  }
  if (keys.publicKey.empty() || keys.secretKey.empty()) {
    return invalidArgument(
        fmt::format("key file '{}' lacks {}; make one with `kiln keygen --out FILE`", origin,
                    keys.publicKey.empty() ? "its public-key line" : "its secret-key line"));
  }
  char derived[kZ85KeyLength + 1];
  if (zmq_curve_public(derived, keys.secretKey.c_str()) != 0 || keys.publicKey != derived) {
    return invalidArgument(
        fmt::format("key file '{}': the public key does not belong to the secret key", origin));
  }
  return keys;
}

Status writeKeyFile(const std::filesystem::path& path, const ClusterKeys& keys, bool replace) {
  return writeOwnersFile(path, formatKeyFile(keys), replace);
}

Status writeOwnersFile(const std::filesystem::path& path, const std::string& text, bool replace) {
  // Written under a temporary name created 0600, then renamed: the secret is
  // never readable by others, and a reader never sees half a file.
  std::filesystem::path temporary = path;
  temporary += fmt::format(".tmp-{}", ::getpid());
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return invalidArgument(
        fmt::format("cannot create '{}': {}", temporary.string(), std::strerror(errno)));
  }
  bool written = ::fchmod(fd, 0600) == 0 &&
                 ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                 ::fsync(fd) == 0;
  int writeError = errno;
  ::close(fd);
  if (!written) {
    ::unlink(temporary.c_str());
    return invalidArgument(
        fmt::format("cannot write '{}': {}", temporary.string(), std::strerror(writeError)));
  }
  // link() fails on an existing file, which is what "do not replace" needs.
  int placed =
      replace ? ::rename(temporary.c_str(), path.c_str()) : ::link(temporary.c_str(), path.c_str());
  int placeError = errno;
  if (!replace || placed != 0) ::unlink(temporary.c_str());
  if (placed != 0) {
    if (placeError == EEXIST) {
      return invalidArgument(fmt::format(
          "'{}' exists; pass --force to replace it (every peer then needs the new file)",
          path.string()));
    }
    return invalidArgument(
        fmt::format("cannot write '{}': {}", path.string(), std::strerror(placeError)));
  }
  return okStatus();
}

Result<ClusterKeys> loadKeyFile(const std::filesystem::path& path) {
  if (!curveAvailable()) {
    return unimplemented("this libzmq was built without CURVE (libsodium); --key-file cannot work");
  }
  KILN_ASSIGN_OR_RETURN(std::string text, readPrivateText(path, true));
  return parseKeyFile(text, path.string());
}

Result<std::vector<std::string>> parseAuthorizedKeys(const std::string& text,
                                                     const std::string& origin) {
  std::vector<std::string> keys;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    if (!isZ85Key(line)) {
      return invalidArgument(fmt::format(
          "authorized keys '{}' line {}: not a 40-character Z85 public key", origin, number));
    }
    keys.push_back(line);
  }
  return keys;
}

Result<std::vector<std::string>> loadAuthorizedKeys(const std::filesystem::path& path) {
  KILN_ASSIGN_OR_RETURN(std::string text, readPrivateText(path, false));
  return parseAuthorizedKeys(text, path.string());
}

void applyCurveServer(zmq::socket_t& socket, const ClusterKeys& keys, const std::string& domain) {
  socket.set(zmq::sockopt::curve_server, 1);
  socket.set(zmq::sockopt::curve_secretkey, keys.secretKey);
  // The domain names the server in the authenticator's log lines.
  socket.set(zmq::sockopt::zap_domain, domain);
  // Without a ZAP handler libzmq would let in any client that knows the
  // server key; ZMQ_ZAP_ENFORCE_DOMAIN (a draft option, 93) refuses instead.
  // Builds without draft options ignore it; kiln runs an authenticator anyway.
  constexpr int kZapEnforceDomain = 93;
  int enforce = 1;
  (void)zmq_setsockopt(socket.handle(), kZapEnforceDomain, &enforce, sizeof(enforce));
}

void applyCurveClient(zmq::socket_t& socket, const ClusterKeys& keys) {
  socket.set(zmq::sockopt::curve_serverkey, keys.publicKey);
  socket.set(zmq::sockopt::curve_publickey, keys.publicKey);
  socket.set(zmq::sockopt::curve_secretkey, keys.secretKey);
}

bool isHandshakeFailure(std::uint16_t event) {
  return event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL ||
         event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL || event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
}

Status handshakeRefusal(std::uint16_t event, std::uint32_t value, const std::string& endpoint,
                        bool haveKeys) {
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
    return permissionDenied(fmt::format(
        "refused by authentication: {} does not accept this client's key (status {}); use the "
        "cluster's key file (--key-file)",
        endpoint, value));
  }
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
      value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
    return permissionDenied(
        haveKeys ? fmt::format("refused by authentication: {} runs without a cluster key while "
                               "this client has one; start it with --key-file too",
                               endpoint)
                 : fmt::format("refused by authentication: {} requires the cluster key; pass "
                               "--key-file (ClientOptions::keys, key_file= in Python)",
                               endpoint));
  }
  return permissionDenied(
      haveKeys ? fmt::format("refused by authentication: the CURVE handshake with {} failed; "
                             "it has another cluster key than this client's key file, or none",
                             endpoint)
               : fmt::format("refused by authentication: the handshake with {} failed; it "
                             "probably requires the cluster key (--key-file)",
                             endpoint));
}

}  // namespace kiln
