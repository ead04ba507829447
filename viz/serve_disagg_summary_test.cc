#include "viz/serve_disagg_summary.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::viz {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

config::ServeResult Result() {
  config::ServeResult r;
  r.set_name("d");
  r.set_model("llama3-8b");
  r.set_num_gpus(8);
  r.set_gpu("h100-sxm5-80gb");
  config::DisaggServeResult* d = r.mutable_disaggregated();
  d->set_routing("least-loaded");
  d->mutable_prefill()->set_instances(3);
  d->mutable_prefill()->set_tensor_parallel(1);
  d->mutable_prefill()->set_pipeline_parallel(1);
  d->mutable_prefill()->set_gpu_indices("0-2");
  d->mutable_prefill()->set_busy_fraction(0.25);
  d->mutable_kv_transfer()->set_transfers(400);
  d->mutable_kv_transfer()->set_total_gib(50);
  d->mutable_goodput()->set_status("found");
  d->mutable_goodput()->set_max_request_rate_per_s(40);
  d->mutable_goodput()->set_per_gpu(5);
  return r;
}

TEST(DisaggSummaryTest, ShowsPoolsTransfersAndGoodput) {
  const std::string s = FormatDisaggSummary(Result());
  EXPECT_THAT(s, HasSubstr("3 x tp 1 pp 1"));
  EXPECT_THAT(s, HasSubstr("(GPUs 0-2)"));
  EXPECT_THAT(s, HasSubstr("busy 25.0%"));
  EXPECT_THAT(s, HasSubstr("400 transfers, 50.00 GiB"));
  EXPECT_THAT(s, HasSubstr("40.000 req/s, 5.000 per GPU (found"));
  EXPECT_THAT(s, Not(HasSubstr("ratio search")));
}

TEST(DisaggSummaryTest, ListsSearchCandidatesInTheirOrder) {
  config::ServeResult r = Result();
  config::DisaggCandidate* a = r.mutable_disaggregated()->add_search();
  a->set_prefill_instances(2);
  a->set_prefill_tp(1);
  a->set_decode_instances(1);
  a->set_decode_tp(2);
  a->set_num_gpus(4);
  a->set_goodput_per_gpu(2.5);
  config::DisaggCandidate* b = r.mutable_disaggregated()->add_search();
  b->set_prefill_instances(4);
  b->set_prefill_tp(1);
  b->set_num_gpus(4);
  const std::string s = FormatDisaggSummary(r);
  EXPECT_THAT(s, HasSubstr("ratio search"));
  EXPECT_LT(s.find("2P tp1 : 1D tp2"), s.find("colocated 4x tp1"));
}

}  // namespace
}  // namespace clustersim::viz
