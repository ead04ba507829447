#include "models/engine_memory.h"

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/inference_memory.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Preset;
using ::testing::HasSubstr;

const GpuSpec& Gpu(std::string_view name) { return **GpuCatalog::Default().Find(name); }

TEST(EngineMemoryTest, ParsesTheAccountings) {
  EXPECT_EQ(*ParseKvCacheAccounting(""), KvCacheAccounting::kBudget);
  EXPECT_EQ(*ParseKvCacheAccounting("vllm-v1"), KvCacheAccounting::kVllmV1);
  EXPECT_EQ(*ParseKvCacheAccounting("sglang"), KvCacheAccounting::kSglang);
  absl::StatusOr<KvCacheAccounting> bad = ParseKvCacheAccounting("vLLM");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("inference.kv_cache_accounting='vLLM' is not an engine accounting"));
  EXPECT_EQ(KvCacheAccountingName(KvCacheAccounting::kSglang), "sglang");
}

// vllm/engine/arg_utils.py: >= 70 GiB and not an A100 gets 1024 / 8192.
TEST(EngineMemoryTest, VllmServeDefaultsDependOnTheGpu) {
  EXPECT_EQ(VllmServeDefaults(Gpu("h100-sxm5-80gb")).max_num_seqs, 1024);
  EXPECT_EQ(VllmServeDefaults(Gpu("h100-sxm5-80gb")).max_num_batched_tokens, 8192);
  EXPECT_EQ(VllmServeDefaults(Gpu("a100-sxm4-80gb")).max_num_seqs, 256);
  EXPECT_EQ(VllmServeDefaults(Gpu("a100-sxm4-80gb")).max_num_batched_tokens, 2048);
  EXPECT_EQ(VllmServeDefaults(Gpu("l40s")).max_num_batched_tokens, 2048);
}

TEST(EngineMemoryTest, SglangDefaultFractionFallsWithTp) {
  EXPECT_DOUBLE_EQ(SglangDefaultMemFractionStatic(1), 0.88);
  EXPECT_DOUBLE_EQ(SglangDefaultMemFractionStatic(2), 0.87);
  EXPECT_DOUBLE_EQ(SglangDefaultMemFractionStatic(4), 0.85);
  EXPECT_DOUBLE_EQ(SglangDefaultMemFractionStatic(8), 0.81);
  EXPECT_DOUBLE_EQ(SglangDefaultMemFractionStatic(16), 0.79);
}

// Qwen3-235B-A22B at tp 4 under `vllm serve`'s H100 limits: the sampler's sort
// over 1024 rows of the 151,936-token vocabulary (38 B per element, 5.51 GiB)
// plus 8192 tokens' hidden states dwarfs the largest layer, the fused MoE's
// caches (8192 x (2 x 4096 + 8 x (4096 + 384)) x 2 B = 0.68 GiB).
TEST(EngineMemoryTest, VllmProfilePeakIsTheSamplerSortForALargeVocabulary) {
  const TransformerConfig m = Preset("qwen3-235b-a22b");
  EXPECT_EQ(VllmSamplerPeakBytes(1024, 151936), int64_t{1024} * 151936 * 38);
  const int64_t peak = VllmV1ProfilePeakBytes(m, 4, 8192, 1024);
  EXPECT_EQ(peak, int64_t{1024} * 151936 * 38 + int64_t{8192} * 4096 * 2);
  // One sequence: one row to sample, so the forward's MoE caches decide.
  EXPECT_EQ(VllmV1ProfilePeakBytes(m, 4, 8192, 1),
            int64_t{8192} * (2 * 4096 + 8 * (4096 + 384)) * 2);
}

// The engines' caches for one Llama 3 8B GPU: vLLM V1 counts the profile
// peak and not the CUDA context; SGLang takes its fraction of the memory after
// the context, less the weights, and keeps activations in its reserve.
TEST(EngineMemoryTest, EstimateFollowsTheAccounting) {
  InferenceMemoryInputs in;
  in.replica.model = Preset("llama3-8b");
  in.sequence_length = 2048;
  in.max_batch_size = 1024;
  in.max_tokens_per_step = 8192;
  const InferenceMemory budget = EstimateInferenceMemory(in, sim::GiB(80));
  in.accounting = KvCacheAccounting::kVllmV1;
  const InferenceMemory vllm = EstimateInferenceMemory(in, sim::GiB(80));
  EXPECT_EQ(vllm.budget, budget.budget);
  EXPECT_EQ(vllm.activations.count(), VllmV1ProfilePeakBytes(in.replica.model, 1, 8192, 1024));
  EXPECT_EQ(vllm.overheads, in.overheads.gemm_workspace);
  EXPECT_EQ(vllm.kv_cache, vllm.budget - vllm.weights - vllm.activations - vllm.overheads);
  in.accounting = KvCacheAccounting::kSglang;
  in.memory_utilization = 0.88;
  const InferenceMemory sglang = EstimateInferenceMemory(in, sim::GiB(80));
  const double expected =
      0.88 * static_cast<double>((sim::GiB(80) - in.overheads.cuda_context).count()) -
      static_cast<double>(sglang.weights.count());
  EXPECT_NEAR(static_cast<double>(sglang.kv_cache.count()), expected, 1.0);
  EXPECT_EQ(sglang.activations.count(), 0);
}

// A replica that does not fit says which memory SGLang's fraction applies to:
// the H100's CUDA total (79.20 GiB), not its marketed 80 GiB.
TEST(EngineMemoryTest, SglangVerdictNamesTheMemoryItsFractionTakes) {
  InferenceMemoryInputs in;
  in.replica.model = Preset("llama3-70b");
  in.sequence_length = 2048;
  in.accounting = KvCacheAccounting::kSglang;
  in.memory_utilization = 0.88;
  const InferenceVerdict v = JudgeInferenceMemory(in, Gpu("h100-sxm5-80gb"));
  EXPECT_FALSE(v.fits);
  EXPECT_THAT(v.summary, HasSubstr("(79.20 GiB reported by CUDA less the CUDA context 0.49 GiB x 0.88)"));
}

// The engines size the cache from the CUDA runtime's total: on an H100 SXM
// (85,045,477,376 B, 0.80 GiB under 80 GiB) vLLM V1 at utilisation 0.9 keeps
// 0.9 x that difference less cache than the marketed capacity would give.
TEST(EngineMemoryTest, CacheComesFromTheCudaTotal) {
  const GpuSpec& h100 = Gpu("h100-sxm5-80gb");
  InferenceMemoryInputs in;
  in.replica.model = Preset("llama3-8b");
  in.accounting = KvCacheAccounting::kVllmV1;
  in.max_batch_size = 1024;
  in.max_tokens_per_step = 8192;
  in.sequence_length = 2048;
  const InferenceMemory cuda = EstimateInferenceMemory(in, h100.cuda_total_memory);
  const InferenceMemory marketed = EstimateInferenceMemory(in, h100.memory);
  EXPECT_NEAR(static_cast<double>((marketed.kv_cache - cuda.kv_cache).count()),
              0.9 * static_cast<double>((h100.memory - h100.cuda_total_memory).count()), 2.0);
  // The verdict judges the same cache.
  const InferenceVerdict v = JudgeInferenceMemory(in, h100);
  EXPECT_THAT(v.summary, HasSubstr(absl::StrFormat("KV cache %.2f GiB", cuda.kv_cache.ToGiB())));
  // vLLM's batch defaults compare the CUDA total with 70 GiB: unchanged for the H100.
  EXPECT_EQ(VllmServeDefaults(h100).max_num_batched_tokens, 8192);
}

}  // namespace
}  // namespace clustersim::models
