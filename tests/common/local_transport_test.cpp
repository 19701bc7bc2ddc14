// The same-host choice: a client takes a worker's ipc:// route only when
// both run on the same boot, network namespace and hostname, and never when
// told to stay on TCP.
#include "common/transport/local_transport.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

const std::string kTcp = "tcp://10.0.0.5:7701";
const std::string kIpc = "ipc://@kiln-worker-42-00000000000000ab";

std::string host(const std::string& boot = "boot-a", std::uint64_t netns = 4026531840,
                 const std::string& name = "node1") {
  return hostIdentityText(boot, netns, name);
}

TEST(HostIdentityTest, NamesBootNamespaceAndHostname) {
  EXPECT_EQ(host(), "boot-a/4026531840/node1");
  EXPECT_NE(host("boot-b"), host());
  EXPECT_NE(host("boot-a", 4026532000), host());
  EXPECT_NE(host("boot-a", 4026531840, "node2"), host());
}

TEST(HostIdentityTest, AnUnknownPartGivesNoIdentity) {
  EXPECT_EQ(hostIdentityText("", 4026531840, "node1"), "");
  EXPECT_EQ(hostIdentityText("boot-a", 0, "node1"), "");
  EXPECT_EQ(hostIdentityText("boot-a", 4026531840, ""), "");
}

TEST(HostIdentityTest, ThisThreadHasOne) {
  // Linux with /proc: the identity is known and stable within the process.
  std::string mine = currentHostIdentity();
  EXPECT_FALSE(mine.empty());
  EXPECT_EQ(currentHostIdentity(), mine);
}

TEST(ChooseWorkerAddressTest, SameHostTakesTheLocalRoute) {
  EXPECT_EQ(chooseWorkerAddress(kTcp, {kIpc, host()}, host(), TransportChoice::kPreferLocal), kIpc);
}

TEST(ChooseWorkerAddressTest, AnyDifferenceInIdentityKeepsTcp) {
  for (const std::string& other :
       {host("boot-b"), host("boot-a", 4026532000), host("boot-a", 4026531840, "node2")}) {
    EXPECT_EQ(chooseWorkerAddress(kTcp, {kIpc, other}, host(), TransportChoice::kPreferLocal), kTcp)
        << other;
  }
}

TEST(ChooseWorkerAddressTest, UnknownIdentitiesKeepTcp) {
  // Two unknowns must not count as equal.
  EXPECT_EQ(chooseWorkerAddress(kTcp, {kIpc, ""}, "", TransportChoice::kPreferLocal), kTcp);
  EXPECT_EQ(chooseWorkerAddress(kTcp, {kIpc, ""}, host(), TransportChoice::kPreferLocal), kTcp);
  EXPECT_EQ(chooseWorkerAddress(kTcp, {kIpc, host()}, "", TransportChoice::kPreferLocal), kTcp);
}

TEST(ChooseWorkerAddressTest, OnlyIpcRoutesAreTaken) {
  EXPECT_EQ(chooseWorkerAddress(kTcp, {"", host()}, host(), TransportChoice::kPreferLocal), kTcp);
  EXPECT_EQ(chooseWorkerAddress(kTcp, {"ipc://", host()}, host(), TransportChoice::kPreferLocal),
            kTcp);
  EXPECT_EQ(chooseWorkerAddress(kTcp, {"tcp://127.0.0.1:9", host()}, host(),
                                TransportChoice::kPreferLocal),
            kTcp);
}

TEST(ChooseWorkerAddressTest, ForcedTcpIgnoresTheLocalRoute) {
  EXPECT_EQ(chooseWorkerAddress(kTcp, {kIpc, host()}, host(), TransportChoice::kTcpOnly), kTcp);
}

TEST(DefaultLocalEndpointTest, AbstractNameForTcpListenersOnly) {
  EXPECT_EQ(defaultLocalEndpoint("tcp://127.0.0.1:0", 42, 0xab),
            "ipc://@kiln-worker-42-00000000000000ab");
  EXPECT_NE(defaultLocalEndpoint("tcp://127.0.0.1:0", 42, 0xab),
            defaultLocalEndpoint("tcp://127.0.0.1:0", 42, 0xac));
  EXPECT_EQ(defaultLocalEndpoint("inproc://worker", 42, 0xab), "");
  EXPECT_EQ(defaultLocalEndpoint("ipc://@already-local", 42, 0xab), "");
}

}  // namespace
}  // namespace kiln
