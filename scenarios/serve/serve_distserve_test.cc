// DistServe reproduction: OPT-13B serving a chatbot (ShareGPT) on A100-80GB,
// disaggregated (DistServe) against colocated (vLLM), by goodput per GPU
// under DistServe's SLOs.
//
// Sources (stored public material):
//   [A] LLMServe/DistServe evaluation/ae-scripts/e2e/_plot.py (plot_fig8_upper):
//       OPT-13B ShareGPT, TTFT SLO 0.25 s, TPOT SLO 0.1 s, 90% attainment;
//       DistServe on 3 GPUs against vLLM on 1.
//   [B] LLMServe/DistServe evaluation/2-benchmark-serving/2-start-api-server.py:
//       DistServe OPT-13B (context tp 2, pp 1; decoding tp 1, pp 1), block 16,
//       gpu-memory-utilization 0.95, context batch <= 128 and <= 8192 tokens,
//       decoding batch <= 1024; vLLM tp 1, --dtype half,
//       max-num-batched-tokens 16384, max-num-seqs 1024.
//   [C] LLMServe/DistServe simdistserve/README.md: OPT-13B, ShareGPT, one
//       node of 4 A100 80GB, TTFT 200 ms and TPOT 100 ms at 90%: "Best per
//       GPU rate: 1.56" with tp_prefill 2, tp_decode 1 (3 GPUs).
// Not found in the stored material: ShareGPT's length distribution after
// DistServe's preprocessing (0-prepare-dataset.py: multi-turn prompts, OPT
// tokenizer, prompt + output < 2048). Assumed here, fixed before any run and
// not tuned: prompt ~ normal(755, 500) clipped to [4, 1536], output ~
// normal(200, 150) clipped to [4, 511] (means as recalled from the paper's
// Figure 7; unverified).
#include <cstdlib>
#include <iostream>

#include "gtest/gtest.h"
#include "scenarios/serve/serve_disagg_resolve.h"
#include "scenarios/serve/serve_disagg_runner.h"
#include "scenarios/serve/serve_goodput.h"

namespace clustersim::scenarios {
namespace {

config::Scenario Chatbot(double ttft_ms) {
  config::Scenario s;
  s.set_name("distserve-opt13b-sharegpt");
  s.mutable_cluster()->set_gpu("a100-sxm4-80gb");
  s.mutable_model()->set_preset("opt-13b");
  config::InferenceConfig* inf = s.mutable_inference();
  inf->set_weight_dtype("fp16");
  inf->set_memory_utilization(0.95);
  inf->set_max_batch_size(1024);
  inf->set_max_tokens_per_step(16384);
  inf->set_target_time_to_first_token_ms(ttft_ms);
  inf->set_target_time_per_output_token_ms(100);
  config::InferenceWorkload* w = inf->mutable_workload();
  w->set_kind("poisson");
  w->set_request_rate_per_s(1);
  w->set_num_requests(300);
  w->set_seed(0);
  config::LengthDistribution* p = w->mutable_prompt_length();
  p->set_kind("normal");
  p->set_mean(755);
  p->set_stddev(500);
  p->set_min(4);
  p->set_max(1536);
  config::LengthDistribution* o = w->mutable_output_length();
  o->set_kind("normal");
  o->set_mean(200);
  o->set_stddev(150);
  o->set_min(4);
  o->set_max(511);
  return s;
}

config::Scenario DistServe(double ttft_ms) {
  config::Scenario s = Chatbot(ttft_ms);
  config::DisaggregatedConfig* d = s.mutable_inference()->mutable_disaggregated();
  d->mutable_prefill()->set_num_instances(1);
  d->mutable_prefill()->set_tensor_parallel_size(2);
  d->mutable_prefill()->set_max_batch_size(128);
  d->mutable_prefill()->set_max_tokens_per_step(8192);
  d->mutable_decode()->set_num_instances(1);
  d->mutable_decode()->set_tensor_parallel_size(1);
  d->mutable_decode()->set_max_batch_size(1024);
  d->set_slo_attainment(0.9);
  return s;
}

double DisaggGoodputPerGpu(const config::Scenario& s) {
  absl::StatusOr<ResolvedDisagg> r = ResolveDisagg(s);
  EXPECT_TRUE(r.ok()) << r.status();
  absl::StatusOr<config::ServeResult> result = RunDisaggServe(*r, s, {});
  EXPECT_TRUE(result.ok()) << result.status();
  EXPECT_NE(result->disaggregated().goodput().status(), "unreachable");
  return result->disaggregated().goodput().per_gpu();
}

double VllmGoodputPerGpu(const config::Scenario& s) {
  absl::StatusOr<ResolvedServe> r = ResolveServe(s);
  EXPECT_TRUE(r.ok()) << r.status();
  const SloTargets t{.ttft_ms = r->target_ttft_ms, .tpot_ms = r->target_tpot_ms, .attainment = 0.9};
  absl::StatusOr<GoodputFound> g = ColocatedGoodput(*r, t);
  EXPECT_TRUE(g.ok()) << g.status();
  return g->rate_per_s / r->num_gpus;
}

// [A], [B]: DistServe measured its 3-GPU deployment serving more requests per
// GPU within both SLOs than vLLM on 1 GPU. MISSES: this model gives DistServe
// 1.81 req/s/GPU but the colocated vLLM-style replica 3.23 (ratio 0.56): the
// colocated scheduler meets the loose 100 ms TPOT target with prefill stalls
// included and keeps 90% of TTFTs under 250 ms up to ~3.2 req/s, more than
// the vLLM that DistServe measured. Disabled rather than tuned; run it with
// --gtest_also_run_disabled_tests (docs/serving.md says so too).
TEST(DistServeReproductionTest, DISABLED_MissesDisaggregationBeatsColocationPerGpuOnOpt13bChatbot) {
  const double distserve = DisaggGoodputPerGpu(DistServe(250));
  const double vllm = VllmGoodputPerGpu(Chatbot(250));
  std::cout << "OPT-13B chatbot, TTFT 250 ms / TPOT 100 ms at 90%: DistServe " << distserve
            << " req/s/GPU, vLLM " << vllm << " req/s/GPU, ratio " << distserve / vllm << "\n";
  EXPECT_GT(distserve, vllm);
}

// [C]: DistServe's own simulator puts the same deployment at 1.56 req/s per
// GPU under a 200 ms TTFT; within 25%.
TEST(DistServeReproductionTest, DistServeGoodputPerGpuWithin25PercentOfItsSimulator) {
  const double distserve = DisaggGoodputPerGpu(DistServe(200));
  std::cout << "OPT-13B chatbot, TTFT 200 ms / TPOT 100 ms at 90%: DistServe " << distserve
            << " req/s/GPU (DistServe's simulator: 1.56)\n";
  EXPECT_NEAR(distserve / 1.56, 1.0, 0.25);
}

}  // namespace
}  // namespace clustersim::scenarios
