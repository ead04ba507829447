#include "scenarios/accuracy/inferred_tp.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

// 1 GB = 1e9 B in the catalog's sense; the rule works in GiB.
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

TEST(InferServingTpTest, SmallestPowerOfTwoUnderHalfTheMemory) {
  // 70 GiB of weights on 80 GiB GPUs: tp 1 is 87.5% of memory, tp 2 is 43.75%.
  absl::StatusOr<InferredTp> tp = InferServingTp(
      {.params = 70 * kGiB, .weight_bytes = 1, .device_memory_gib = 80, .num_devices = 8});
  ASSERT_TRUE(tp.ok()) << tp.status();
  EXPECT_EQ(tp->tp, 2);
  EXPECT_DOUBLE_EQ(tp->weights_gib_per_gpu, 35);
  EXPECT_THAT(tp->text, HasSubstr("tp 2 inferred"));
  EXPECT_THAT(tp->text, HasSubstr("4 replica(s)"));
}

TEST(InferServingTpTest, ExactlyHalfFits) {
  absl::StatusOr<InferredTp> tp = InferServingTp(
      {.params = 40 * kGiB, .weight_bytes = 2, .device_memory_gib = 160, .num_devices = 1});
  ASSERT_TRUE(tp.ok()) << tp.status();
  EXPECT_EQ(tp->tp, 1);
}

TEST(InferServingTpTest, TpDividesTheGpuCount) {
  // Needs tp 4 by memory; with 6 GPUs the powers of two dividing it are 1, 2.
  absl::StatusOr<InferredTp> tp = InferServingTp(
      {.params = 300 * kGiB, .weight_bytes = 1, .device_memory_gib = 180, .num_devices = 6});
  EXPECT_FALSE(tp.ok());
  EXPECT_THAT(tp.status().message(), HasSubstr("state the row's tp"));
  // On 8 GPUs tp 4 holds 75 GiB of the 180 GiB.
  tp = InferServingTp(
      {.params = 300 * kGiB, .weight_bytes = 1, .device_memory_gib = 180, .num_devices = 8});
  ASSERT_TRUE(tp.ok()) << tp.status();
  EXPECT_EQ(tp->tp, 4);
}

TEST(InferServingTpTest, RejectsBadInput) {
  for (const InferredTpInput& in :
       {InferredTpInput{.params = 0, .weight_bytes = 1, .device_memory_gib = 80, .num_devices = 8},
        InferredTpInput{
            .params = 1e9, .weight_bytes = 0, .device_memory_gib = 80, .num_devices = 8},
        InferredTpInput{.params = 1e9, .weight_bytes = 1, .device_memory_gib = 0, .num_devices = 8},
        InferredTpInput{
            .params = 1e9, .weight_bytes = 1, .device_memory_gib = 80, .num_devices = 0}}) {
    absl::StatusOr<InferredTp> tp = InferServingTp(in);
    EXPECT_FALSE(tp.ok());
    EXPECT_THAT(tp.status().message(), HasSubstr("state the row's tp instead"));
  }
}

}  // namespace
}  // namespace clustersim::scenarios
