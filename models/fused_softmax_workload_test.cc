// The unfused attention's softmax (models/workload_attention.cc): Megatron's
// fused scale-mask-softmax kernel where FusedScaleMaskSoftmax's constraints
// hold (keys in (16, fused_softmax_max_keys], queries % 4 == 0, micro-batch x
// heads per tensor-parallel rank % 4 == 0), PyTorch's five-kernel fp32
// fallback and its backward where they do not.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/workload.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Build;
using testing::Get;
using testing::Names;
using testing::Preset;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

// GPT-3 175B's layer with 16 heads (as vTrain's single-node models), unfused
// attention and Megatron-DeepSpeed's key limit.
TransformerConfig SixteenHeads(int max_keys) {
  TransformerConfig c = Preset("gpt3-175b");
  c.num_attention_heads = 16;
  c.num_query_groups = 16;
  c.attention_backend = AttentionBackend::kUnfused;
  c.fused_softmax_max_keys = max_keys;
  return c;
}

std::vector<std::string> SoftmaxNames(const std::vector<Op>& ops) {
  std::vector<std::string> names;
  for (const Op& op : ops) {
    if (op.name.starts_with("attention_softmax")) names.push_back(op.name);
  }
  return names;
}

// tp 8 leaves 2 heads per rank: at micro-batch 1 the 2 attention batches are
// not a multiple of 4 and the fallback runs; at micro-batch 2 (4 batches) the
// fused kernel does.
TEST(FusedSoftmaxWorkloadTest, TwoHeadsPerRankAtMicroBatchOneRunTheFallback) {
  const Workload one = Build(SixteenHeads(2048), {.tensor_parallel = 8, .micro_batch_size = 1});
  EXPECT_THAT(SoftmaxNames(one.layer_forward),
              ElementsAre("attention_softmax_to_fp32", "attention_softmax_scale",
                          "attention_softmax_mask", "attention_softmax",
                          "attention_softmax_to_fp16"));
  EXPECT_THAT(SoftmaxNames(one.layer_backward),
              ElementsAre("attention_softmax_bwd_to_fp32", "attention_softmax_bwd",
                          "attention_softmax_mask_bwd", "attention_softmax_scale_bwd",
                          "attention_softmax_bwd_to_fp16"));
  // Between the scores GEMM and the dropout, as FusedScaleMaskSoftmax runs.
  std::vector<std::string> names = Names(one.layer_forward);
  const auto scores_gemm = std::find(names.begin(), names.end(), "attention_scores_gemm");
  ASSERT_NE(scores_gemm, names.end());
  EXPECT_EQ(*(scores_gemm + 1), "attention_softmax_to_fp32");
  EXPECT_EQ(*(scores_gemm + 6), "attention_dropout");
  // fp32 intermediates: 2+4, 4+4, 4+4, 4+4, 4+2 bytes per score forward, and
  // 2+4, 3x4, 4+4, 4+4, 4+2 backward.
  const int64_t scores = 1LL * 2 * 2048 * 2048;
  int64_t forward_bytes = 0, backward_bytes = 0;
  for (const Op& op : one.layer_forward) {
    if (op.name.starts_with("attention_softmax")) forward_bytes += op.bytes.count();
  }
  for (const Op& op : one.layer_backward) {
    if (op.name.starts_with("attention_softmax")) backward_bytes += op.bytes.count();
  }
  EXPECT_EQ(Get(one.layer_forward, "attention_softmax_to_fp32").bytes.count(), scores * 6);
  EXPECT_EQ(forward_bytes, scores * 36);
  EXPECT_EQ(backward_bytes, scores * 40);

  const Workload two = Build(SixteenHeads(2048), {.tensor_parallel = 8, .micro_batch_size = 2});
  EXPECT_THAT(SoftmaxNames(two.layer_forward), ElementsAre("attention_softmax"));
  EXPECT_THAT(SoftmaxNames(two.layer_backward), ElementsAre("attention_softmax_bwd"));
  EXPECT_EQ(Get(two.layer_forward, "attention_softmax").bytes.count(), 2 * scores * 2 * 2);
  // tp 4: 4 heads per rank, fused at every micro-batch.
  const Workload tp4 = Build(SixteenHeads(2048), {.tensor_parallel = 4, .micro_batch_size = 1});
  EXPECT_THAT(SoftmaxNames(tp4.layer_forward), ElementsAre("attention_softmax"));
}

// Keys beyond the limit (GPT-3's 2048 doubled) run the fallback whatever the
// batch; with no limit (0, every profile but Megatron-DeepSpeed's) the fused
// kernel always applies, and FlashAttention has no separate softmax.
TEST(FusedSoftmaxWorkloadTest, LongSequencesFallBackAndNoLimitKeepsTheFusedKernel) {
  TransformerConfig long_seq = SixteenHeads(2048);
  long_seq.seq_length = 4096;
  const ShardSpec shard{.tensor_parallel = 4, .micro_batch_size = 1};
  EXPECT_THAT(SoftmaxNames(Build(long_seq, shard).layer_forward),
              Contains("attention_softmax_to_fp32"));
  long_seq.fused_softmax_max_keys = 0;
  EXPECT_THAT(SoftmaxNames(Build(long_seq, shard).layer_forward),
              ElementsAre("attention_softmax"));
  EXPECT_THAT(SoftmaxNames(Build(SixteenHeads(0), {.tensor_parallel = 8}).layer_forward),
              ElementsAre("attention_softmax"));
  TransformerConfig flash = SixteenHeads(2048);
  flash.attention_backend = AttentionBackend::kFlash;
  EXPECT_THAT(Names(Build(flash, {.tensor_parallel = 8}).layer_forward),
              Not(Contains("attention_softmax_to_fp32")));
}

// Selective recompute replays the whole fallback with the attention core.
TEST(FusedSoftmaxWorkloadTest, SelectiveRecomputeReplaysTheFallback) {
  const Workload w = Build(SixteenHeads(2048), {.tensor_parallel = 8,
                                                .recompute = Recompute::kSelective});
  std::vector<std::string> recomputed;
  for (const Op& op : w.layer_backward) {
    if (op.recompute) recomputed.push_back(op.name);
  }
  EXPECT_THAT(recomputed,
              ElementsAre("attention_scores_gemm", "attention_softmax_to_fp32",
                          "attention_softmax_scale", "attention_softmax_mask",
                          "attention_softmax", "attention_softmax_to_fp16",
                          "attention_dropout", "attention_context_gemm"));
}

}  // namespace
}  // namespace clustersim::models
