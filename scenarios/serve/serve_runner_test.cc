#include "scenarios/serve/serve_runner.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/fitted_constants.h"
#include "scenarios/input/loader.h"
#include "traces/trace_checker.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

config::Scenario Example() {
  absl::StatusOr<config::Scenario> s =
      LoadScenarioFile(std::string(std::getenv("CLUSTERSIM_SOURCE_DIR")) +
                       "/scenarios/examples/serve-llama3-8b-h100.textproto");
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

absl::StatusOr<config::ServeResult> Serve(const config::Scenario& s, ServeOptions o = {}) {
  absl::StatusOr<ResolvedServe> r = ResolveServe(s);
  if (!r.ok()) return r.status();
  return RunServe(*r, o);
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid())))
      .string();
}

TEST(ServeRunnerTest, SameScenarioSameResultAndTraceBytes) {
  const std::string t1 = TempPath("serve_a.json"), t2 = TempPath("serve_b.json");
  absl::StatusOr<config::ServeResult> a = Serve(Example(), {.trace_path = t1});
  absl::StatusOr<config::ServeResult> b = Serve(Example(), {.trace_path = t2});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->SerializeAsString(), b->SerializeAsString());
  const std::string trace = Slurp(t1);
  EXPECT_EQ(trace, Slurp(t2));
  absl::StatusOr<traces::TraceStats> stats = traces::CheckChromeTrace(trace);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->complete_events, a->iterations());
  EXPECT_EQ(stats->counter_tracks, 2);
  EXPECT_THAT(trace, HasSubstr("\"name\":\"prefill "));
  EXPECT_THAT(trace, HasSubstr("\"name\":\"decode "));
  std::filesystem::remove(t1);
  std::filesystem::remove(t2);
}

// The example: Llama 3 8B BF16 on one H100 at 10 req/s, 1024 in / 128 out.
TEST(ServeRunnerTest, ExampleFiguresAreSane) {
  absl::StatusOr<config::ServeResult> r = Serve(Example());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->num_requests(), 200);
  // A decode step reads the 16 GB of weights (>= 4.8 ms); batching adds KV
  // reads and prefills, so TPOT lies above the batch-1 floor.
  EXPECT_GT(r->tpot_ms().p50(), 16.06e9 / 3.35e12 * 1e3);
  EXPECT_LE(r->tpot_ms().p50(), r->tpot_ms().p90());
  EXPECT_LE(r->tpot_ms().p90(), r->tpot_ms().p99());
  // Every request produced its 128 tokens: output tokens/s x time = 25,600.
  EXPECT_NEAR(r->output_tokens_per_s() * r->simulated_time_s(), 200 * 128, 1);
  EXPECT_FALSE(r->saturated());
  EXPECT_GT(r->capacity_requests_per_s(), 10);
  ASSERT_EQ(r->curve_size(), 10);
  // Latency rises with load along the curve.
  EXPECT_GT(r->curve(9).ttft_p99_ms(), r->curve(0).ttft_p99_ms());
  EXPECT_GT(r->curve(9).tpot_p50_ms(), r->curve(0).tpot_p50_ms());
  EXPECT_GT(r->curve(9).output_tokens_per_s(), 5 * r->curve(0).output_tokens_per_s());
  // $/Mtok from the price and the throughput.
  EXPECT_NEAR(r->cost().usd_per_million_output_tokens(),
              r->cost().usd_per_hour() / (r->output_tokens_per_s() * 3600) * 1e6, 1e-9);
  EXPECT_GT(r->cost().energy_kwh(), 0);
}

TEST(ServeRunnerTest, OverloadIsReportedAsSaturationAndTerminates) {
  config::Scenario s = Example();
  s.mutable_inference()->mutable_workload()->set_request_rate_per_s(1000);
  absl::StatusOr<config::ServeResult> r = Serve(s, {.curve = false});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->saturated());
  EXPECT_THAT(r->saturation(), HasSubstr("exceed the capacity"));
  // The queue shows: one prefill takes ~21 ms, yet requests wait seconds, and
  // the later ones twice as long as the median.
  EXPECT_GT(r->ttft_ms().p99(), 1000);
  EXPECT_GT(r->ttft_ms().p99(), 1.5 * r->ttft_ms().p50());
}

