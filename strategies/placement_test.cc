#include "strategies/placement.h"

#include <vector>

#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

TEST(PlacementTest, TensorRanksAreInnermost) {
  ParallelConfig c;
  c.tensor_parallel = 8;
  c.data_parallel = 2;
  Placement p(c);
  EXPECT_EQ(p.world_size(), 16);
  EXPECT_EQ(p.GpuOf({.tp = 3, .dp = 1}), 11);
  EXPECT_EQ(p.TensorGroup(11), (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(p.DataGroup(11), (std::vector<int>{3, 11}));
}

TEST(PlacementTest, CoordsRoundTrip) {
  ParallelConfig c;
  c.tensor_parallel = 2;
  c.context_parallel = 2;
  c.data_parallel = 3;
  c.pipeline_parallel = 2;
  Placement p(c);
  for (int g = 0; g < p.world_size(); ++g) EXPECT_EQ(p.GpuOf(p.CoordsOf(g)), g);
  EXPECT_EQ(p.PipelineGroup(1), (std::vector<int>{1, 13}));
}

}  // namespace
}  // namespace clustersim::strategies
