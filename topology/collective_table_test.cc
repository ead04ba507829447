#include "topology/collective_table.h"

#include <numeric>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"

namespace clustersim::topology {
namespace {

using ::testing::HasSubstr;

TEST(CollectiveTableTest, PrintsOneRowPerSizeWithNcclTestsColumns) {
  ClusterSpec spec;
  spec.node_preset = "hgx-b200";
  absl::StatusOr<Cluster> c = BuildCluster(spec);
  ASSERT_TRUE(c.ok());
  AnalyticNetwork net(*c);
  std::vector<int> gpus(8);
  std::iota(gpus.begin(), gpus.end(), 0);
  absl::StatusOr<std::string> t = FormatCollectiveTable(
      net, Collective::kAllReduce, Algorithm::kAuto, Protocol::kAuto, gpus, sim::MiB(1),
      sim::GiB(1), 4);
  ASSERT_TRUE(t.ok()) << t.status();
  std::printf("%s", t->c_str());
  std::vector<std::string> lines = absl::StrSplit(*t, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u + 6u);  // 1, 4, 16, 64, 256, 1024 MiB
  EXPECT_THAT(lines[1], HasSubstr("busbw(GB/s)"));
  EXPECT_THAT(lines[2], HasSubstr("1048576"));
  EXPECT_THAT(lines[2], HasSubstr("262144"));
  EXPECT_THAT(lines.back(), HasSubstr("1073741824"));
  // The chosen algorithm/protocol per row: LL at 1 MiB, NVLS (Simple) at 1 GiB.
  EXPECT_THAT(lines[2], HasSubstr("ring/ll"));
  EXPECT_THAT(lines.back(), HasSubstr("nvls/simple"));
}

TEST(CollectiveTableTest, RejectsBadRangeAndPassesModelErrors) {
  ClusterSpec spec;
  spec.node_preset = "dgx-a100";
  absl::StatusOr<Cluster> c = BuildCluster(spec);
  ASSERT_TRUE(c.ok());
  AnalyticNetwork net(*c);
  const std::vector<int> gpus = {0, 1, 2, 3};
  EXPECT_FALSE(FormatCollectiveTable(net, Collective::kAllReduce, Algorithm::kRing, Protocol::kAuto, gpus,
                                     sim::MiB(2), sim::MiB(1), 2)
                   .ok());
  EXPECT_FALSE(FormatCollectiveTable(net, Collective::kAllReduce, Algorithm::kRing, Protocol::kAuto, gpus,
                                     sim::MiB(1), sim::MiB(2), 1)
                   .ok());
  absl::StatusOr<std::string> nvls = FormatCollectiveTable(
      net, Collective::kAllReduce, Algorithm::kNvls, Protocol::kAuto, gpus, sim::MiB(1), sim::MiB(2), 2);
  ASSERT_FALSE(nvls.ok());
  EXPECT_THAT(nvls.status().message(), HasSubstr("NVLS"));
}

}  // namespace
}  // namespace clustersim::topology