TEST(ServeRunnerTest, SustainableRateMeetsTheTargetOrSaysUnreachable) {
  config::Scenario s = Example();
  s.mutable_inference()->set_target_time_per_output_token_ms(12);
  s.mutable_inference()->clear_target_time_to_first_token_ms();
  absl::StatusOr<config::ServeResult> r = Serve(s, {.curve = false});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->sustainable().status(), "found");
  EXPECT_GT(r->sustainable().max_request_rate_per_s(), 0);
  EXPECT_LT(r->sustainable().max_request_rate_per_s(), r->capacity_requests_per_s());
  // Re-simulating at the found rate meets the target.
  config::Scenario at = s;
  at.mutable_inference()->mutable_workload()->set_request_rate_per_s(
      r->sustainable().max_request_rate_per_s());
  absl::StatusOr<config::ServeResult> check = Serve(at, {.curve = false});
  ASSERT_TRUE(check.ok());
  EXPECT_LE(check->tpot_ms().p99(), 12);

  s.mutable_inference()->set_target_time_per_output_token_ms(1);  // below one weight read
  r = Serve(s, {.curve = false});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->sustainable().status(), "unreachable");
  EXPECT_EQ(r->sustainable().max_request_rate_per_s(), 0);
}

// Two replicas at twice the rate and twice the requests: each replica sees
// the same stream as one replica alone, so throughput doubles exactly.
TEST(ServeRunnerTest, ReplicasShareTheLoad) {
  config::Scenario one = Example();
  config::Scenario two = Example();
  two.mutable_cluster()->set_num_gpus(2);
  two.mutable_inference()->mutable_workload()->set_request_rate_per_s(20);
  two.mutable_inference()->mutable_workload()->set_num_requests(400);
  absl::StatusOr<config::ServeResult> a = Serve(one, {.curve = false});
  absl::StatusOr<config::ServeResult> b = Serve(two, {.curve = false});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->replicas(), 2);
  EXPECT_NEAR(b->output_tokens_per_s(), 2 * a->output_tokens_per_s(), 1e-6);
  EXPECT_EQ(b->tpot_ms().p99(), a->tpot_ms().p99());
}

TEST(ServeRunnerTest, TensorParallelReplicaCommunicates) {
  config::Scenario s = Example();
  s.mutable_cluster()->set_num_gpus(2);
  s.mutable_inference()->set_tensor_parallel_size(2);
  absl::StatusOr<config::ServeResult> r = Serve(s, {.curve = false});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->replicas(), 1);
  EXPECT_GT(r->communication_fraction(), 0.0);
  EXPECT_NEAR(r->memory().kv_bytes_per_token(), 65536, 0);
}

// Pipeline stages run one after another for one batch: each GPU holds half
// the layers (half the weights and KV per token) and the step takes as long
// as on one GPU, plus the activation send between the stages.
TEST(ServeRunnerTest, PipelineStagesSplitMemoryNotTime) {
  config::Scenario one = Example();
  one.mutable_inference()->mutable_workload()->set_kind("fixed-batch");
  one.mutable_inference()->mutable_workload()->set_batch_size(1);
  config::Scenario two = one;
  two.mutable_cluster()->set_num_gpus(2);
  two.mutable_inference()->set_pipeline_parallel_size(2);
  absl::StatusOr<config::ServeResult> a = Serve(one, {.curve = false});
  absl::StatusOr<config::ServeResult> b = Serve(two, {.curve = false});
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_EQ(b->memory().kv_bytes_per_token(), a->memory().kv_bytes_per_token() / 2);
  EXPECT_LT(b->memory().weights_gib(), 0.6 * a->memory().weights_gib());
  EXPECT_GT(b->communication_fraction(), 0);
  EXPECT_GT(b->tpot_ms().p50(), a->tpot_ms().p50());
  EXPECT_LT(b->tpot_ms().p50(), 1.05 * a->tpot_ms().p50());
  EXPECT_NEAR(b->gpu_busy_fraction(), a->gpu_busy_fraction() / 2, 0.01);
}

TEST(ServeRunnerTest, BadInputNamesTheField) {
  config::Scenario s = Example();
  s.mutable_model()->set_preset("llama3-405b");
  absl::StatusOr<config::ServeResult> r = Serve(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("does not fit"));
  EXPECT_THAT(r.status().message(), HasSubstr("try: "));

  s = Example();
  s.mutable_cluster()->set_gpu("a100-sxm4-80gb");
  s.mutable_inference()->set_weight_dtype("fp8");
  EXPECT_THAT(Serve(s).status().message(), HasSubstr("inference.weight_dtype=fp8"));

  s = Example();
  s.mutable_inference()->mutable_workload()->mutable_output_length()->set_value(-5);
  EXPECT_THAT(Serve(s).status().message(), HasSubstr("inference.workload.output_length.value=-5"));

  s = Example();
  s.mutable_inference()->mutable_workload()->set_request_rate_per_s(0);
  EXPECT_THAT(Serve(s).status().message(), HasSubstr("inference.workload.request_rate_per_s=0"));

  s = Example();
  s.mutable_cluster()->set_power_cap_w(500);
  EXPECT_THAT(Serve(s).status().message(), HasSubstr("cluster.power_cap_w"));

  s = Example();
  s.mutable_inference()->set_tensor_parallel_size(3);
  s.mutable_cluster()->set_num_gpus(3);
  EXPECT_THAT(Serve(s).status().message(), HasSubstr("inference.tensor_parallel_size=3"));

  s = Example();
  s.mutable_inference()->set_host_overhead_us_per_iteration(-1);
  EXPECT_THAT(Serve(s).status().message(),
              HasSubstr("inference.host_overhead_us_per_iteration=-1"));

  s = Example();
  s.mutable_inference()->set_host_overhead_us_per_sequence(-1);
  EXPECT_THAT(Serve(s).status().message(),
              HasSubstr("inference.host_overhead_us_per_sequence=-1"));

  s = Example();
  s.mutable_inference()->add_cuda_graph_batch_sizes(8);
  s.mutable_inference()->set_eager_dispatch_us_per_kernel(-1);
  EXPECT_THAT(Serve(s).status().message(), HasSubstr("inference.eager_dispatch_us_per_kernel=-1"));

  s = Example();
  s.mutable_inference()->set_eager_dispatch_us_per_kernel(35);
  EXPECT_THAT(Serve(s).status().message(),
              HasSubstr("inference.eager_dispatch_us_per_kernel needs "
                        "inference.cuda_graph_batch_sizes"));
}

