#include "models/inference_memory.h"

#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Preset;
using sim::GiB;
using sim::MiB;
using ::testing::HasSubstr;

const GpuSpec& Gpu(std::string_view name) { return **GpuCatalog::Default().Find(name); }

InferenceMemoryInputs Llama8b() {
  InferenceMemoryInputs in;
  in.replica.model = Preset("llama3-8b");
  in.sequence_length = 2048;
  return in;
}

// Llama 3 8B: 32 layers, 8 KV heads of 128: 32 x 2 x 8 x 128 x 2 B = 128 KiB
// per token in BF16 (reference/models.md's KV-cache formula).
TEST(InferenceMemoryTest, KvBytesPerTokenIsGqaAware) {
  const TransformerConfig m = Preset("llama3-8b");
  EXPECT_EQ(KvBytesPerToken(m, 1, 1, Dtype::kBf16).count(), 131072);
  EXPECT_EQ(KvBytesPerToken(m, 1, 1, Dtype::kFp8).count(), 65536);
  EXPECT_EQ(KvBytesPerToken(m, 8, 1, Dtype::kBf16).count(), 16384);
  // tp 16 > 8 KV heads: each GPU still keeps one (replicated) KV head.
  EXPECT_EQ(KvBytesPerToken(m, 16, 1, Dtype::kBf16).count(), 16384);
  EXPECT_EQ(KvBytesPerToken(m, 1, 2, Dtype::kBf16).count(), 65536);
  // Llama 2 7B has no GQA: 32 KV heads, 4x Llama 3 8B's.
  EXPECT_EQ(KvBytesPerToken(Preset("llama2-7b"), 1, 1, Dtype::kBf16).count(), 4 * 131072);
}

TEST(InferenceMemoryTest, WeightsFollowTheFormat) {
  InferenceMemoryInputs in = Llama8b();
  const double params = CountParameters(in.replica.model).Total(in.replica.model.num_layers);
  const InferenceMemory bf16 = EstimateInferenceMemory(in, GiB(80));
  EXPECT_NEAR(static_cast<double>(bf16.weights.count()), 2 * params, 1e-6 * params);
  in.replica.weight_format = WeightFormat::kInt4Awq;
  const InferenceMemory q4 = EstimateInferenceMemory(in, GiB(80));
  const ParameterCounts p = CountParameters(in.replica.model);
  const double expected =
      p.linear_per_layer * 32 * 4.15625 / 8 + (params - p.linear_per_layer * 32) * 2;
  EXPECT_NEAR(static_cast<double>(q4.weights.count()), expected, 1e-6 * expected);
  in.replica.tensor_parallel = 2;
  EXPECT_NEAR(static_cast<double>(EstimateInferenceMemory(in, GiB(80)).weights.count()),
              expected / 2, 1e-3 * expected);
}

// fp8-mixed (Meta's Llama 3.1 405B FP8 release) on 8 GPUs: per layer the
// attention (16384 x (128 + 2 x 8) x 128 + 128 x 128 x 16384 = 570M weights)
// in BF16, the FFN (3 x 16384 x 53248 = 2.617B) in FP8 plus row scales except
// in layers 0 and 125 (BF16); embeddings and LM head BF16.
TEST(InferenceMemoryTest, Fp8MixedKeepsAttentionAndEndFfnsInBf16) {
  InferenceMemoryInputs in;
  in.replica.model = Preset("llama3.1-405b");
  in.replica.tensor_parallel = 8;
  in.replica.weight_format = WeightFormat::kFp8Mixed;
  const TransformerConfig& m = in.replica.model;
  const ParameterCounts p = CountParameters(m);
  const double ffn = 3.0 * 16384 * 53248, attention = 16384.0 * 144 * 128 + 16384.0 * 16384;
  ASSERT_DOUBLE_EQ(p.linear_per_layer, ffn + attention);
  const double fp8_bits = 8 + 32.0 / 16384;
  const double expected = (126 * attention * 2 + 2 * ffn * 2 + 124 * ffn * fp8_bits / 8 +
                           126 * (p.per_layer - p.linear_per_layer) * 2 +
                           (p.embedding + p.lm_head + p.final_norm) * 2) /
                          8;
  const double got = static_cast<double>(EstimateInferenceMemory(in, GiB(80)).weights.count());
  EXPECT_NEAR(got, expected, 1.0);
  EXPECT_NEAR(got / (1 << 30), 56.7, 0.1);
  // All-FP8 (per-tensor) weights of the same model are ~9 GiB lighter.
  in.replica.weight_format = WeightFormat::kFp8;
  EXPECT_LT(static_cast<double>(EstimateInferenceMemory(in, GiB(80)).weights.count()),
            got - 8.5 * (1 << 30));
  // Two pipeline stages: each holds one of the 16-bit FFN layers.
  in.replica.weight_format = WeightFormat::kFp8Mixed;
  in.replica.pipeline_parallel = 2;
  const double stage = static_cast<double>(EstimateInferenceMemory(in, GiB(80)).weights.count());
  EXPECT_NEAR(stage,
              (63 * attention * 2 + ffn * 2 + 62 * ffn * fp8_bits / 8 +
               63 * (p.per_layer - p.linear_per_layer) * 2 +
               std::max(p.embedding, p.lm_head + p.final_norm) * 2) /
                  8,
              1.0);
}

