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

}  // namespace
}  // namespace clustersim::viz