// TensorRT-LLM's PyTorch runtime with prompts mixed into decode steps and
// CUDA graphs: an iteration with a prompt runs eagerly and its host dispatches
// each kernel (35 us, TensorRT-LLM PR #12653): ~450 kernels, ~16 ms, which
// for Llama 3 8B on an H100 outlasts a 128-token prompt's GPU work, so the
// steps with prompts take longer and every request's TTFT grows.
TEST(ServeRunnerTest, EagerIterationsWithPromptsPayKernelDispatch) {
  config::Scenario s = Example();
  config::InferenceConfig* inf = s.mutable_inference();
  inf->set_mixed_whole_prompts(true);
  inf->set_host_overlapped(true);
  for (int size : {1, 2, 4, 8, 16, 32, 64, 128, 256}) inf->add_cuda_graph_batch_sizes(size);
  inf->mutable_workload()->set_num_requests(60);
  inf->mutable_workload()->mutable_prompt_length()->set_value(128);
  absl::StatusOr<config::ServeResult> graphs = Serve(s, {.curve = false});
  inf->set_eager_dispatch_us_per_kernel(35);
  absl::StatusOr<config::ServeResult> eager = Serve(s, {.curve = false});
  ASSERT_TRUE(graphs.ok()) << graphs.status();
  ASSERT_TRUE(eager.ok()) << eager.status();
  absl::StatusOr<ResolvedServe> resolved = ResolveServe(s);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_DOUBLE_EQ(resolved->echo.inference().eager_dispatch_us_per_kernel(), 35);
  EXPECT_GT(eager->ttft_ms().p50(), graphs->ttft_ms().p50() + 5);
  EXPECT_GT(eager->tpot_ms().mean(), graphs->tpot_ms().mean());
}

// Mixture-of-experts models serve: Mixtral 8x7B in BF16 (93 GB of weights)
// on two H200s at TP 2, vLLM CI's latency test shape (batch 8, 32 in, 128 out).
// All 46.7B parameters are resident; a batch of 8 touches ~7.2 of 8 experts
// per layer, so TPOT sits between the active-only and the all-experts reads.
TEST(ServeRunnerTest, MixtureOfExpertsModelsServe) {
  config::Scenario s = Example();
  s.mutable_model()->set_preset("mixtral-8x7b");
  s.mutable_cluster()->set_gpu("h200-sxm-141gb");
  s.mutable_cluster()->set_num_gpus(2);
  s.mutable_inference()->set_tensor_parallel_size(2);
  s.mutable_inference()->set_host_overhead_us_per_iteration(0);
  config::InferenceWorkload* w = s.mutable_inference()->mutable_workload();
  w->set_kind("fixed-batch");
  w->set_batch_size(8);
  w->mutable_prompt_length()->set_value(32);
  w->mutable_output_length()->set_value(128);
  absl::StatusOr<config::ServeResult> r = Serve(s, {.curve = false});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->memory().weights_gib(), 93e9 / 2 / (1 << 30) * 0.95);
  // Per GPU: 25.5 GB active / 2 at 4.8 TB/s = 2.7 ms; 93.4 GB / 2 = 9.7 ms.
  EXPECT_GT(r->tpot_ms().p50(), 2.7);
  EXPECT_LT(r->tpot_ms().p50(), 9.7 * 1.5);
}

