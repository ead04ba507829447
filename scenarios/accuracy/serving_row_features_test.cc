#include "scenarios/accuracy/serving_row_features.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

sim::CsvTable Parse(const std::string& rows) {
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(
      "id,tp,spec_method,spec_tokens,acceptance_len,disagg_prefill,disagg_decode\n" + rows,
      "t.csv");
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : sim::CsvTable{};
}

TEST(AcceptanceRateTest, InvertsTheExpectedTokensPerStep) {
  // k 1: L = 1 + a. k 3, a 0.5: L = 1 + 0.5 + 0.25 + 0.125 = 1.875.
  EXPECT_NEAR(*AcceptanceRateFromLength(1.6, 1), 0.6, 1e-9);
  EXPECT_NEAR(*AcceptanceRateFromLength(1.875, 3), 0.5, 1e-9);
  EXPECT_NEAR(*AcceptanceRateFromLength(1.0, 4), 0.0, 1e-9);
  EXPECT_NEAR(*AcceptanceRateFromLength(5.0, 4), 1.0, 1e-9);
  EXPECT_THAT(AcceptanceRateFromLength(0.9, 3).status().message(),
              HasSubstr("must be in [1, k + 1]"));
  EXPECT_FALSE(AcceptanceRateFromLength(4.5, 3).ok());
  EXPECT_FALSE(AcceptanceRateFromLength(2, 0).ok());
}

TEST(SpeculativeRowTest, MapsOnlyWithAStatedAcceptanceLength) {
  const sim::CsvTable t = Parse(
      "a,1,eagle3,3,1.875,,\n"
      "b,1,mtp,3,,,\n"
      "c,1,draft-target,4,2.5,,\n"
      "d,1,mtp-relaxed,,2.0,,\n"
      "e,1,eagle2,3,9,,\n");
  const SpeculativeRow a = MapSpeculativeRow(t, t.rows[0]);
  EXPECT_EQ(a.needs, "");
  EXPECT_EQ(a.method, "eagle");
  EXPECT_EQ(a.num_tokens, 3);
  EXPECT_NEAR(a.acceptance_rate, 0.5, 1e-9);
  EXPECT_THAT(MapSpeculativeRow(t, t.rows[1]).needs,
              HasSubstr("speculative decoding (mtp): the acceptance length the source does not "
                        "state"));
  EXPECT_THAT(MapSpeculativeRow(t, t.rows[2]).needs, HasSubstr("the draft model"));
  EXPECT_THAT(MapSpeculativeRow(t, t.rows[3]).needs, HasSubstr("the number of draft tokens"));
  EXPECT_THAT(MapSpeculativeRow(t, t.rows[4]).needs, HasSubstr("acceptance_len '9'"));
}

TEST(DisaggregatedRowTest, NeedsBothPoolsGpuCountsAndTp) {
  const sim::CsvTable t = Parse(
      "a,4,,,,2 nodes (8 GPUs),12 nodes (48 GPUs)\n"
      "b,4,,,,2-node groups (per reproduction scripts),12 nodes (per reproduction scripts)\n"
      "c,,,,,2 nodes (8 GPUs),12 nodes (48 GPUs)\n");
  const DisaggregatedRow a = MapDisaggregatedRow(t, t.rows[0]);
  EXPECT_EQ(a.needs, "");
  EXPECT_EQ(a.prefill_gpus, 8);
  EXPECT_EQ(a.decode_gpus, 48);
  EXPECT_EQ(a.tp, 4);
  EXPECT_THAT(MapDisaggregatedRow(t, t.rows[1]).needs, HasSubstr("both pools' GPU counts"));
  EXPECT_THAT(MapDisaggregatedRow(t, t.rows[2]).needs, HasSubstr("tensor parallelism"));
}

}  // namespace
}  // namespace clustersim::scenarios
