#include "viz/goodput_chart.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::viz {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

config::Goodput Sample() {
  config::Goodput g;
  g.set_trials(3);
  g.set_sample_run_days(2);
  config::RunEvent* e = g.add_sample_run();
  e->set_t_hours(24);
  e->set_kind("failure");
  e->set_cause("gpu<hbm>");
  g.add_sample_run()->set_kind("checkpoint");
  for (double d : {1.0, 1.5, 2.0}) g.add_histogram_edges_days(d);
  g.add_histogram_counts(1);
  g.add_histogram_counts(2);
  g.mutable_time_to_train_days()->set_p50(1.6);
  return g;
}

TEST(GoodputChartTest, TimelineMarksEventsAtTheirTimeWithEscapedCauses) {
  const std::string svg = GoodputTimelineSvg(Sample());
  EXPECT_THAT(svg, HasSubstr("id=\"goodput-timeline\""));
  // Day 1 of 2: halfway along the 1200-wide plot that starts at 60.
  EXPECT_THAT(svg, HasSubstr("x1=\"660.0\""));
  EXPECT_THAT(svg, HasSubstr("failure: gpu&lt;hbm&gt;"));
  EXPECT_THAT(svg, Not(HasSubstr("gpu<hbm>")));
  EXPECT_EQ(svg, GoodputTimelineSvg(Sample()));
}

TEST(GoodputChartTest, HistogramBarsScaleToTheTallestBin) {
  const std::string svg = GoodputHistogramSvg(Sample());
  EXPECT_THAT(svg, HasSubstr("id=\"goodput-histogram\""));
  EXPECT_THAT(svg, HasSubstr("height=\"160.0\" fill=\"#5dade2\"><title>2 trials"));
  EXPECT_THAT(svg, HasSubstr("height=\"80.0\" fill=\"#5dade2\"><title>1 trials"));
  EXPECT_THAT(svg, HasSubstr("p50 1.60 d"));
}

}  // namespace
}  // namespace clustersim::viz
