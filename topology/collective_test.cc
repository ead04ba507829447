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
}

TEST(CollectiveTest, UnknownNamesListValidOnes) {
  absl::StatusOr<Collective> c = ParseCollective("reduce");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("all_reduce"));
  absl::StatusOr<Algorithm> a = ParseAlgorithm("collnet");
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("hierarchical"));
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
