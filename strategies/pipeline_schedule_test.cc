#include "strategies/pipeline_schedule.h"

#include <map>
#include <tuple>

#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

// Every (micro-batch, chunk) runs forward once and its backward (or B then W)
// once, after its forward.
void ExpectComplete(const std::vector<PipelineAction>& a, int m, int v, bool split) {
  std::map<std::pair<int, int>, int> state;  // 1 after F, 2 after B, 3 after W
  for (const PipelineAction& x : a) {
    int& s = state[{x.microbatch, x.chunk}];
    switch (x.pass) {
      case Pass::kForward: EXPECT_EQ(s, 0); s = 1; break;
      case Pass::kBackward: EXPECT_FALSE(split); EXPECT_EQ(s, 1); s = 2; break;
      case Pass::kBackwardInput: EXPECT_TRUE(split); EXPECT_EQ(s, 1); s = 2; break;
      case Pass::kBackwardWeight: EXPECT_EQ(s, 2); s = 3; break;
    }
  }
  EXPECT_EQ(state.size(), static_cast<size_t>(m * v));
  for (const auto& [key, s] : state) EXPECT_EQ(s, split ? 3 : 2);
}

TEST(PipelineScheduleTest, EverySchedulePlaysEveryMicrobatchOnce) {
  for (int p : {1, 2, 4}) {
    for (int stage = 0; stage < p; ++stage) {
      ExpectComplete(ScheduleForStage(Schedule::kGPipe, stage, p, 8, 1), 8, 1, false);
      ExpectComplete(ScheduleForStage(Schedule::k1F1B, stage, p, 8, 1), 8, 1, false);
      ExpectComplete(ScheduleForStage(Schedule::k1F1B, stage, p, 2, 1), 2, 1, false);
      ExpectComplete(ScheduleForStage(Schedule::kInterleaved1F1B, stage, p, 8, 2), 8, 2, false);
      ExpectComplete(ScheduleForStage(Schedule::kZeroBubbleH1, stage, p, 8, 1), 8, 1, true);
    }
  }
}

TEST(PipelineScheduleTest, OneFOneBWarmsUpThenAlternates) {
  const auto a = ScheduleForStage(Schedule::k1F1B, 1, 4, 6, 1);
  // Stage 1 of 4: two warm-up forwards, then F B F B ..., then B B.
  const std::vector<PipelineAction> head = {{Pass::kForward, 0, 0}, {Pass::kForward, 1, 0},
                                            {Pass::kForward, 2, 0}, {Pass::kBackward, 0, 0},
                                            {Pass::kForward, 3, 0}, {Pass::kBackward, 1, 0}};
  EXPECT_EQ(std::vector<PipelineAction>(a.begin(), a.begin() + 6), head);
  EXPECT_EQ(a.back(), (PipelineAction{Pass::kBackward, 5, 0}));
}

TEST(PipelineScheduleTest, InFlightMicrobatchesMatchTheLiterature) {
  // GPipe keeps all m; 1F1B at most p on the first stage (Narayanan 2021 §2.2).
  EXPECT_EQ(PeakInFlight(ScheduleForStage(Schedule::kGPipe, 0, 4, 16, 1)), 16);
  EXPECT_EQ(PeakInFlight(ScheduleForStage(Schedule::k1F1B, 0, 4, 16, 1)), 4);
  EXPECT_EQ(PeakInFlight(ScheduleForStage(Schedule::k1F1B, 3, 4, 16, 1)), 1);
  // Interleaved: (p-1)*2 + (v-1)*p + 1 virtual micro-batches on stage 0.
  EXPECT_EQ(PeakInFlight(ScheduleForStage(Schedule::kInterleaved1F1B, 0, 4, 16, 2)),
            3 * 2 + 4 + 1);
  // ZB-H1 keeps 1F1B's activation memory.
  EXPECT_EQ(PeakInFlight(ScheduleForStage(Schedule::kZeroBubbleH1, 0, 4, 16, 1)), 4);
}

TEST(PipelineScheduleTest, ZeroBubbleDefersWeightGradientsOnEarlyStages) {
  const auto first = ScheduleForStage(Schedule::kZeroBubbleH1, 0, 4, 8, 1);
  const auto last = ScheduleForStage(Schedule::kZeroBubbleH1, 3, 4, 8, 1);
  // The last stage runs W right after B; the first stage holds W back.
  EXPECT_EQ(last[1].pass, Pass::kBackwardInput);
  EXPECT_EQ(last[2].pass, Pass::kBackwardWeight);
  EXPECT_EQ(first[3].pass, Pass::kForward);
  EXPECT_EQ(first[4].pass, Pass::kBackwardInput);
  EXPECT_EQ(first[5].pass, Pass::kForward);
}

TEST(PipelineScheduleTest, ParsesNames) {
  EXPECT_EQ(*ParseSchedule("interleaved-1f1b"), Schedule::kInterleaved1F1B);
  EXPECT_FALSE(ParseSchedule("2f2b").ok());
}

}  // namespace
}  // namespace clustersim::strategies
