#include "models/prediction_interval.h"

#include <string>

#include "gtest/gtest.h"

namespace clustersim::models {
namespace {

// 20 hopper rows of megatron-core at 8 GPUs with ratios 0.90..1.09, 5 ampere
// rows of pytorch-fsdp (too few for a band of their own).
std::vector<IntervalResidual> Residuals() {
  std::vector<IntervalResidual> r;
  for (int i = 0; i < 20; ++i) {
    r.push_back({i < 10 ? "A" : "B", "megatron-core", "hopper", 8, 0.90 + 0.01 * i});
  }
  for (int i = 0; i < 5; ++i) r.push_back({"C", "pytorch-fsdp", "ampere", 64, 1.2 + 0.1 * i});
  return r;
}

TEST(PredictionIntervalTest, GenerationsFromCatalogNames) {
  EXPECT_EQ(GpuGeneration("a100-sxm4-80gb"), "ampere");
  EXPECT_EQ(GpuGeneration("h200-sxm-141gb"), "hopper");
  EXPECT_EQ(GpuGeneration("b200-sxm-180gb"), "blackwell");
  EXPECT_EQ(GpuGeneration("rtx-4090"), "ada");
  EXPECT_EQ(GpuGeneration("apple-m2-ultra"), "");
}

TEST(PredictionIntervalTest, BandsAreQuantilesOfTheMostSpecificCategoryWithEnoughRows) {
  const std::vector<IntervalBand> bands = BuildBands(Residuals());
  // megatron-core x hopper x 1-64, x hopper, alone; hopper alone; all rows.
  ASSERT_EQ(bands.size(), 5u);
  EXPECT_EQ(bands[0].stack, "megatron-core");
  EXPECT_EQ(bands[0].min_gpus, 1);
  EXPECT_EQ(bands[0].max_gpus, 64);
  EXPECT_EQ(bands[0].rows, 20);
  EXPECT_EQ(bands[0].sources, 2);
  // Each of the 20 equal weights sits at the middle of its 1/20: the 10% point
  // lies halfway between the second and third values.
  EXPECT_NEAR(bands[0].p10, 0.915, 1e-12);
  EXPECT_NEAR(bands[0].p90, 1.075, 1e-12);
  EXPECT_TRUE(bands.back().stack.empty() && bands.back().generation.empty());
  EXPECT_EQ(bands.back().rows, 25);

  const StepInterval core = Lookup(bands, "megatron-core", "hopper", 8);
  EXPECT_TRUE(core.validated);
  EXPECT_EQ(core.category, "megatron-core on hopper, 1-64 GPUs");
  // A larger job of the same stack falls back to stack x generation.
  EXPECT_EQ(Lookup(bands, "megatron-core", "hopper", 1024).category,
            "megatron-core on hopper");
  // Another generation: the stack's band, not validated.
  const StepInterval other = Lookup(bands, "megatron-core", "ampere", 8);
  EXPECT_FALSE(other.validated);
  EXPECT_EQ(other.category, "megatron-core, every GPU");
  // Five FSDP rows make no band: every run's.
  const StepInterval fsdp = Lookup(bands, "pytorch-fsdp", "ampere", 64);
  EXPECT_FALSE(fsdp.validated);
  EXPECT_EQ(fsdp.category, "every run");
  EXPECT_EQ(fsdp.rows, 25);
}

// 18 rows of one source at 1.0 and 2 of another at 2.0: by rows the band
// would be [1, 1.x]; with every source weighing alike it reaches 2.
TEST(PredictionIntervalTest, EverySourceWeighsAlike) {
  std::vector<IntervalResidual> r;
  for (int i = 0; i < 18; ++i) r.push_back({"BIG", "megatron-core", "hopper", 8, 1.0});
  for (int i = 0; i < 2; ++i) r.push_back({"SMALL", "megatron-core", "hopper", 8, 2.0});
  const std::vector<IntervalBand> bands = BuildBands(r);
  EXPECT_DOUBLE_EQ(bands[0].p10, 1.0);
  EXPECT_DOUBLE_EQ(bands[0].p90, 2.0);
}

TEST(PredictionIntervalTest, FormatParsesBackAndBadFilesAreRefused) {
  const std::vector<IntervalBand> bands = BuildBands(Residuals());
  absl::StatusOr<PredictionIntervals> parsed =
      PredictionIntervals::Parse(PredictionIntervals::Format(bands, "test", 0.8), "f");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->bands().size(), bands.size());
  EXPECT_DOUBLE_EQ(parsed->coverage(), 0.8);
  EXPECT_DOUBLE_EQ(parsed->bands()[0].p90, bands[0].p90);
  EXPECT_NE(PredictionIntervals::Parse("band { stack: \"x\" p10: 1 p90: 1 }", "f")
                .status().message().find("no all-rows band"),
            std::string::npos);
  EXPECT_NE(PredictionIntervals::Parse("band { p10: 1.2 p90: 1.1 }", "f")
                .status().message().find("0 < p10 <= p90"),
            std::string::npos);
}

TEST(PredictionIntervalTest, ShippedBandsCoverEveryScenario) {
  const PredictionIntervals& shipped = PredictionIntervals::Default();
  const StepInterval i = shipped.Lookup("megatron-core", "h100-sxm5-80gb", 64);
  EXPECT_GT(i.p10, 0);
  EXPECT_LE(i.p10, i.p90);
  EXPECT_FALSE(shipped.Lookup("jax-xla", "apple-m2-ultra", 1).validated);
}

}  // namespace
}  // namespace clustersim::models
