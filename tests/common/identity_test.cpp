// Client identities: clientIdOf is a hash of the secret, and ClientIdMemo,
// which remembers the last one, always answers exactly as clientIdOf does.
#include "common/identity.h"

#include <gtest/gtest.h>

#include <vector>

namespace kiln {
namespace {

TEST(ClientIdMemoTest, AnswersAsTheHashDoesWhoeverAsks) {
  std::vector<Secret> secrets;
  for (int i = 0; i < 4; ++i) secrets.push_back(Secret::draw());
  ClientIdMemo memo;
  // Repeats, alternations and returns to an earlier client.
  for (int i : {0, 0, 1, 0, 2, 2, 3, 1, 1, 0}) {
    const ClientId expected = clientIdOf(wireBytes(secrets[i]));
    EXPECT_TRUE(expected.valid());
    EXPECT_EQ(memo.of(wireBytes(secrets[i])), expected) << "secret " << i;
  }
  for (const Secret& a : secrets) {
    for (const Secret& b : secrets) {
      if (&a != &b) EXPECT_NE(clientIdOf(wireBytes(a)), clientIdOf(wireBytes(b)));
    }
  }
}

TEST(ClientIdMemoTest, AMalformedSecretIsNoClientAndForgetsNothing) {
  const Secret secret = Secret::draw();
  ClientIdMemo memo;
  const ClientId id = memo.of(wireBytes(secret));
  const std::uint8_t shortSecret[4] = {1, 2, 3, 4};
  EXPECT_FALSE(memo.of(capnp::Data::Reader(shortSecret, sizeof(shortSecret))).valid());
  EXPECT_FALSE(memo.of(capnp::Data::Reader()).valid());
  EXPECT_EQ(memo.of(wireBytes(secret)), id);
  // A secret that differs from the remembered one in its last byte only.
  std::string bytes(secret.bytes());
  bytes.back() = static_cast<char>(bytes.back() ^ 1);
  const Secret near = Secret::fromBytes(bytes, "test").value();
  EXPECT_EQ(memo.of(wireBytes(near)), clientIdOf(wireBytes(near)));
  EXPECT_NE(memo.of(wireBytes(near)), id);
}

}  // namespace
}  // namespace kiln
