#include "topology/memo_network.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"

namespace clustersim::topology {
namespace {

using topology::Collective;
using topology::CollectiveEstimate;
using topology::CollectiveRequest;

topology::Cluster TwoNodes() {
  topology::ClusterSpec spec;
  spec.node_preset = "dgx-h100";
  spec.num_nodes = 2;
  absl::StatusOr<topology::Cluster> c = topology::BuildCluster(spec);
  EXPECT_TRUE(c.ok()) << c.status();
  return *std::move(c);
}

void ExpectSame(const CollectiveEstimate& a, const CollectiveEstimate& b) {
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.algorithm, b.algorithm);
  EXPECT_EQ(a.protocol, b.protocol);
  EXPECT_EQ(a.algbw_gbs, b.algbw_gbs);
  EXPECT_EQ(a.busbw_gbs, b.busbw_gbs);
}

TEST(MemoNetworkTest, AnswersAsTheWrappedTierAndPlansEachRequestOnce) {
  const topology::Cluster cluster = TwoNodes();
  const topology::AnalyticNetwork analytic(cluster);
  const MemoNetwork memo(analytic);
  const std::vector<CollectiveRequest> requests = {
      {Collective::kAllReduce, {0, 1, 2, 3, 4, 5, 6, 7}, sim::MiB(64)},
      {Collective::kAllReduce, {0, 8}, sim::MiB(64)},
      {Collective::kAllReduce, {8, 0}, sim::MiB(64)},  // another ring order: its own entry
      {Collective::kReduceScatter, {0, 8}, sim::MiB(64)},
      {Collective::kSendRecv, {3, 11}, sim::KiB(256)},
      {Collective::kAllGather, {0, 1, 8, 9}, sim::GiB(1)},
  };
  for (int pass = 0; pass < 2; ++pass) {
    for (const CollectiveRequest& r : requests) {
      absl::StatusOr<CollectiveEstimate> direct = analytic.Estimate(r);
      absl::StatusOr<CollectiveEstimate> memoised = memo.Estimate(r);
      ASSERT_TRUE(direct.ok() && memoised.ok());
      ExpectSame(*direct, *memoised);
    }
    EXPECT_EQ(memo.Size(), requests.size());
  }
}

TEST(MemoNetworkTest, ErrorsPassThroughAndAreNotRemembered) {
  const topology::Cluster cluster = TwoNodes();
  const topology::AnalyticNetwork analytic(cluster);
  const MemoNetwork memo(analytic);
  const CollectiveRequest bad{Collective::kAllReduce, {0, 99}, sim::MiB(1)};
  EXPECT_FALSE(memo.Estimate(bad).ok());
  EXPECT_EQ(memo.Size(), 0u);
}

TEST(MemoNetworkTest, ConcurrentCallersGetTheSameAnswers) {
  const topology::Cluster cluster = TwoNodes();
  const topology::AnalyticNetwork analytic(cluster);
  const MemoNetwork memo(analytic);
  std::vector<std::vector<sim::Duration>> seen(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int n = 2; n <= 16; ++n) {
        std::vector<int> gpus;
        for (int g = 0; g < n; ++g) gpus.push_back(g);
        seen[t].push_back(memo.Estimate({Collective::kAllReduce, gpus, sim::MiB(n)})->time);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(memo.Size(), 15u);
}

}  // namespace
}  // namespace clustersim::topology
