#include "viz/study_report.h"

#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::viz {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

StudyRow Row(std::string label, double days, double dollars, bool fits = true) {
  StudyRow r;
  r.label = std::move(label);
  r.time_to_train_s = days * 86400;
  r.dollars = dollars;
  r.fits = fits;
  r.step_time_s = days;  // any positive value
  r.tokens_per_s = 1e6 / days;
  r.mfu = 0.4;
  r.memory_gib = 60;
  return r;
}

// A hand-made set: by (days, $M)
//   a (10, 9)   front: fastest
//   b (12, 6)   front
//   c (12, 7)   dominated by b (same time, dearer)
//   d (15, 6)   dominated by b (slower, same cost)
//   e (20, 4)   front: cheapest that fits
//   f (8, 3)    would dominate all, but does not fit: never on the front
//   g (20, 4)   ties e exactly: on the front with it
//   h (25, 5)   dominated by e
//   i (NaN)     not finite: never on the front
TEST(StudyReportTest, ParetoFrontOfAHandMadeSet) {
  const std::vector<StudyRow> rows = {
      Row("a", 10, 9e6), Row("b", 12, 6e6), Row("c", 12, 7e6), Row("d", 15, 6e6),
      Row("e", 20, 4e6), Row("f", 8, 3e6, /*fits=*/false), Row("g", 20, 4e6), Row("h", 25, 5e6),
      Row("i", std::numeric_limits<double>::quiet_NaN(), 1e6)};
  EXPECT_THAT(ParetoFront(rows),
              ElementsAre(true, true, false, false, true, false, true, false, false));
}

TEST(StudyReportTest, FrontOfOneAndOfNone) {
  EXPECT_THAT(ParetoFront({Row("only", 3, 1)}), ElementsAre(true));
  EXPECT_THAT(ParetoFront({Row("x", 3, 1, false), Row("y", 1, 3, false)}),
              ElementsAre(false, false));
  EXPECT_TRUE(ParetoFront({}).empty());
}

TEST(StudyReportTest, OrderIsTimeThenCostThenLabel) {
  const std::vector<StudyRow> rows = {Row("z", 2, 5), Row("b", 1, 9), Row("a", 2, 5),
                                      Row("c", 2, 4)};
  EXPECT_THAT(StudyOrder(rows), ElementsAre(1, 3, 2, 0));
}

TEST(StudyReportTest, PageHoldsTableAndScatterWithTheFrontMarked) {
  const std::vector<StudyRow> rows = {Row("tp8 pp4 <fast>", 10, 9e6), Row("tp4 pp8", 12, 6e6),
                                      Row("tp2 pp16", 15, 7e6),
                                      Row("tp1 pp32", 9, 5e6, /*fits=*/false)};
  const std::string html = RenderStudyReport(
      rows, {.title = "GPT-3 175B study", .subtitle = "1024 H100", .memory_capacity_gib = 80});
  EXPECT_THAT(html, HasSubstr("<table id=\"study-table\""));
  EXPECT_THAT(html, HasSubstr("<svg id=\"study-scatter\""));
  EXPECT_THAT(html, HasSubstr("4 candidates, 3 fit in memory, 2 on the Pareto front"));
  EXPECT_THAT(html, HasSubstr("tp8 pp4 &lt;fast&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("<fast>")));
  EXPECT_THAT(html, HasSubstr("(of 80 GiB)"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"front\"><td class=\"label\">tp4 pp8</td>"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"nofit\"><td class=\"label\">tp1 pp32</td>"));
  EXPECT_THAT(html, HasSubstr("<tr><td class=\"label\">tp2 pp16</td>"));
  EXPECT_THAT(html, HasSubstr("time to train (days)"));
  // Two red front dots and a hollow one for the candidate that does not fit.
  size_t dots = 0;
  for (size_t at = html.find("class=\"front\"><title>"); at != std::string::npos;
       at = html.find("class=\"front\"><title>", at + 1)) {
    ++dots;
  }
  EXPECT_EQ(dots, 2u);
  EXPECT_THAT(html, HasSubstr("class=\"nofit\"><title>tp1 pp32: 9.0 days, $5000000 (does not "
                              "fit)</title>"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("src=")));  // self-contained: nothing to fetch
  EXPECT_THAT(html, Not(HasSubstr("href=")));
  EXPECT_EQ(html, RenderStudyReport(rows, {.title = "GPT-3 175B study", .subtitle = "1024 H100",
                                           .memory_capacity_gib = 80}));
}

// Without a run length the axes are step time and dollars per million tokens
// (in time_to_train_s and dollars); every label says so, and the step-time
// column is not repeated.
TEST(StudyReportTest, StepAxesRelabelTableAndScatter) {
  std::vector<StudyRow> rows = {Row("fast", 1, 0.0125), Row("cheap", 2, 0.01)};
  for (StudyRow& r : rows) r.time_to_train_s = r.step_time_s;
  const std::string html = RenderStudyReport(rows, {.step_axes = true});
  EXPECT_THAT(html, HasSubstr("on the Pareto front of step time and $ per million tokens"));
  EXPECT_THAT(html, HasSubstr(">step time &#9650;</th><th>$ per million tokens</th>"));
  EXPECT_THAT(html, HasSubstr("step time (seconds)</text>"));
  EXPECT_THAT(html, Not(HasSubstr("<th>step time</th>")));
  EXPECT_THAT(html, Not(HasSubstr("time to train")));
  EXPECT_THAT(html, HasSubstr("<td>$0.0125</td></tr>"));  // small costs keep four decimals
  EXPECT_THAT(html, HasSubstr("2 on the Pareto front"));
}

}  // namespace
}  // namespace clustersim::viz
