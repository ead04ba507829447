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
//   [D] LLMServe/DistServe at commit 20a1633ed6f2be5f456d84d1c283865c3e5112d5,
//       simdistserve/benchmarks/alignment/data-ground-truth/opt-13b-sharegpt/:
//       the per-request records of DistServe's own measured runs (prompt_len,
//       output_len, ttft_ms, tpot_ms), OPT-13B on A100 80GB, ShareGPT after
//       DistServe's preprocessing. testdata/distserve-opt13b-sharegpt-300.csv
//       holds the prompt and output lengths of the 300 requests of vllm-300-3
//       (the same 300 as distserve-c21d11-300-3), nothing else.
//       Attainment of TTFT <= 250 ms and TPOT <= 100 ms in those records:
//       vLLM on 1 GPU 0.86 at 1 req/s, 0.85 at 1.5, 0.67 at 2; DistServe
//       (context tp 2, decoding tp 1: 3 GPUs) 0.98 at 3 req/s, 0.96 at 4.5,
//       0.65 at 6. So measured goodput per GPU at 90%: vLLM below 1.0,
//       DistServe between 1.5 and 2.0.
//   [E] LLMServe/DistServe at commit 87143bf (2024-04-25, "Init commit of
//       simulator"), simdistserve/estimators/profile_data/
//       profiler-a100-80g.{vllm,distserve}.json: single forward passes timed
//       by evaluation/0-test-single-forward-performance (vLLM v0.2.3 through
//       vllm.LLM.generate(timing=True); DistServe's SwiftTransformer), fitted
//       there as prefill ms = a + b*N + c*N^2 over the N prompt tokens of a
//       batch. Commit 4c68ed9 ("Realign the curve", 2024-05-01) multiplies
//       these by 1.4 (vLLM) and 1.1 (DistServe) to match the measured serving
//       runs; simdistserve/estimators/time_estimator.py held those factors
//       (f = 1.4, f = 1.1) in code before that commit. The raw profiles are
//       the kernels' time; the factors are fitted, not explained.
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>

#include "gtest/gtest.h"
#include "scenarios/serve/serve_disagg_resolve.h"
#include "scenarios/serve/serve_disagg_runner.h"
#include "scenarios/serve/serve_goodput.h"
#include "scenarios/serve/serve_resolve.h"
#include "scenarios/serve/serve_runner.h"

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
  w->set_lengths_file(std::string(std::getenv("CLUSTERSIM_SOURCE_DIR")) +
                      "/scenarios/serve/testdata/distserve-opt13b-sharegpt-300.csv");
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

// [A], [B], [D]: DistServe measured its 3-GPU deployment serving more requests
// per GPU within both SLOs than vLLM on 1 GPU (at 90%: 1.5-2.0 against below
// 1.0). MISSES: with the measured runs' own request lengths this model gives
// DistServe 1.85 req/s/GPU but the colocated vLLM-style replica 2.71 (ratio
// 0.68). The records of [D] show why: vLLM's TTFT on an idle server was about
// 140 ms for 800-token prompts, 215 ms for 1,400 and 270 ms for 1,950, where
// this model's OPT-13B prefill on A100 takes 91, 163 and 202 ms; prompts above
// about 1,750 tokens (8% of the requests) never met the 250 ms TTFT on one GPU,
// capping the measured attainment at 0.86 even at 1 req/s, while here every
// prompt fits. The kernels are not the gap: vLLM v0.2.3's own single forward
// pass ([E]) takes 57, 100, 168 and 233 ms for 400 to 1,950 tokens, and
// PrefillMatchesDistServeSingleForwardProfiles below holds this model within
// 20% of it (-3% to -14%). The served TTFT adds a further ~40 ms per prompt at
// every length (140 - 100, 215 - 168, 270 - 233) in vLLM v0.2.3's serving
// path, which DistServe's own simulator covers with its fitted 1.4x and which
// no source held here explains. Disabled rather than tuned; run it with
// --gtest_also_run_disabled_tests (docs/serving.md says so too).
TEST(DistServeReproductionTest, DISABLED_MissesDisaggregationBeatsColocationPerGpuOnOpt13bChatbot) {
  const double distserve = DisaggGoodputPerGpu(DistServe(250));
  const double vllm = VllmGoodputPerGpu(Chatbot(250));
  std::cout << "OPT-13B chatbot, TTFT 250 ms / TPOT 100 ms at 90%: DistServe " << distserve
            << " req/s/GPU, vLLM " << vllm << " req/s/GPU, ratio " << distserve / vllm << "\n";
  EXPECT_GT(distserve, vllm);
}

