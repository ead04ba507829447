#include "strategies/run_pieces.h"

#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

sim::Duration Us(int64_t n) { return sim::Microseconds(n); }

// A plan whose graph has `n` compute tasks of 10 us on one GPU.
StepPlan PlanWithTasks(int n) {
  StepPlan plan;
  const sim::ResourceId compute = plan.graph.AddResource("gpu0/compute", 0, kComputeLane);
  for (int i = 0; i < n; ++i) plan.graph.AddTask(compute, Us(10), 0);
  return plan;
}

TEST(RunPiecesTest, ClosedRunIsFiledAndItsTaskTagged) {
  StepPlan plan = PlanWithTasks(2);
  RunPieces pieces(1);
  pieces.Open(0, 1, &plan);
  EXPECT_TRUE(pieces.IsOpen(0, 1));
  pieces.Add(0, kTensorCommLane, Us(10), Us(4));
  pieces.Add(0, kComputeLane, Us(14), Us(6));
  pieces.CloseAll(&plan);
  EXPECT_FALSE(pieces.IsOpen(0, 1));
  ASSERT_EQ(plan.merged_runs.size(), 1u);
  EXPECT_EQ(plan.graph.task(1).tag, 1u);
  EXPECT_EQ(plan.graph.task(0).tag, 0u);
  ASSERT_EQ(plan.run_pieces.size(), 3u);
  EXPECT_EQ(plan.run_pieces[0].lane, kComputeLane);
  EXPECT_EQ(plan.run_pieces[0].length, Us(10));
  EXPECT_EQ(plan.run_pieces[1].lane, kTensorCommLane);
  EXPECT_EQ(plan.run_pieces[1].start, Us(10));
  EXPECT_EQ(plan.run_pieces[2].start, Us(14));
}

TEST(RunPiecesTest, ContinuingPieceOnTheSameLaneLengthensIt) {
  StepPlan plan = PlanWithTasks(1);
  RunPieces pieces(1);
  pieces.Open(0, 0, &plan);
  pieces.Add(0, kComputeLane, Us(10), Us(5));     // continues the first piece
  pieces.Add(0, kContextCommLane, Us(5), Us(20));  // overlaps: its own piece
  pieces.Add(0, kComputeLane, Us(25), Us(5));     // after a gap: its own piece
  pieces.CloseAll(&plan);
  ASSERT_EQ(plan.run_pieces.size(), 3u);
  EXPECT_EQ(plan.run_pieces[0].length, Us(15));
  EXPECT_EQ(plan.run_pieces[2].start, Us(25));
}

TEST(RunPiecesTest, IdenticalRunsShareAnEntryDifferentOnesDoNot) {
  StepPlan plan = PlanWithTasks(3);
  RunPieces pieces(1);
  for (sim::TaskId run : {0u, 1u}) {
    pieces.Open(0, run, &plan);  // opening the next run closes the last
    pieces.Add(0, kTensorCommLane, Us(10), Us(4));
  }
  pieces.Open(0, 2, &plan);
  pieces.Add(0, kTensorCommLane, Us(10), Us(5));
  pieces.CloseAll(&plan);
  EXPECT_EQ(plan.merged_runs.size(), 2u);
  EXPECT_EQ(plan.graph.task(0).tag, plan.graph.task(1).tag);
  EXPECT_NE(plan.graph.task(2).tag, plan.graph.task(0).tag);
  EXPECT_EQ(plan.run_pieces.size(), 4u);
}

TEST(RunPiecesTest, OpeningTheOpenRunAgainKeepsItsPieces) {
  StepPlan plan = PlanWithTasks(1);
  RunPieces pieces(2);
  pieces.Open(1, 0, &plan);
  pieces.Add(1, kTensorCommLane, Us(10), Us(4));
  pieces.Open(1, 0, &plan);
  pieces.CloseAll(&plan);
  ASSERT_EQ(plan.merged_runs.size(), 1u);
  EXPECT_EQ(plan.merged_runs[0].num_pieces, 2u);
}

}  // namespace
}  // namespace clustersim::strategies
