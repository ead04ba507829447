#include "topology/collective.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::topology {
namespace {

using ::testing::HasSubstr;

TEST(CollectiveTest, NamesRoundTripAndParsingIsLenient) {
  for (Collective c : {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather,
                       Collective::kAllToAll, Collective::kBroadcast, Collective::kSendRecv}) {
    EXPECT_EQ(ParseCollective(CollectiveName(c)).value(), c);
  }
  for (Algorithm a : {Algorithm::kAuto, Algorithm::kRing, Algorithm::kTree, Algorithm::kNvls,
                      Algorithm::kHierarchical}) {
    EXPECT_EQ(ParseAlgorithm(AlgorithmName(a)).value(), a);
  }
  EXPECT_EQ(ParseCollective("All-Reduce").value(), Collective::kAllReduce);
  EXPECT_EQ(ParseCollective("allgather").value(), Collective::kAllGather);
  EXPECT_EQ(ParseAlgorithm("NVLS").value(), Algorithm::kNvls);
  for (Protocol p : {Protocol::kAuto, Protocol::kLl, Protocol::kLl128, Protocol::kSimple}) {
    EXPECT_EQ(ParseProtocol(ProtocolName(p)).value(), p);
  }
  EXPECT_EQ(ParseProtocol("LL-128").value(), Protocol::kLl128);
  for (size_t i = 0; i < kConcreteProtocols.size(); ++i) {
    EXPECT_EQ(ProtocolIndex(kConcreteProtocols[i]), static_cast<int>(i));
  }
}

TEST(CollectiveTest, UnknownNamesListValidOnes) {
  absl::StatusOr<Collective> c = ParseCollective("reduce");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("all_reduce"));
  absl::StatusOr<Algorithm> a = ParseAlgorithm("collnet");
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("hierarchical"));
  absl::StatusOr<Protocol> p = ParseProtocol("ll64");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("unknown protocol 'll64'; valid: auto, ll, ll128, simple"));
}

// nccl-tests doc/PERFORMANCE.md factors.
TEST(CollectiveTest, BusBandwidthFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kSendRecv, 2), 1.0);
}

}  // namespace
}  // namespace clustersim::topology
