// The cluster key file: written by `kiln keygen`, read by --key-file. Round
// trip, and a clear error for every way a file can be wrong.
#include <kiln/curve_keys.h>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include <kiln/logging.h>
#include "common/security/zap_authenticator.h"
#include "common/transport/listen_exposure.h"

namespace kiln {
namespace {

class KeyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!curveAvailable()) GTEST_SKIP() << "libzmq without CURVE";
    char pattern[] = "/tmp/kiln-keys-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::filesystem::path write(const std::string& name, const std::string& text, int mode) {
    std::filesystem::path path = dir_ / name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(KeyFileTest, WrittenKeysReadBackPrivately) {
  ClusterKeys keys = generateClusterKeys().value();
  EXPECT_EQ(keys.publicKey.size(), 40u);
  std::filesystem::path path = dir_ / "cluster.key";
  ASSERT_TRUE(writeKeyFile(path, keys, false).ok());
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  auto loaded = loadKeyFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().toString();
  EXPECT_EQ(loaded->publicKey, keys.publicKey);
  EXPECT_EQ(loaded->secretKey, keys.secretKey);
  // Two generations differ (the secret is random).
  EXPECT_NE(generateClusterKeys()->secretKey, keys.secretKey);
}

TEST_F(KeyFileTest, ExistingFileIsReplacedOnlyWhenAsked) {
  std::filesystem::path path = dir_ / "cluster.key";
  ClusterKeys first = generateClusterKeys().value();
  ClusterKeys second = generateClusterKeys().value();
  ASSERT_TRUE(writeKeyFile(path, first, false).ok());
  Status refused = writeKeyFile(path, second, false);
  EXPECT_EQ(refused.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("--force"), std::string::npos) << refused.toString();
  EXPECT_EQ(loadKeyFile(path)->secretKey, first.secretKey);
  ASSERT_TRUE(writeKeyFile(path, second, true).ok());
  EXPECT_EQ(loadKeyFile(path)->secretKey, second.secretKey);
  // No temporary file is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 1);
}

TEST_F(KeyFileTest, FileOthersCanReadIsRefused) {
  ClusterKeys keys = generateClusterKeys().value();
  auto path = write("open.key", formatKeyFile(keys), 0644);
  auto loaded = loadKeyFile(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(loaded.status().message().find("0644"), std::string::npos);
  EXPECT_NE(loaded.status().message().find("chmod 600"), std::string::npos);
}

TEST_F(KeyFileTest, MissingAndMalformedFilesSayWhatIsWrong) {
  ClusterKeys keys = generateClusterKeys().value();
  ClusterKeys other = generateClusterKeys().value();
  struct Case {
    std::string text;
    std::string expected;
  };
  const Case cases[] = {
      {"", "lacks its public-key line"},
      {"public-key = " + keys.publicKey + "\n", "lacks its secret-key line"},
      {"public-key = short\nsecret-key = " + keys.secretKey + "\n", "not a 40-character Z85"},
      {"just some text\n", "line 1: expected 'public-key"},
      {"# comment\ncolour = blue\n", "line 2: unknown field 'colour'"},
      {"public-key = " + other.publicKey + "\nsecret-key = " + keys.secretKey + "\n",
       "does not belong to the secret key"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto loaded = loadKeyFile(write("bad.key", c.text, 0600));
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(loaded.status().message().find(c.expected), std::string::npos)
        << loaded.status().toString();
  }
  auto missing = loadKeyFile(dir_ / "nope.key");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("No such file"), std::string::npos)
      << missing.status().toString();
  auto directory = loadKeyFile(dir_);
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find("not a regular file"), std::string::npos);
}

TEST_F(KeyFileTest, AuthorizedKeysAreListedOnePerLine) {
  std::string a = generateClusterKeys()->publicKey, b = generateClusterKeys()->publicKey;
  auto keys =
      loadAuthorizedKeys(write("authorized", "# ops laptop\n" + a + "\n\n" + b + "\n", 0644));
  ASSERT_TRUE(keys.ok()) << keys.status().toString();
  EXPECT_EQ(*keys, (std::vector<std::string>{a, b}));
  auto bad = loadAuthorizedKeys(write("authorized", a + "\nnot-a-key\n", 0644));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2"), std::string::npos);
}

// Found by fuzz_key_files: libzmq's Z85 decoder stops at a NUL byte, so a
// "key" whose first characters decode (a multiple of five of them, or none)
// followed by NULs passed for a 40-character key. The authenticator then
// authorized 32 bytes it never wrote.
TEST_F(KeyFileTest, KeysWithNulBytesAreRefused) {
  ClusterKeys keys = generateClusterKeys().value();
  const std::string nulFirst = std::string(1, '\0') + keys.publicKey.substr(1);
  const std::string nulInside =
      keys.publicKey.substr(0, 10) + std::string(8, '\0') + keys.publicKey.substr(18);
  for (const std::string& key : {nulFirst, nulInside}) {
    EXPECT_FALSE(isZ85Key(key));
    auto listed = parseAuthorizedKeys(keys.publicKey + "\n" + key + "\n", "authorized");
    ASSERT_FALSE(listed.ok());
    EXPECT_NE(listed.status().message().find("line 2"), std::string::npos);
    auto pair = parseKeyFile("public-key = " + key + "\nsecret-key = " + keys.secretKey + "\n",
                             "cluster.key");
    ASSERT_FALSE(pair.ok());
    EXPECT_NE(pair.status().message().find("not a 40-character Z85 key"), std::string::npos)
        << pair.status().toString();
    zmq::context_t context;
    auto authenticator = ZapAuthenticator::start(context, keys, {key}, makeNullLogger("test"));
    EXPECT_FALSE(authenticator.ok());
  }
  EXPECT_TRUE(isZ85Key(keys.publicKey));
}

TEST(ListenExposureTest, OnlyLoopbackAndLocalEndpointsAreLoopback) {
  for (const char* endpoint : {"tcp://127.0.0.1:7700", "tcp://127.1.2.3:0", "tcp://localhost:1",
                               "tcp://[::1]:7700", "ipc:///tmp/x", "inproc://a"}) {
    EXPECT_TRUE(isLoopbackEndpoint(endpoint)) << endpoint;
  }
  for (const char* endpoint : {"tcp://*:7700", "tcp://0.0.0.0:7700", "tcp://10.0.0.1:7700",
                               "tcp://127.0.0.1.example.com:7700", "tcp://eth0:7700",
                               "tcp://[::]:7700", "tcp://127.0.0.1"}) {
    EXPECT_FALSE(isLoopbackEndpoint(endpoint)) << endpoint;
  }
}

}  // namespace
}  // namespace kiln
