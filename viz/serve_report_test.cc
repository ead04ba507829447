#include "viz/serve_report.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::viz {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

config::ServeResult Sample() {
  config::ServeResult r;
  r.set_name("demo <x>");
  r.set_model("llama3-8b");
  r.set_gpu("h100-sxm5-80gb");
  r.set_num_gpus(1);
  r.set_output_tokens_per_s(2000);
  r.mutable_tpot_ms()->set_p99(30);
  r.mutable_ttft_ms()->set_p99(200);
  r.mutable_sustainable()->set_target_tpot_ms(50);
  r.mutable_sustainable()->set_status("found");
  for (int i = 1; i <= 3; ++i) {
    config::ServeCurvePoint* p = r.add_curve();
    p->set_request_rate_per_s(i);
    p->set_output_tokens_per_s(1000 * i);
    p->set_tpot_p50_ms(10 * i);
    p->set_tpot_p99_ms(15 * i);
    p->set_ttft_p99_ms(100 * i);
  }
  return r;
}

TEST(ServeReportTest, PageHasTheCurvesTargetAndEscapedNames) {
  const std::string html = RenderServeReport(Sample());
  EXPECT_THAT(html, HasSubstr("<svg id=\"serve-curve-tpot\""));
  EXPECT_THAT(html, HasSubstr("<svg id=\"serve-curve-ttft\""));
  EXPECT_THAT(html, HasSubstr("id=\"serve-summary\""));
  EXPECT_THAT(html, HasSubstr("id=\"serve-memory\""));
  EXPECT_THAT(html, HasSubstr("class=\"target\""));
  EXPECT_THAT(html, HasSubstr("demo &lt;x&gt;"));
  EXPECT_THAT(html, ::testing::Not(HasSubstr("demo <x>")));
  // One polyline per series (TPOT p50, p99; TTFT p99), each through 3 points.
  size_t polylines = 0;
  for (size_t at = html.find("<polyline"); at != std::string::npos;
       at = html.find("<polyline", at + 1)) {
    ++polylines;
  }
  EXPECT_EQ(polylines, 3u);
  EXPECT_EQ(html, RenderServeReport(Sample()));  // deterministic
}

// Speculative decoding gets its table only when the result has it.
TEST(ServeReportTest, SpeculativeTableOnlyWhenSet) {
  config::ServeResult r = Sample();
  EXPECT_THAT(RenderServeReport(r), Not(HasSubstr("serve-speculative")));
  EXPECT_THAT(FormatServeSummary(r), Not(HasSubstr("speculative")));
  r.mutable_speculative()->set_method("draft");
  r.mutable_speculative()->set_draft_model("llama3-8b");
  r.mutable_speculative()->set_tpot_speedup(1.58);
  EXPECT_THAT(RenderServeReport(r), HasSubstr("id=\"serve-speculative\""));
  EXPECT_THAT(RenderServeReport(r), HasSubstr("draft (llama3-8b)"));
  EXPECT_THAT(FormatServeSummary(r), HasSubstr("TPOT p50 1.58x"));
}

TEST(ServeReportTest, SaturationIsShownInRed) {
  config::ServeResult r = Sample();
  r.set_saturated(true);
  r.set_saturation("saturated: the offered 50 req/s exceed the capacity");
  EXPECT_THAT(RenderServeReport(r), HasSubstr("<p class=\"saturated\">saturated: the offered"));
  EXPECT_THAT(FormatServeSummary(r), HasSubstr("saturated: the offered 50 req/s"));
}

TEST(ServeReportTest, NoCurveNoChart) {
  config::ServeResult r = Sample();
  r.clear_curve();
  EXPECT_THAT(RenderServeReport(r), ::testing::Not(HasSubstr("serve-curve")));
}

}  // namespace
}  // namespace clustersim::viz