TEST(InferenceMemoryTest, Fp8MixedIsRefusedForMoeModels) {
  ReplicaModel r{.model = Preset("llama3.1-405b"), .weight_format = WeightFormat::kFp8Mixed};
  EXPECT_TRUE(CheckWeightFormatFitsModel(r).ok());
  r.model = Preset("mixtral-8x7b");
  const absl::Status s = CheckWeightFormatFitsModel(r);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("inference.weight_dtype=fp8-mixed"));
  EXPECT_THAT(s.message(), HasSubstr("use fp8 or bf16"));
  r.weight_format = WeightFormat::kFp8;
  EXPECT_TRUE(CheckWeightFormatFitsModel(r).ok());
}

// DeepSeek-V3's MLA caches one latent of kv_lora_rank 512 plus a RoPE key of
// 64 per token and layer, shared by all heads (DeepSeek-V2 paper, §2.1.2):
// 61 x 576 values, the same on every TP rank; data-parallel attention splits
// the sequences (and so the cache) over the ranks.
TEST(InferenceMemoryTest, LatentAttentionCachesTheLatentOnly) {
  const TransformerConfig m = Preset("deepseek-v3-671b");
  EXPECT_EQ(KvBytesPerToken(m, 1, 1, Dtype::kBf16).count(), 61 * 576 * 2);
  EXPECT_EQ(KvBytesPerToken(m, 8, 1, Dtype::kFp8).count(), 61 * 576);
  EXPECT_EQ(KvBytesPerToken(m, 8, 1, Dtype::kBf16, 8).count(), 61 * 576 * 2 / 8);
}

// NVFP4: 4.5 bits per linear weight of the blocks (72 bits per 16), the
// embedding and LM head 16-bit. Llama 3 8B's linear weights per layer:
// q, o 4096^2, k, v 4096 x 1024, gate, up, down 4096 x 14336.
TEST(InferenceMemoryTest, Nvfp4WeightsTakeFourAndAHalfBits) {
  InferenceMemoryInputs in = Llama8b();
  in.replica.weight_format = WeightFormat::kNvfp4;
  const double params = CountParameters(in.replica.model).Total(in.replica.model.num_layers);
  const double linear = 32.0 * (2 * 4096.0 * 4096 + 2 * 4096.0 * 1024 + 3 * 4096.0 * 14336);
  const double expected = linear * 4.5 / 8 + (params - linear) * 2;
  EXPECT_NEAR(static_cast<double>(EstimateInferenceMemory(in, GiB(80)).weights.count()), expected,
              1e-6 * expected);
}

// TensorRT-LLM's accounting: the KV cache is a fraction of what the weights,
// activations and overheads leave of the whole device, not of a budget.
TEST(InferenceMemoryTest, FreeMemoryFractionSizesTheCacheFromWhatIsLeft) {
  InferenceMemoryInputs in = Llama8b();
  const InferenceMemory vllm = EstimateInferenceMemory(in, GiB(80));
  in.kv_free_memory_fraction = 0.95;
  const InferenceMemory trt = EstimateInferenceMemory(in, GiB(80));
  EXPECT_EQ(trt.budget, GiB(80));
  EXPECT_EQ(trt.weights, vllm.weights);
  const double left =
      static_cast<double>((GiB(80) - trt.weights - trt.activations - trt.overheads).count());
  EXPECT_NEAR(static_cast<double>(trt.kv_cache.count()), 0.95 * left, 1.0);
  // 0.95 of (80 - rest) exceeds (0.9 x 80 - rest) for any rest above 0.
  EXPECT_GT(trt.kv_cache, vllm.kv_cache);
}

