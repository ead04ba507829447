// Straggler draws, their validation, and the straggled step through the runner.
#include "scenarios/run/stragglers.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/input/resolve.h"
#include "scenarios/run/runner.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

config::Scenario WithStragglers(double fraction, double spread, int gpus) {
  config::Scenario s;
  s.mutable_model()->set_preset("llama2-7b");
  s.mutable_model()->set_num_layers(4);
  s.mutable_cluster()->set_gpu("h100-sxm5-80gb");
  s.mutable_cluster()->set_num_gpus(gpus);
  s.mutable_parallelism()->set_tensor_model_parallel_size(2);
  s.mutable_training()->set_global_batch_size(gpus);
  s.mutable_training()->set_micro_batch_size(1);
  config::StragglerConfig* st = s.mutable_reliability()->mutable_stragglers();
  st->set_slow_gpu_fraction(fraction);
  st->set_throughput_spread(spread);
  return s;
}

TEST(StragglersTest, OutOfRangeFieldsNameThemselves) {
  const struct {
    const char* field;
    double value;
  } cases[] = {{"slow_gpu_fraction", 1.5},   {"slow_gpu_fraction", -0.1},
               {"slow_gpu_throughput", 0},   {"slow_gpu_throughput", 1.2},
               {"throughput_spread", -0.01}, {"throughput_spread", 0.5}};
  for (const auto& c : cases) {
    config::Scenario s = WithStragglers(0.01, 0, 8);
    const google::protobuf::FieldDescriptor* f =
        config::StragglerConfig::descriptor()->FindFieldByName(c.field);
    s.mutable_reliability()->mutable_stragglers()->GetReflection()->SetDouble(
        s.mutable_reliability()->mutable_stragglers(), f, c.value);
    const absl::Status st = ResolveStragglers(s).status();
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_THAT(st.message(), HasSubstr(std::string("reliability.stragglers.") + c.field));
  }
}

TEST(StragglersTest, DrawsMatchTheirDistribution) {
  const StragglerSpec spec{
      .slow_gpu_fraction = 0.1, .slow_gpu_throughput = 0.5, .throughput_spread = 0.0, .seed = 7};
  const int n = 100000;
  const GpuDraws d = DrawGpus(spec, n);
  // Binomial(n, 0.1): sd ~95; within 5 sd.
  EXPECT_NEAR(d.slow_gpus, 10000, 475);
  int halves = 0;
  for (double t : d.throughput) halves += t == 0.5 ? 1 : 0;
  EXPECT_EQ(halves, d.slow_gpus);

  const GpuDraws spread = DrawGpus({.throughput_spread = 0.05, .seed = 3}, n);
  double sum = 0, sq = 0, lo = 1, hi = 1;
  for (double t : spread.throughput) {
    sum += t;
    sq += t * t;
    lo = std::min(lo, t);
    hi = std::max(hi, t);
  }
  const double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
  EXPECT_NEAR(mean, 1.0, 0.002);
  EXPECT_NEAR(sd, 0.05, 0.002);  // the 3-sigma clip trims 0.3% of draws
  EXPECT_GE(lo, 1 - 3 * 0.05 - 1e-12);
  EXPECT_LE(hi, 1 + 3 * 0.05 + 1e-12);
}

TEST(StragglersTest, AGpuDrawsTheSameAtEveryClusterSize) {
  const StragglerSpec spec{.slow_gpu_fraction = 0.2, .throughput_spread = 0.03, .seed = 5};
  const GpuDraws small = DrawGpus(spec, 64);
  const GpuDraws large = DrawGpus(spec, 4096);
  for (int g = 0; g < 64; ++g) EXPECT_EQ(small.throughput[g], large.throughput[g]);
}

TEST(StragglersTest, NoStragglersGiveTheNominalStep) {
  absl::StatusOr<ResolvedScenario> r = Resolve(WithStragglers(0, 0, 16));
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<config::Result> out = RunScenario(*r, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->has_stragglers());
  EXPECT_EQ(out->stragglers().tax(), 0);
  EXPECT_EQ(out->step_time_s(), out->stragglers().nominal_step_time_s());
  EXPECT_FALSE(out->has_goodput());  // stragglers alone, no run length
}

TEST(StragglersTest, TaxGrowsWithScale) {
  // 1% slow GPUs at two thirds speed: 16 GPUs likely have none, 512 several.
  double previous = -1;
  for (int gpus : {16, 128, 512}) {
    absl::StatusOr<ResolvedScenario> r = Resolve(WithStragglers(0.01, 0.02, gpus));
    ASSERT_TRUE(r.ok()) << r.status();
    absl::StatusOr<config::Result> out = RunScenario(*r, {});
    ASSERT_TRUE(out.ok()) << out.status();
    const config::Stragglers& s = out->stragglers();
    EXPECT_GE(s.tax(), previous) << gpus << " GPUs";
    // The step is at most every op at the slowest GPU's pace.
    EXPECT_LE(1 + s.tax(), 1 / s.slowest_throughput() + 1e-9);
    previous = s.tax();
    RecordProperty("tax_at_" + std::to_string(gpus), std::to_string(s.tax()));
  }
  EXPECT_GT(previous, 0.2);
}

}  // namespace
}  // namespace clustersim::scenarios
