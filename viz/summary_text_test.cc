#include "viz/summary_text.h"

#include "gtest/gtest.h"

namespace clustersim::viz {
namespace {

TEST(SummaryTextTest, ShowsKeyNumbersAndVerdict) {
  config::Result r;
  r.set_step_time_s(1.25);
  r.set_mfu(0.415);
  r.set_peak_memory_gib(90.5);
  r.set_memory_capacity_gib(80);
  r.set_fits_in_memory(false);
  r.mutable_scenario()->set_name("demo");
  const std::string text = FormatSummary(r);
  EXPECT_NE(text.find("clustersim: demo"), std::string::npos);
  EXPECT_NE(text.find("1.2500 s"), std::string::npos);
  EXPECT_NE(text.find("MFU 41.5%"), std::string::npos);
  EXPECT_NE(text.find("DOES NOT FIT"), std::string::npos);
}

// Full recompute's method and layer count show beside the granularity when
// the scenario sets them, and not otherwise.
TEST(SummaryTextTest, ShowsTheRecomputeMethodWhenSet) {
  config::Result r;
  config::TrainingConfig* t = r.mutable_scenario()->mutable_training();
  t->set_recompute_granularity("full");
  EXPECT_NE(FormatSummary(r).find("recompute full, "), std::string::npos);
  t->set_recompute_method("block");
  t->set_recompute_num_layers(5);
  EXPECT_NE(FormatSummary(r).find("recompute full (block, 5 layers per chunk)"), std::string::npos);
  t->set_recompute_method("uniform");
  t->set_recompute_num_layers(2);
  EXPECT_NE(FormatSummary(r).find("recompute full (uniform, 2 layers per checkpoint)"),
            std::string::npos);
}

}  // namespace
}  // namespace clustersim::viz
