// The deployment search's text table and HTML page: the rows in rank order,
// the front marked, names escaped, the same result giving the same bytes.
#include "viz/deployment_search_report.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::viz {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

config::DeploymentSearchResult Result() {
  config::DeploymentSearchResult r;
  r.set_model("llama<3>");
  r.set_request_rate_per_s(10);
  r.set_target_tpot_ms(50);
  r.set_top_rows(2);
  r.set_method("3 candidates");
  r.set_meeting_slo(2);
  r.set_simulated(3);
  auto add = [&](const std::string& name, int rank, bool meets, bool pareto, double cost,
                 double tpot) {
    config::DeploymentCandidate* c = r.add_candidate();
    c->set_name(name);
    c->set_rank(rank);
    c->set_gpu("h100-sxm5-80gb");
    c->set_mode("aggregated");
    c->set_replicas(2);
    c->set_tensor_parallel(1);
    c->set_pipeline_parallel(1);
    c->set_num_gpus(2);
    c->set_weight_dtype("fp8");
    c->set_kv_cache_dtype("fp8");
    c->set_max_batch_size(64);
    c->set_simulated(true);
    c->set_meets_slo(meets);
    c->set_pareto(pareto);
    c->set_usd_per_million_output_tokens(cost);
    c->set_tpot_p99_ms(tpot);
    c->set_usd_per_hour(24.58);
    c->set_reproduce("--gpu h100-sxm5-80gb --num-gpus 2");
    if (!meets) c->set_reason("p99 TPOT 80 ms > 50 ms");
  };
  add("cheap <b>", 1, true, true, 1.5, 40);
  add("fast", 2, true, true, 3.0, 20);
  add("slow", 3, false, false, 0.9, 80);
  return r;
}

TEST(DeploymentSearchReportTest, TextListsTheTopRowsAndHowToRunTheBest) {
  const std::string text = FormatDeploymentSearch(Result());
  EXPECT_THAT(text, HasSubstr("llama<3> at 10.000 req/s, p99 TPOT <= 50 ms"));
  EXPECT_THAT(text, HasSubstr("2 x tp1 pp1"));
  EXPECT_THAT(text, HasSubstr("yes*"));
  EXPECT_THAT(text, HasSubstr("1 more rows"));
  EXPECT_THAT(text, Not(HasSubstr("p99 TPOT 80 ms")));  // row 3 is past top_rows
  EXPECT_THAT(text, HasSubstr("cheapest  cheap <b>: 1.500 $/M output tokens"));
  EXPECT_THAT(text, HasSubstr("run alone clustersim serve <model and workload> --gpu"));
}

TEST(DeploymentSearchReportTest, NoneMeetingSaysHowToRelax) {
  config::DeploymentSearchResult r = Result();
  r.mutable_candidate()->DeleteSubrange(0, 2);
  EXPECT_THAT(FormatDeploymentSearch(r), HasSubstr("none meets the targets"));
  EXPECT_THAT(RenderDeploymentSearchReport(r), HasSubstr("No candidate meets the targets"));
}

TEST(DeploymentSearchReportTest, HtmlDrawsTheFrontEscapedAndDeterministic) {
  const std::string html = RenderDeploymentSearchReport(Result());
  EXPECT_EQ(html, RenderDeploymentSearchReport(Result()));
  EXPECT_THAT(html, HasSubstr("id=\"deploy-pareto\""));
  EXPECT_THAT(html, HasSubstr("class=\"front\" points="));
  EXPECT_THAT(html, HasSubstr("id=\"deploy-ranking\""));
  EXPECT_THAT(html, HasSubstr("id=\"deploy-front\""));
  EXPECT_THAT(html, HasSubstr("cheap &lt;b&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("<b>:")));
  EXPECT_THAT(html, HasSubstr("llama&lt;3&gt;"));
  // Two front points in red, the missing candidate not plotted.
  size_t red = 0;
  for (size_t p = html.find("fill=\"#c00\"><title>"); p != std::string::npos;
       p = html.find("fill=\"#c00\"><title>", p + 1)) {
    ++red;
  }
  EXPECT_EQ(red, 2u);
  EXPECT_THAT(html, Not(HasSubstr("slow:")));
}

}  // namespace
}  // namespace clustersim::viz