TEST(InferenceMemoryTest, BlocksBoundConcurrentSequences) {
  InferenceMemoryInputs in = Llama8b();
  in.max_batch_size = 10000;
  const InferenceMemory m = EstimateInferenceMemory(in, Gpu("h100-sxm5-80gb").memory);
  ASSERT_TRUE(m.fits);
  EXPECT_EQ(m.budget.count(), static_cast<int64_t>(0.9 * static_cast<double>(GiB(80).count())));
  EXPECT_EQ(m.kv_cache, m.budget - m.weights - m.activations - m.overheads);
  EXPECT_EQ(m.kv_block_bytes.count(), 16 * 131072);
  EXPECT_EQ(m.kv_blocks, m.kv_cache.count() / m.kv_block_bytes.count());
  EXPECT_EQ(m.blocks_per_sequence, 128);
  EXPECT_EQ(m.max_concurrent_sequences, m.kv_blocks / 128);
  // ~56 GiB of KV cache at 2 MiB a block: ~28k blocks, ~220 sequences of 2048.
  EXPECT_GT(m.max_concurrent_sequences, 200);
  EXPECT_LT(m.max_concurrent_sequences, 240);
  // Longer sequences: fewer of them; an FP8 cache: twice as many.
  in.sequence_length = 8192;
  EXPECT_EQ(EstimateInferenceMemory(in, GiB(80)).max_concurrent_sequences, m.kv_blocks / 512);
  in.sequence_length = 2048;
  in.replica.kv_cache_dtype = Dtype::kFp8;
  EXPECT_NEAR(EstimateInferenceMemory(in, GiB(80)).max_concurrent_sequences,
              2 * m.max_concurrent_sequences, 1);
  in.max_batch_size = 64;
  EXPECT_EQ(EstimateInferenceMemory(in, GiB(80)).max_concurrent_sequences, 64);
}

TEST(InferenceMemoryTest, Llama70bOnOneH100SuggestsFp8) {
  InferenceMemoryInputs in = Llama8b();
  in.replica.model = Preset("llama3-70b");
  const InferenceVerdict v = JudgeInferenceMemory(in, Gpu("h100-sxm5-80gb"));
  EXPECT_FALSE(v.fits);
  EXPECT_THAT(v.summary, HasSubstr("does not fit"));
  EXPECT_THAT(v.remedy, HasSubstr("inference.weight_dtype=fp8"));
  EXPECT_THAT(v.remedy, HasSubstr("inference.tensor_parallel_size to 2"));
  EXPECT_TRUE(v.some_remedy_fits);
}

TEST(InferenceMemoryTest, A100IsNotOfferedFp8) {
  InferenceMemoryInputs in = Llama8b();
  in.replica.model = Preset("llama3-70b");
  const InferenceVerdict v = JudgeInferenceMemory(in, Gpu("a100-sxm4-80gb"));
  EXPECT_FALSE(v.fits);
  EXPECT_THAT(v.remedy, ::testing::Not(HasSubstr("=fp8")));
  EXPECT_THAT(v.remedy, HasSubstr("inference.weight_dtype=int"));
}

TEST(InferenceMemoryTest, LongContextSuggestsShorterContext) {
  InferenceMemoryInputs in = Llama8b();
  in.sequence_length = 1 << 20;  // 128 GiB of KV for one sequence
  const InferenceVerdict v = JudgeInferenceMemory(in, Gpu("h100-sxm5-80gb"));
  EXPECT_FALSE(v.fits);
  EXPECT_THAT(v.remedy, HasSubstr("shorten the context to at most"));
}

TEST(InferenceMemoryTest, TooSmallEvenAtFourBitSaysSo) {
  GpuSpec tiny = Gpu("rtx-4090");
  tiny.name = "tiny";
  tiny.memory = MiB(512);
  tiny.cuda_total_memory = MiB(512);
  const InferenceVerdict v = JudgeInferenceMemory(Llama8b(), tiny);
  EXPECT_FALSE(v.fits);
  EXPECT_FALSE(v.some_remedy_fits);
  EXPECT_THAT(v.remedy, HasSubstr("does not fit even at 4-bit"));
}

// gpt-oss-20b keeps, of its 12 windowed layers, only the 9 blocks a 128-token
// window reaches: at 9,216 tokens a sequence holds 576 blocks of the full
// layers and 9 of the windowed ones, (576 + 9) / 2 whole blocks, so the same
// cache holds 1.97x the sequences it would with every layer full.
TEST(InferenceMemoryTest, SlidingWindowLayersHoldOnlyTheirWindow) {
  InferenceMemoryInputs in;
  in.replica.model = Preset("gpt-oss-20b");
  in.sequence_length = 9216;
  in.max_batch_size = 100000;
  const InferenceMemory windowed = EstimateInferenceMemory(in, GiB(80));
  EXPECT_EQ(windowed.blocks_per_sequence, (576 + 9 + 1) / 2);
  in.replica.model.sliding_window = 0;
  in.replica.model.sliding_window_layers = 0;
  const InferenceMemory full = EstimateInferenceMemory(in, GiB(80));
  EXPECT_EQ(full.kv_blocks, windowed.kv_blocks);
  EXPECT_EQ(full.blocks_per_sequence, 576);
  EXPECT_EQ(full.max_concurrent_sequences, full.kv_blocks / 576);
  EXPECT_EQ(windowed.max_concurrent_sequences, full.kv_blocks * 2 / (576 + 9));
}

}  // namespace
}  // namespace clustersim::models
