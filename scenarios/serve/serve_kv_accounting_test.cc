// inference.kv_cache_accounting end to end: what the resolver sets for each
// engine's accounting and the KV cache `clustersim serve` reports.
#include <string>

#include "gtest/gtest.h"
#include "models/engine_memory.h"
#include "scenarios/serve/serve_mode_testing.h"

namespace clustersim::scenarios {
namespace {

using serve_mode_testing::Base;
using serve_mode_testing::Serve;

config::Scenario With(const std::string& accounting, const std::string& gpu = "h100-sxm5-80gb") {
  config::Scenario s = Base("fixed-batch");
  s.mutable_cluster()->set_gpu(gpu);
  s.mutable_inference()->mutable_workload()->set_batch_size(1);
  if (!accounting.empty()) s.mutable_inference()->set_kv_cache_accounting(accounting);
  return s;
}

// vLLM V1 schedules and profiles with `vllm serve`'s limits for the GPU:
// 1024 sequences and 8192 tokens on an H100, 256 and 2048 on an A100.
TEST(ServeKvAccountingTest, VllmV1TakesServeDefaultsForTheGpu) {
  absl::StatusOr<ResolvedServe> h100 = ResolveServe(With("vllm-v1"));
  ASSERT_TRUE(h100.ok()) << h100.status();
  EXPECT_EQ(h100->memory.accounting, models::KvCacheAccounting::kVllmV1);
  EXPECT_EQ(h100->scheduler.max_batch_size, 1024);
  EXPECT_EQ(h100->scheduler.max_tokens_per_step, 8192);
  EXPECT_EQ(h100->memory.max_tokens_per_step, 8192);
  absl::StatusOr<ResolvedServe> a100 = ResolveServe(With("vllm-v1", "a100-sxm4-80gb"));
  ASSERT_TRUE(a100.ok()) << a100.status();
  EXPECT_EQ(a100->scheduler.max_batch_size, 256);
  EXPECT_EQ(a100->scheduler.max_tokens_per_step, 2048);
  // Given limits win.
  config::Scenario set = With("vllm-v1");
  set.mutable_inference()->set_max_batch_size(64);
  set.mutable_inference()->set_max_tokens_per_step(4096);
  absl::StatusOr<ResolvedServe> r = ResolveServe(set);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->scheduler.max_batch_size, 64);
  EXPECT_EQ(r->memory.max_tokens_per_step, 4096);
  // Without the field: the simulator's own defaults, as before.
  absl::StatusOr<ResolvedServe> plain = ResolveServe(With(""));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->memory.accounting, models::KvCacheAccounting::kBudget);
  EXPECT_EQ(plain->scheduler.max_batch_size, 256);
}

// SGLang's mem_fraction_static defaults by tp; a given memory_utilization is
// the fraction.
TEST(ServeKvAccountingTest, SglangFractionDefaultsByTp) {
  absl::StatusOr<ResolvedServe> r = ResolveServe(With("sglang"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->memory.memory_utilization, 0.88);
  config::Scenario set = With("sglang");
  set.mutable_inference()->set_memory_utilization(0.93);
  absl::StatusOr<ResolvedServe> given = ResolveServe(set);
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_DOUBLE_EQ(given->memory.memory_utilization, 0.93);
}

// The reported memory: vLLM V1's profile peak (the sampler's sort over 1024
// rows of Llama 3's 128,256-token vocabulary, 38 B each, beside 8192 tokens'
// hidden states) leaves a smaller cache than the generic budget; SGLang's
// cache is 0.88 x (the H100's CUDA total, 85,045,477,376 B, - 500 MiB
// context) - weights.
TEST(ServeKvAccountingTest, ServeReportsEachEnginesCache) {
  absl::StatusOr<config::ServeResult> plain = Serve(With(""));
  absl::StatusOr<config::ServeResult> vllm = Serve(With("vllm-v1"));
  absl::StatusOr<config::ServeResult> sglang = Serve(With("sglang"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(vllm.ok()) << vllm.status();
  ASSERT_TRUE(sglang.ok()) << sglang.status();
  const double sampler = (1024.0 * 128256 * 38 + 8192.0 * 4096 * 2) / (1 << 30);
  EXPECT_NEAR(vllm->memory().activations_gib(), sampler, 1e-6);
  EXPECT_LT(vllm->memory().kv_cache_gib(), plain->memory().kv_cache_gib() - 3.5);
  const double weights = sglang->memory().weights_gib();
  const double cuda_total_gib = 85045477376.0 / (1 << 30);
  EXPECT_NEAR(sglang->memory().kv_cache_gib(), 0.88 * (cuda_total_gib - 500.0 / 1024) - weights,
              1e-6);
  EXPECT_NEAR(sglang->memory().capacity_gib(), cuda_total_gib, 1e-9);
  EXPECT_EQ(sglang->memory().activations_gib(), 0);
}

}  // namespace
}  // namespace clustersim::scenarios
