// Client identities: clientIdOf is a hash of the secret, and ClientIdMemo,
// which remembers the last one, always answers exactly as clientIdOf does.
// A client pass (the coordinator's MAC of a client id under one worker's
// key) names that client on that worker only; an experiment pass (a MAC of
// a host's endpoint under the experiment key's digest) is good on that host
// only; registration tokens compare in constant time.
#include "common/security/identity.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace kiln {
namespace {

// An envelope that carries `secret`, or else `client` with `pass`.
class Stamped {
 public:
  explicit Stamped(capnp::Data::Reader secret) { builder_.setClientSecret(secret); }
  Stamped(ClientId client, const ClientPass& pass) {
    builder_.setClientId(client.value);
    builder_.setClientPass(capnp::Data::Reader(pass.data(), pass.size()));
  }
  Stamped(ClientId client, capnp::Data::Reader pass) {
    builder_.setClientId(client.value);
    builder_.setClientPass(pass);
  }
  operator wire::Envelope::Reader() { return builder_.asReader(); }

 private:
  std::unique_ptr<capnp::MallocMessageBuilder> message_ =
      std::make_unique<capnp::MallocMessageBuilder>();
  wire::Envelope::Builder builder_ = message_->initRoot<wire::Envelope>();
};

TEST(ClientIdMemoTest, AnswersAsTheHashDoesWhoeverAsks) {
  std::vector<Secret> secrets;
  for (int i = 0; i < 4; ++i) secrets.push_back(Secret::draw());
  ClientIdMemo memo;
  // Repeats, alternations and returns to an earlier client.
  for (int i : {0, 0, 1, 0, 2, 2, 3, 1, 1, 0}) {
    const ClientId expected = clientIdOf(wireBytes(secrets[i]));
    EXPECT_TRUE(expected.valid());
    EXPECT_EQ(memo.of(Stamped(wireBytes(secrets[i]))), expected) << "secret " << i;
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
  const ClientId id = memo.of(Stamped(wireBytes(secret)));
  const std::uint8_t shortSecret[4] = {1, 2, 3, 4};
  EXPECT_FALSE(memo.of(Stamped(capnp::Data::Reader(shortSecret, sizeof(shortSecret)))).valid());
  EXPECT_FALSE(memo.of(Stamped(capnp::Data::Reader())).valid());
  EXPECT_EQ(memo.of(Stamped(wireBytes(secret))), id);
  // A secret that differs from the remembered one in its last byte only.
  std::string bytes(secret.bytes());
  bytes.back() = static_cast<char>(bytes.back() ^ 1);
  const Secret near = Secret::fromBytes(bytes, "test").value();
  EXPECT_EQ(memo.of(Stamped(wireBytes(near))), clientIdOf(wireBytes(near)));
  EXPECT_NE(memo.of(Stamped(wireBytes(near))), id);
}

TEST(ClientPassTest, APassNamesItsClientOnItsOwnWorkerOnly) {
  const PassKey mine = PassKey::draw(), other = PassKey::draw();
  const ClientId victim = clientIdOf(wireBytes(Secret::draw()));
  const ClientId intruder = clientIdOf(wireBytes(Secret::draw()));
  const ClientPass pass = clientPass(mine, victim);
  ClientIdMemo here(mine), elsewhere(other), keyless;
  // Twice each: the second answer comes from what the memo remembered.
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(here.of(Stamped(victim, pass)), victim);
    EXPECT_FALSE(elsewhere.of(Stamped(victim, pass)).valid()) << "a pass captured elsewhere";
    EXPECT_FALSE(keyless.of(Stamped(victim, pass)).valid()) << "a worker without a key";
    EXPECT_FALSE(here.of(Stamped(intruder, pass)).valid()) << "another id with that pass";
  }
  EXPECT_EQ(clientOf(Stamped(victim, pass), mine), victim);
  EXPECT_FALSE(clientOf(Stamped(victim, pass), other).valid());
  EXPECT_FALSE(clientOf(Stamped(victim, pass), PassKey{}).valid());
  // Any flipped byte, a short pass, no pass.
  for (std::size_t i = 0; i < pass.size(); ++i) {
    ClientPass flipped = pass;
    flipped[i] ^= 0x40;
    EXPECT_FALSE(here.of(Stamped(victim, flipped)).valid()) << "byte " << i;
  }
  EXPECT_FALSE(here.of(Stamped(victim, capnp::Data::Reader(pass.data(), 8))).valid());
  EXPECT_FALSE(here.of(Stamped(victim, capnp::Data::Reader())).valid());
  EXPECT_EQ(here.of(Stamped(victim, pass)), victim);
}

TEST(ClientPassTest, PassKeysComeOnlyWhole) {
  const std::uint8_t bytes[kPassKeyBytes] = {};
  EXPECT_TRUE(PassKey::fromWire(capnp::Data::Reader(bytes, kPassKeyBytes)).ok());
  EXPECT_FALSE(PassKey::fromWire(capnp::Data::Reader(bytes, kPassKeyBytes - 1)).ok());
  EXPECT_FALSE(PassKey::fromWire(capnp::Data::Reader()).ok());
  EXPECT_NE(clientPass(PassKey::draw(), ClientId{7}), clientPass(PassKey::draw(), ClientId{7}));
}

TEST(WorkerTokenTest, OnlyTheTokenItselfMatches) {
  const Secret token = Secret::draw(), other = Secret::draw();
  EXPECT_TRUE(tokenMatches(wireBytes(token), token));
  EXPECT_FALSE(tokenMatches(wireBytes(other), token));
  EXPECT_FALSE(tokenMatches(capnp::Data::Reader(), token));
  EXPECT_FALSE(tokenMatches(wireBytes(token), Secret{}));
  const std::string prefix(token.bytes().substr(0, kSecretBytes - 1));
  EXPECT_FALSE(tokenMatches(
      capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(prefix.data()), prefix.size()),
      token));
}

TEST(ExperimentPassTest, APassIsBoundToItsHostAndKeyAndIsNeitherTheKeyNorItsDigest) {
  const Secret key = Secret::draw(), other = Secret::draw();
  const std::string a = "tcp://10.0.0.1:7701", b = "tcp://10.0.0.2:7701";
  const std::string pass = experimentPassOf(key, a);
  ASSERT_EQ(pass.size(), kExperimentPassBytes);
  // What the coordinator makes from the digest is what the client makes from the key.
  EXPECT_EQ(pass, experimentPass(keyDigest(key.bytes()), a));
  EXPECT_NE(pass, experimentPassOf(key, b));
  EXPECT_NE(pass, experimentPassOf(other, a));
  EXPECT_NE(pass, keyDigest(key.bytes()));
  auto data = [](const std::string& bytes) {
    return capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(bytes.data()), bytes.size());
  };
  EXPECT_TRUE(passMatches(data(pass), pass));
  EXPECT_FALSE(passMatches(data(experimentPassOf(key, b)), pass));
  EXPECT_FALSE(passMatches(wireBytes(key), pass));  // the key itself opens nothing on a host
  EXPECT_FALSE(passMatches(data(keyDigest(key.bytes())), pass));
  EXPECT_FALSE(passMatches(data(pass.substr(0, 16)), pass));
  EXPECT_FALSE(passMatches(capnp::Data::Reader(), pass));
  EXPECT_FALSE(passMatches(data(pass), ""));
}

}  // namespace
}  // namespace kiln
