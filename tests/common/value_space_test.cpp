// Spaces check actions; values survive the wire unchanged; frames reject garbage.
#include <gtest/gtest.h>

#include <kiln/space.h>
#include "common/base/near_names.h"
#include "common/base/wire_convert.h"
#include "common/transport/frame.h"

namespace kiln {
namespace {

Value roundTrip(const Value& value) {
  capnp::MallocMessageBuilder builder;
  auto root = builder.initRoot<wire::Value>();
  toWire(value, root);
  auto decoded = fromWire(root.asReader());
  EXPECT_TRUE(decoded.ok()) << decoded.status().toString();
  return *decoded;
}

TEST(SpaceTest, DiscreteRejectsOutOfRangeWithClearMessage) {
  Space space = Space::discrete("passes", 10);
  EXPECT_TRUE(space.check(Value(std::int64_t{9})).ok());
  Status bad = space.check(Value(std::int64_t{10}));
  EXPECT_EQ(bad.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("out of range [0, 10)"), std::string::npos) << bad.message();
  EXPECT_FALSE(space.check(Value(std::int64_t{-1})).ok());
  EXPECT_FALSE(space.check(Value("gvn")).ok());
}

TEST(SpaceTest, BoxChecksShapeAndElementRange) {
  Space box = Space::int64Box("features", {2, 2}, {0, 5});
  EXPECT_TRUE(box.check(Int64Tensor{{2, 2}, {0, 1, 2, 5}}).ok());
  EXPECT_FALSE(box.check(Int64Tensor{{2, 2}, {0, 1, 2, 6}}).ok());
  EXPECT_FALSE(box.check(Int64Tensor{{4}, {0, 1, 2, 3}}).ok());
  EXPECT_FALSE(box.check(Int64Tensor{{2, 2}, {0, 1, 2}}).ok());
}

TEST(SpaceTest, DictAndListCheckTheirMembers) {
  Space dict = Space::dict("d", {Space::int64Scalar("a", {0, 1}), Space::string("b", {0, 3})});
  EXPECT_TRUE(dict.check(ValueDict{{"a", std::int64_t{1}}, {"b", "xyz"}}).ok());
  EXPECT_FALSE(dict.check(ValueDict{{"a", std::int64_t{1}}}).ok());
  EXPECT_FALSE(dict.check(ValueDict{{"a", std::int64_t{1}}, {"b", "long"}}).ok());
  Space list = Space::list("l", {Space::doubleScalar("x", {0.0, 1.0})});
  EXPECT_TRUE(list.check(ValueList{0.5}).ok());
  EXPECT_FALSE(list.check(ValueList{1.5}).ok());
}

TEST(SpaceTest, FindSpaceNamesTheKnownOnes) {
  std::vector<Space> spaces{Space::any("Ir"), Space::any("Autophase")};
  EXPECT_EQ(*findSpace(spaces, "Autophase"), 1u);
  auto missing = findSpace(spaces, "Nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("Ir, Autophase"), std::string::npos);
}

TEST(WireTest, EveryValueKindRoundTrips) {
  std::vector<Value> values{
      Value(),
      Value(true),
      Value(std::int64_t{-42}),
      Value(3.25),
      Value("text"),
      Value(Bytes{std::string("\0\1\2", 3)}),
      Value(Int64Tensor{{2}, {1, 2}}),
      Value(FloatTensor{{1, 2}, {0.5f, 1.5f}}),
      Value(DoubleTensor{{3}, {1, 2, 3}}),
      Value(ValueList{Value(std::int64_t{1}), Value("a")}),
      Value(ValueDict{{"k", Value(ValueList{Value(2.0)})}}),
  };
  for (const Value& value : values) EXPECT_EQ(roundTrip(value), value) << value.describe();
}

TEST(WireTest, SpaceRoundTrips) {
  Space space = Space::dict("obs", {Space::int64Box("t", {-1, 3}, {0, std::nullopt}),
                                    Space::namedDiscrete("n", {"a", "b"})});
  space.deterministic = false;
  space.defaultValue = Value(std::int64_t{7});
  capnp::MallocMessageBuilder builder;
  toWire(space, builder.initRoot<wire::Space>());
  auto decoded = fromWire(builder.getRoot<wire::Space>().asReader());
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, space);
}

TEST(WireTest, ChoiceAliasesAndMetadataRoundTripAndOldPeersSeeNone) {
  Space space = Space::namedDiscrete("passes", {"gvn", "sroa"});
  space.aliases = {"-gvn", ""};
  ValueDict metadata;
  metadata.emplace_back("pipelines", Value(ValueList{Value(std::string("function(gvn<>)")),
                                                     Value(std::string("function(sroa)"))}));
  space.metadata = Value(std::move(metadata));
  capnp::MallocMessageBuilder builder;
  toWire(space, builder.initRoot<wire::Space>());
  auto decoded = fromWire(builder.getRoot<wire::Space>().asReader());
  ASSERT_TRUE(decoded.ok()) << decoded.status().toString();
  EXPECT_EQ(*decoded, space);

  // A space from a peer that predates the fields: no aliases, no metadata.
  capnp::MallocMessageBuilder old;
  auto raw = old.initRoot<wire::Space>();
  raw.setName("passes");
  raw.setKind(wire::SpaceKind::NAMED_DISCRETE);
  raw.initNames(1).set(0, "gvn");
  auto fromOld = fromWire(raw.asReader());
  ASSERT_TRUE(fromOld.ok());
  EXPECT_TRUE(fromOld->aliases.empty());
  EXPECT_TRUE(fromOld->metadata.isNone()) << fromOld->metadata.describe();

  raw.initAliases(2);
  EXPECT_EQ(fromWire(raw.asReader()).status().code(), ErrorCode::kInvalidArgument);
}

TEST(SpaceTest, FindChoiceByNameOrAliasSuggestsNearNames) {
  Space space = Space::namedDiscrete("passes", {"gvn", "instcombine", "loop-unroll", "sroa"});
  space.aliases = {"-gvn", "-instcombine", "-loop-unroll", ""};
  EXPECT_EQ(*space.findChoice("loop-unroll"), 2);
  EXPECT_EQ(*space.findChoice("-gvn"), 0);
  auto unknown = space.findChoice("loop-unrol");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(unknown.status().message(),
            "unknown action 'loop-unrol' in space 'passes' (4 actions) (did you mean "
            "'loop-unroll', '-loop-unroll'?)");
  auto far = space.findChoice("vectorize-everything");
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.status().message().find("did you mean"), std::string::npos);
  EXPECT_EQ(Space::discrete("d", 3).findChoice("gvn").status().code(), ErrorCode::kInvalidArgument);
}

TEST(NearNamesTest, EditDistanceAndContainment) {
  EXPECT_EQ(editDistance("gvn", "gvn"), 0u);
  EXPECT_EQ(editDistance("gvn", "GVN"), 0u);
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(editDistance("", "abc"), 3u);
  const std::vector<std::string> known = {"instcombine", "instsimplify", "inline", "gvn"};
  EXPECT_EQ(nearNames("-instcombine", known), (std::vector<std::string>{"instcombine"}));
  EXPECT_EQ(nearNames("combine", known), (std::vector<std::string>{"instcombine"}));
  EXPECT_EQ(nearNames("inlin", known).front(), "inline");
  EXPECT_TRUE(nearNames("zzzzzzzz", known).empty());
  EXPECT_TRUE(nearNames("", known).empty());
  EXPECT_EQ(didYouMean("gnv", known), " (did you mean 'gvn'?)");
}

TEST(WireTest, TensorWithInconsistentShapeIsRejected) {
  capnp::MallocMessageBuilder builder;
  auto tensor = builder.initRoot<wire::Value>().initInt64Tensor();
  tensor.initShape(1).set(0, 5);
  tensor.initValues(2);
  auto decoded = fromWire(builder.getRoot<wire::Value>().asReader());
  EXPECT_EQ(decoded.status().code(), ErrorCode::kInvalidArgument);
}

TEST(FrameTest, GarbageOddSizesAndOversizedFramesAreRejected) {
  FrameLimits limits;
  limits.maxMessageBytes = 1024;
  std::string garbage(64, '\xff');
  EXPECT_EQ(InboundMessage::decode(garbage.data(), garbage.size(), limits).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_FALSE(InboundMessage::decode(garbage.data(), 13, limits).ok());
  EXPECT_FALSE(InboundMessage::decode(garbage.data(), 0, limits).ok());
  std::string big(2048, '\0');
  auto tooBig = InboundMessage::decode(big.data(), big.size(), limits);
  EXPECT_NE(tooBig.status().message().find("exceeds the limit"), std::string::npos);
}

TEST(FrameTest, EncodedEnvelopeDecodesAndVersionIsChecked) {
  capnp::MallocMessageBuilder builder;
  auto envelope = initEnvelope(builder, 77);
  envelope.initRequest().initGetVersion();
  zmq::message_t frame = encodeFrame(builder);
  auto decoded = InboundMessage::decode(frame, FrameLimits{});
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->envelope().getRequestId(), 77u);
  EXPECT_TRUE(checkProtocolVersion(decoded->envelope()).ok());
  builder.getRoot<wire::Envelope>().setProtocolVersion(99);
  zmq::message_t other = encodeFrame(builder);
  auto old = InboundMessage::decode(other, FrameLimits{});
  Status refused = checkProtocolVersion(old->envelope());
  EXPECT_EQ(refused.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("protocol version 99"), std::string::npos);
}

}  // namespace
}  // namespace kiln