// [C]: DistServe's own simulator puts the same deployment at 1.56 req/s per
// GPU under a 200 ms TTFT; within 25% (here 1.85, +18%).
TEST(DistServeReproductionTest, DistServeGoodputPerGpuWithin25PercentOfItsSimulator) {
  const double distserve = DisaggGoodputPerGpu(DistServe(200));
  std::cout << "OPT-13B chatbot, TTFT 200 ms / TPOT 100 ms at 90%: DistServe " << distserve
            << " req/s/GPU (DistServe's simulator: 1.56)\n";
  EXPECT_NEAR(distserve / 1.56, 1.0, 0.25);
}

// OPT-13B FP16 prefill of one prompt on A100 80GB: the time to first token of
// a lone request (one prefill iteration and the host's time per iteration).
double PrefillMs(int tp, int prompt_tokens) {
  config::Scenario s;
  s.set_name("opt13b-prefill");
  s.mutable_cluster()->set_gpu("a100-sxm4-80gb");
  s.mutable_cluster()->set_num_gpus(tp);
  s.mutable_model()->set_preset("opt-13b");
  config::InferenceConfig* inf = s.mutable_inference();
  inf->set_tensor_parallel_size(tp);
  inf->set_weight_dtype("fp16");
  config::InferenceWorkload* w = inf->mutable_workload();
  w->set_kind("fixed-batch");
  w->set_batch_size(1);
  w->set_num_requests(1);
  w->mutable_prompt_length()->set_kind("fixed");
  w->mutable_prompt_length()->set_value(prompt_tokens);
  w->mutable_output_length()->set_kind("fixed");
  w->mutable_output_length()->set_value(2);
  absl::StatusOr<ResolvedServe> r = ResolveServe(s);
  EXPECT_TRUE(r.ok()) << r.status();
  absl::StatusOr<config::ServeResult> result = RunServe(*r, {.curve = false});
  EXPECT_TRUE(result.ok()) << result.status();
  return result->ttft_ms().p50();
}

// [E]'s raw single-forward fits, prefill ms = a + b*N + c*N^2.
struct ProfileFit {
  const char* engine;
  int tp;
  double a, b, c;
};

// The simulator's prefill against the forward passes DistServe timed for both
// engines: vLLM v0.2.3 at tp 1 (the colocated baseline) and SwiftTransformer
// at tp 1 and tp 2 (the disaggregated prefill pool), over the prompt lengths
// of [D]'s requests. Within 20% at every point, so the end-to-end miss of the
// disabled test above lies outside the forward pass.
TEST(DistServeReproductionTest, PrefillMatchesDistServeSingleForwardProfiles) {
  const ProfileFit fits[] = {
      {"vLLM v0.2.3", 1, 15.751574849507277, 0.10036374192949256, 5.76898915900792e-06},
      {"SwiftTransformer", 1, 16.456860431694288, 0.09264750660897617, 6.474785740229194e-06},
      {"SwiftTransformer", 2, 13.402703359246601, 0.06234291581603636, 2.226884309113053e-06},
  };
  for (const ProfileFit& f : fits) {
    for (const int n : {400, 800, 1400, 1950}) {
      const double profiled = f.a + f.b * n + f.c * n * n;
      const double simulated = PrefillMs(f.tp, n);
      std::cout << f.engine << " tp " << f.tp << ", " << n << " tokens: profiled " << profiled
                << " ms, simulated " << simulated << " ms (" << 100 * (simulated / profiled - 1)
                << "%)\n";
      EXPECT_LT(std::abs(simulated / profiled - 1), 0.20) << f.engine << " tp " << f.tp << " " << n;
    }
  }
}

}  // namespace
}  // namespace clustersim::scenarios