// The host's per-iteration time is paid once per iteration: a batch-1 decode
// of 128 tokens slows by exactly that per token, and the result says which
// share of the busy time it is.
TEST(ServeRunnerTest, HostTimeIsPaidOncePerIteration) {
  config::Scenario s = Example();
  s.mutable_inference()->mutable_workload()->set_kind("fixed-batch");
  s.mutable_inference()->mutable_workload()->set_batch_size(1);
  config::Scenario none = s;
  none.mutable_inference()->set_host_overhead_us_per_iteration(0);
  s.mutable_inference()->set_host_overhead_us_per_iteration(2000);
  absl::StatusOr<config::ServeResult> a = Serve(none, {.curve = false});
  absl::StatusOr<config::ServeResult> b = Serve(s, {.curve = false});
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_NEAR(b->tpot_ms().mean() - a->tpot_ms().mean(), 2.0, 1e-6);
  EXPECT_NEAR(b->ttft_ms().mean() - a->ttft_ms().mean(), 2.0, 1e-6);
  EXPECT_EQ(a->host_fraction(), 0);
  EXPECT_NEAR(b->host_fraction(), 2.0 * b->iterations() / (b->simulated_time_s() * 1e3), 0.01);
  EXPECT_EQ(b->scenario().inference().host_overhead_us_per_iteration(), 2000);
  // The default is written out in the resolved scenario.
  absl::StatusOr<ResolvedServe> r = ResolveServe(Example());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->echo.inference().host_overhead_us_per_iteration(),
            models::Fitted().serving_host_us_per_iteration);
}

// TensorRT-LLM's dynamic batch size tuning caps the batch at the tuner's table
// value for the KV capacity: a cache of 256-335 requests of 1000 + 1000
// tokens runs at most 256 at once, where without tuning it fills up.
TEST(ServeRunnerTest, DynamicBatchTuningCapsTheBatchAtTheTablesSize) {
  config::Scenario s = Example();
  config::InferenceConfig* inf = s.mutable_inference();
  inf->set_kv_cache_dtype("fp8");
  inf->set_memory_utilization(0.65);
  inf->set_max_batch_size(1024);
  inf->set_chunked_prefill(true);
  inf->set_reserve_whole_request(true);
  inf->clear_target_time_per_output_token_ms();
  inf->clear_target_time_to_first_token_ms();
  config::InferenceWorkload* wl = inf->mutable_workload();
  wl->clear_request_rate_per_s();
  wl->set_kind("offline");
  wl->set_num_requests(3000);
  wl->mutable_prompt_length()->set_value(1000);
  wl->mutable_output_length()->set_value(1000);
  absl::StatusOr<config::ServeResult> plain = Serve(s, {.curve = false});
  inf->set_dynamic_batch_size_tuning(true);
  absl::StatusOr<config::ServeResult> tuned = Serve(s, {.curve = false});
  ASSERT_TRUE(plain.ok() && tuned.ok()) << plain.status() << tuned.status();
  const int64_t capacity = tuned->memory().kv_blocks() / (2000 / 16);
  ASSERT_GE(capacity, 256);
  ASSERT_LT(capacity, 336);
  EXPECT_GT(plain->mean_batch_size(), 256);
  EXPECT_LE(tuned->mean_batch_size(), 256);
  EXPECT_TRUE(tuned->scenario().inference().dynamic_batch_size_tuning());
}

// A named frontend's time per request (models/data/serving_frontends.textproto)
// adds to every request's TTFT and leaves TPOT alone; the resolved scenario
// writes it out, and bad values name the field.
TEST(ServeRunnerTest, FrontendTimeAddsToTtftNotTpot) {
  config::Scenario s = Example();
  s.mutable_inference()->mutable_workload()->set_kind("fixed-batch");
  s.mutable_inference()->mutable_workload()->set_batch_size(1);
  config::Scenario triton = s;
  triton.mutable_inference()->mutable_frontend()->set_name("triton-trtllm");
  absl::StatusOr<config::ServeResult> a = Serve(s, {.curve = false});
  absl::StatusOr<config::ServeResult> b = Serve(triton, {.curve = false});
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_NEAR(b->ttft_ms().mean() - a->ttft_ms().mean(), 11.2, 1e-6);
  EXPECT_NEAR(b->tpot_ms().mean(), a->tpot_ms().mean(), 1e-9);
  EXPECT_EQ(b->scenario().inference().frontend().request_overhead_ms(), 11.2);
  EXPECT_FALSE(a->scenario().inference().has_frontend());

  config::Scenario bad = triton;
  bad.mutable_inference()->mutable_frontend()->set_name("nginx");
  EXPECT_THAT(Serve(bad).status().message(), HasSubstr("inference.frontend.name='nginx'"));
  bad = triton;
  bad.mutable_inference()->mutable_frontend()->set_request_overhead_ms(-3);
  EXPECT_THAT(Serve(bad).status().message(),
              HasSubstr("inference.frontend.request_overhead_ms=-3"));
}

}  // namespace
}  // namespace clustersim::scenarios
