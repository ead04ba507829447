#include "models/workload.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/flops.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Build;
using testing::Get;
using testing::Names;
using testing::Preset;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

double SumFlops(const std::vector<Op>& ops, bool include_recompute = true) {
  double f = 0;
  for (const Op& op : ops) {
    if (include_recompute || !op.recompute) f += op.flops.count();
  }
  return f;
}

TEST(WorkloadTest, LayerForwardFollowsMegatronOrder) {
  Workload w = Build(Preset("gpt3-175b"), {.tensor_parallel = 8});
  EXPECT_THAT(Names(w.layer_forward),
              ElementsAre("layernorm1", "qkv_gemm", "attention_fwd", "out_proj_gemm",
                          "tp_allreduce_attn", "dropout_residual1", "layernorm2", "fc1_gemm",
                          "gelu", "fc2_gemm", "tp_allreduce_mlp", "dropout_residual2"));
  const Op& ar = Get(w.layer_forward, "tp_allreduce_attn");
  EXPECT_EQ(ar.kind, OpKind::kCollective);
  EXPECT_EQ(ar.comm, CommKind::kAllReduce);
  EXPECT_EQ(ar.comm_bytes.count(), 1LL * 2048 * 12288 * 2);  // b·s·h bf16
}

TEST(WorkloadTest, SequenceParallelSwapsAllReduceForGatherAndScatter) {
  Workload w = Build(Preset("gpt3-175b"), {.tensor_parallel = 8, .sequence_parallel = true});
  EXPECT_THAT(Names(w.layer_forward),
              ElementsAre("layernorm1", "tp_allgather_attn", "qkv_gemm", "attention_fwd",
                          "out_proj_gemm", "tp_reducescatter_attn", "dropout_residual1",
                          "layernorm2", "tp_allgather_mlp", "fc1_gemm", "gelu", "fc2_gemm",
                          "tp_reducescatter_mlp", "dropout_residual2"));
  Workload plain = Build(Preset("gpt3-175b"), {.tensor_parallel = 8});
  // Norms and dropouts run on s/tp tokens; the gathered size is b·s·h.
  EXPECT_EQ(Get(w.layer_forward, "layernorm1").bytes.count() * 8,
            Get(plain.layer_forward, "layernorm1").bytes.count());
  EXPECT_EQ(Get(w.layer_forward, "tp_allgather_mlp").comm_bytes,
            Get(plain.layer_forward, "tp_allreduce_mlp").comm_bytes);
  EXPECT_EQ(SumFlops(w.layer_forward), SumFlops(plain.layer_forward));
  // The gathers whose output the next GEMM consumes (TP overlap's ring
  // exchange); the backward re-gather of the input waits for wgrad instead.
  EXPECT_TRUE(Get(w.layer_forward, "tp_allgather_attn").gathers_next_input);
  EXPECT_TRUE(Get(w.layer_forward, "tp_allgather_mlp").gathers_next_input);
  EXPECT_TRUE(Get(w.layer_backward, "tp_allgather_mlp_bwd").gathers_next_input);
  EXPECT_FALSE(Get(w.layer_backward, "tp_allgather_mlp_input_bwd").gathers_next_input);
  EXPECT_FALSE(Get(w.layer_forward, "tp_reducescatter_mlp").gathers_next_input);
}

// DTensor tensor parallelism keeps the gathered input for wgrad (no backward
// re-gather); float8 TP all-gathers move one byte per element, except the LM
// head's, which stays a 16-bit linear.
TEST(WorkloadTest, DtensorTensorParallelKeepsGatheredInputAndGathersFloat8) {
  TransformerConfig c = Preset("llama3-8b");
  const ShardSpec sp{.tensor_parallel = 8, .sequence_parallel = true, .dtype = Dtype::kFp8};
  Workload megatron = Build(c, sp);
  c.tp_keeps_gathered_input = true;
  Workload dtensor = Build(c, sp);
  const std::vector<std::string> names = Names(dtensor.layer_backward);
  EXPECT_EQ(std::count(names.begin(), names.end(), "tp_allgather_mlp_input_bwd"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "tp_allgather_attn_input_bwd"), 0);
  EXPECT_EQ(Names(megatron.layer_backward).size(), names.size() + 2);
  c.fp8_tp_gather = true;
  Workload float8 = Build(c, sp);
  EXPECT_EQ(Get(float8.layer_forward, "tp_allgather_attn").comm_bytes.count() * 2,
            Get(dtensor.layer_forward, "tp_allgather_attn").comm_bytes.count());
  EXPECT_EQ(Get(float8.layer_backward, "tp_allgather_mlp_bwd").comm_bytes.count() * 2,
            Get(dtensor.layer_backward, "tp_allgather_mlp_bwd").comm_bytes.count());
  EXPECT_EQ(Get(float8.layer_forward, "tp_reducescatter_mlp").comm_bytes,
            Get(dtensor.layer_forward, "tp_reducescatter_mlp").comm_bytes);
  EXPECT_EQ(Get(float8.head_forward, "tp_allgather_head").comm_bytes,
            Get(dtensor.head_forward, "tp_allgather_head").comm_bytes);
}

TEST(WorkloadTest, NoTensorCollectivesWithoutTensorParallelism) {
  Workload w = Build(Preset("llama3-8b"), {.tensor_parallel = 1, .sequence_parallel = true});
  for (const std::vector<Op>* ops : {&w.embedding_forward, &w.embedding_backward, &w.layer_forward,
                                     &w.layer_backward, &w.head_forward, &w.head_backward}) {
    for (const Op& op : *ops) EXPECT_NE(op.kind, OpKind::kCollective) << op.name;
  }
}

TEST(WorkloadTest, GqaAndSwigluShapes) {
  TransformerConfig c = Preset("llama3-70b");  // 64 heads, 8 groups, d 128, f 28672
  Workload w = Build(c, {.tensor_parallel = 8, .micro_batch_size = 2});
  const Op& qkv = Get(w.layer_forward, "qkv_gemm");
  EXPECT_EQ(qkv.m, 2 * 8192);
  EXPECT_EQ(qkv.n, (64 + 2 * 8) * 128 / 8);
  EXPECT_EQ(qkv.k, 8192);
  EXPECT_EQ(Get(w.layer_forward, "fc1_gemm").n, 2 * 28672 / 8);
  EXPECT_EQ(Get(w.layer_forward, "fc2_gemm").k, 28672 / 8);
  const Op& attn = Get(w.layer_forward, "attention_fwd");
  EXPECT_EQ(attn.batch, 2 * 64 / 8);
  EXPECT_EQ(attn.m, 8192);
  EXPECT_EQ(attn.n, 8192);
  EXPECT_EQ(attn.k, 128);
  EXPECT_TRUE(attn.causal);
  // 4·b·s²·h/tp, unmasked.
  EXPECT_DOUBLE_EQ(attn.flops.count(), 4.0 * 2 * 8192.0 * 8192 * 8192 / 8);
  EXPECT_EQ(Get(w.head_forward, "lm_head_gemm").n, 128256 / 8);
  EXPECT_THAT(Names(w.layer_forward), ::testing::Contains("swiglu"));
}

// The ops' own shapes, summed over layers, micro-batch, shards and the
// forward+backward (3x) passes, must equal Megatron's closed-form count.
TEST(WorkloadTest, ForwardFlopsTimesThreeEqualMegatronModelFlops) {
  for (const char* name : {"gpt3-175b", "llama3-70b", "llama2-7b"}) {
    TransformerConfig c = Preset(name);
    const int tp = 8, mbs = 2;
    Workload w = Build(c, {.tensor_parallel = tp, .micro_batch_size = mbs});
    const double forward = SumFlops(w.layer_forward) * c.num_layers + SumFlops(w.head_forward) +
                           SumFlops(w.embedding_forward);
    EXPECT_NEAR(3 * forward * tp / MegatronModelFlops(c, mbs), 1.0, 1e-12) << name;
  }
}

TEST(WorkloadTest, BackwardDoublesGemmsAndAttentionIsTwoAndAHalf) {
  Workload w = Build(Preset("gpt3-175b"), {.tensor_parallel = 8});
  for (const char* gemm : {"qkv_gemm", "out_proj_gemm", "fc1_gemm", "fc2_gemm"}) {
    const Op& fwd = Get(w.layer_forward, gemm);
    const Op& dgrad = Get(w.layer_backward, std::string(gemm) + "_dgrad");
    const Op& wgrad = Get(w.layer_backward, std::string(gemm) + "_wgrad");
    EXPECT_EQ(dgrad.flops, fwd.flops) << gemm;
    EXPECT_EQ(wgrad.flops, fwd.flops) << gemm;
    EXPECT_EQ(dgrad.m, fwd.m) << gemm;   // dX: tokens x k
    EXPECT_EQ(wgrad.k, fwd.m) << gemm;   // dW reduces over tokens
  }
  EXPECT_DOUBLE_EQ(Get(w.layer_backward, "attention_bwd").flops.count(),
                   2.5 * Get(w.layer_forward, "attention_fwd").flops.count());
  EXPECT_EQ(Get(w.layer_backward, "layernorm1_bwd").bytes.count(),
            2 * Get(w.layer_forward, "layernorm1").bytes.count());
  // Backward of the forward identity before QKV/FC1 is an all-reduce.
  EXPECT_EQ(Get(w.layer_backward, "tp_allreduce_attn_bwd").comm, CommKind::kAllReduce);
  EXPECT_EQ(Get(w.layer_backward, "tp_allreduce_mlp_bwd").comm, CommKind::kAllReduce);
}

TEST(WorkloadTest, FullRecomputeReplaysTheForwardFirst) {
  TransformerConfig c = Preset("gpt3-175b");
  Workload none = Build(c, {.tensor_parallel = 8});
  Workload full = Build(c, {.tensor_parallel = 8, .recompute = Recompute::kFull});
  const size_t n = full.layer_forward.size();
  ASSERT_EQ(full.layer_backward.size(), n + none.layer_backward.size());
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(full.layer_backward[i].name, full.layer_forward[i].name);
    EXPECT_TRUE(full.layer_backward[i].recompute);
  }
  EXPECT_EQ(full.layer_backward[4].kind, OpKind::kCollective);  // tp_allreduce_attn again
  for (size_t i = n; i < full.layer_backward.size(); ++i) {
    EXPECT_FALSE(full.layer_backward[i].recompute);
  }
  EXPECT_DOUBLE_EQ(SumFlops(full.layer_backward, /*include_recompute=*/false),
                   SumFlops(none.layer_backward));
}

TEST(WorkloadTest, SelectiveRecomputeReplaysOnlyAttentionBeforeItsBackward) {
  Workload w = Build(Preset("gpt3-175b"),
                     {.tensor_parallel = 8, .sequence_parallel = true,
                      .recompute = Recompute::kSelective});
  int recomputed = 0;
  for (size_t i = 0; i < w.layer_backward.size(); ++i) {
    if (!w.layer_backward[i].recompute) continue;
    ++recomputed;
    EXPECT_EQ(w.layer_backward[i].name, "attention_fwd");
    ASSERT_LT(i + 1, w.layer_backward.size());
    EXPECT_EQ(w.layer_backward[i + 1].name, "attention_bwd");
  }
  EXPECT_EQ(recomputed, 1);
}

// JAX remat policies that keep every projection output but the MLP's input
// one (MaxText save_dot_except_mlpwi): the norm, gather, fc1 and activation
// replayed just before the fc2 backward, on top of the attention core; the
// replayed FLOPs are fc1's forward, which MlpUpForwardFlops counts.
TEST(WorkloadTest, MlpUpRecomputeReplaysFc1BeforeTheMlpBackward) {
  const TransformerConfig c = Preset("llama2-70b");
  const ShardSpec selective{.tensor_parallel = 4, .sequence_parallel = true,
                            .recompute = Recompute::kSelective};
  ShardSpec mlp_up = selective;
  mlp_up.recompute_mlp_up = true;
  const Workload base = Build(c, selective);
  const Workload w = Build(c, mlp_up);
  std::vector<std::string> replayed;
  size_t first = 0;
  for (size_t i = 0; i < w.layer_backward.size(); ++i) {
    if (!w.layer_backward[i].recompute || w.layer_backward[i].name == "attention_fwd") continue;
    if (replayed.empty()) first = i;
    replayed.push_back(w.layer_backward[i].name);
  }
  EXPECT_THAT(replayed, ElementsAre("layernorm2", "tp_allgather_mlp", "fc1_gemm", "swiglu"));
  // Next: the fc2 backward, starting with its sequence-parallel gather of dY.
  ASSERT_LT(first + replayed.size() + 1, w.layer_backward.size());
  EXPECT_EQ(w.layer_backward[first + replayed.size()].name, "tp_allgather_mlp_bwd");
  EXPECT_THAT(w.layer_backward[first + replayed.size() + 1].name, HasSubstr("fc2_gemm"));
  const double extra = SumFlops(w.layer_backward) - SumFlops(base.layer_backward);
  EXPECT_DOUBLE_EQ(extra, Get(w.layer_forward, "fc1_gemm").flops.count());
  EXPECT_DOUBLE_EQ(extra * c.num_layers * 4, MlpUpForwardFlops(c, /*global_batch=*/1));
  // Without selective recompute, or on routed experts, it is refused.
  ShardSpec full = mlp_up;
  full.recompute = Recompute::kFull;
  EXPECT_THAT(BuildWorkload(c, full).status().message(), HasSubstr("selective"));
  EXPECT_THAT(BuildWorkload(Preset("mixtral-8x7b"), mlp_up).status().message(),
              HasSubstr("mixture-of-experts"));
}

TransformerConfig Unfused(std::string_view preset) {
  TransformerConfig c = Preset(preset);
  c.attention_backend = AttentionBackend::kUnfused;
  return c;
}

// Megatron's pre-FlashAttention CoreAttention: two batched GEMMs over all
// a/tp heads with softmax and dropout over the b·(a/tp)·s² scores between.
// Eager PyTorch: RMSNorm, SwiGLU and RoPE as composites of elementwise
// kernels (models/workload.h), everything else as fused; GPT's LayerNorm and
// GeLU are one kernel either way.
TEST(WorkloadTest, EagerElementwiseCostsTheCompositeKernels) {
  TransformerConfig c = Preset("llama3-8b");
  const ShardSpec shard{.micro_batch_size = 1};
  const Workload fused = Build(c, shard);
  c.elementwise = ElementwiseKernels::kEager;
  const Workload eager = Build(c, shard);
  const int64_t tokens = c.seq_length, h = c.hidden_size, f = c.ffn_hidden_size;
  const Op& norm = Get(eager.layer_forward, "layernorm1");
  EXPECT_EQ(norm.bytes.count(), tokens * h * (4 * 2 + 28));
  EXPECT_EQ(norm.kernels, 8);
  EXPECT_EQ(Get(fused.layer_forward, "layernorm1").bytes.count(), tokens * h * 2 * 2);
  EXPECT_EQ(Get(fused.layer_forward, "layernorm1").kernels, 1);
  EXPECT_EQ(Get(eager.layer_backward, "layernorm1_bwd").bytes.count(), tokens * h * (8 * 2 + 60));
  EXPECT_EQ(Get(eager.layer_backward, "layernorm1_bwd").kernels, 13);
  EXPECT_EQ(Get(eager.layer_forward, "swiglu").bytes.count(), tokens * f * 5 * 2);
  EXPECT_EQ(Get(eager.layer_backward, "swiglu_bwd").bytes.count(), tokens * f * 9 * 2);
  // RoPE of the 32 query and 8 key heads of 128, after the QKV projection.
  const int64_t rotated = tokens * (32 + 8) * 128;
  const Op& rope = Get(eager.layer_forward, "rope");
  EXPECT_EQ(rope.bytes.count(), rotated * (2 * 2 + 16));
  EXPECT_EQ(rope.kernels, 6);
  EXPECT_EQ(Names(eager.layer_forward)[2], "rope");
  EXPECT_EQ(Get(eager.layer_backward, "rope_bwd").bytes, rope.bytes);
  EXPECT_EQ(eager.layer_forward.size(), fused.layer_forward.size() + 1);
  EXPECT_EQ(eager.layer_backward.size(), fused.layer_backward.size() + 1);
  EXPECT_EQ(Get(eager.head_forward, "final_norm").kernels, 8);
  // The same FLOPs: only traffic and launches change.
  EXPECT_DOUBLE_EQ(SumFlops(eager.layer_forward), SumFlops(fused.layer_forward));

  TransformerConfig gpt = Preset("gpt3-175b");
  const Workload gpt_fused = Build(gpt, {.tensor_parallel = 8});
  gpt.elementwise = ElementwiseKernels::kEager;
  const Workload gpt_eager = Build(gpt, {.tensor_parallel = 8});
  EXPECT_EQ(Names(gpt_eager.layer_forward), Names(gpt_fused.layer_forward));
  EXPECT_EQ(Get(gpt_eager.layer_forward, "layernorm1").bytes,
            Get(gpt_fused.layer_forward, "layernorm1").bytes);
  EXPECT_EQ(Get(gpt_eager.layer_forward, "gelu").bytes, Get(gpt_fused.layer_forward, "gelu").bytes);
}

TEST(WorkloadTest, UnfusedAttentionIsBatchedGemmsAndMemoryBoundScores) {
  const ShardSpec shard{.tensor_parallel = 8, .micro_batch_size = 2};
  Workload flash = Build(Preset("gpt3-175b"), shard);
  Workload w = Build(Unfused("gpt3-175b"), shard);
  EXPECT_THAT(Names(w.layer_forward),
              ElementsAre("layernorm1", "qkv_gemm", "attention_scores_gemm",
                          "attention_softmax", "attention_dropout", "attention_context_gemm",
                          "out_proj_gemm", "tp_allreduce_attn", "dropout_residual1",
                          "layernorm2", "fc1_gemm", "gelu", "fc2_gemm", "tp_allreduce_mlp",
                          "dropout_residual2"));
  const Op& qk = Get(w.layer_forward, "attention_scores_gemm");
  EXPECT_EQ(qk.kind, OpKind::kGemm);
  EXPECT_EQ(qk.batch, 2 * 96 / 8);
  EXPECT_EQ(qk.m, 2048);
  EXPECT_EQ(qk.n, 2048);
  EXPECT_EQ(qk.k, 128);
  const Op& pv = Get(w.layer_forward, "attention_context_gemm");
  EXPECT_EQ(pv.m, 2048);
  EXPECT_EQ(pv.n, 128);
  EXPECT_EQ(pv.k, 2048);
  // Same model FLOPs as the fused kernel: 4·b·s²·(a/tp)·d, unmasked.
  EXPECT_DOUBLE_EQ((qk.flops + pv.flops).count(),
                   Get(flash.layer_forward, "attention_fwd").flops.count());
  const int64_t scores = 2LL * 12 * 2048 * 2048;
  EXPECT_EQ(Get(w.layer_forward, "attention_softmax").bytes.count(), scores * 2 * 2);
  EXPECT_EQ(Get(w.layer_forward, "attention_dropout").bytes.count(), scores * 5);
  // Backward: four GEMMs, 2x the forward's, none a weight gradient.
  double backward_gemm_flops = 0;
  for (const char* name : {"attention_dprobs_gemm", "attention_dv_gemm", "attention_dq_gemm",
                           "attention_dk_gemm"}) {
    backward_gemm_flops += Get(w.layer_backward, name).flops.count();
  }
  EXPECT_DOUBLE_EQ(backward_gemm_flops, 2 * (qk.flops + pv.flops).count());
  for (const Op& op : w.layer_backward) {
    EXPECT_FALSE(op.name.starts_with("attention") && op.name.ends_with("_wgrad")) << op.name;
  }
  EXPECT_EQ(Get(w.layer_backward, "attention_softmax_bwd").bytes.count(), scores * 3 * 2);
  // Everything else is unchanged.
  EXPECT_EQ(w.layer_backward.size(), flash.layer_backward.size() + 5);
}

TEST(WorkloadTest, SelectiveRecomputeReplaysTheUnfusedCore) {
  Workload w = Build(Unfused("gpt3-175b"),
                     {.tensor_parallel = 8, .sequence_parallel = true,
                      .recompute = Recompute::kSelective});
  std::vector<std::string> recomputed;
  size_t last = 0;
  for (size_t i = 0; i < w.layer_backward.size(); ++i) {
    if (!w.layer_backward[i].recompute) continue;
    recomputed.push_back(w.layer_backward[i].name);
    last = i;
  }
  EXPECT_THAT(recomputed, ElementsAre("attention_scores_gemm", "attention_softmax",
                                      "attention_dropout", "attention_context_gemm"));
  ASSERT_LT(last + 1, w.layer_backward.size());
  EXPECT_EQ(w.layer_backward[last + 1].name, "attention_dprobs_gemm");
}

// ALiBi on the unfused path (BLOOM's Megatron-DeepSpeed): torch.baddbmm
// copies the broadcast bias into the scores and its GEMM reads them back, one
// write and one read of the 16-bit scores before the QK^T product, replayed
// with the core. FlashAttention adds the bias in its kernel: no extra op.
TEST(WorkloadTest, AlibiCopiesTheBiasIntoTheUnfusedScores) {
  const ShardSpec shard{.tensor_parallel = 4, .micro_batch_size = 2};
  TransformerConfig c = Unfused("bloom-176b");
  ASSERT_TRUE(c.alibi);  // the preset states it
  c.alibi = false;
  const Workload plain = Build(c, shard);
  Workload alibi = Build(Unfused("bloom-176b"), shard);
  const int64_t scores = 2LL * (112 / 4) * 2048 * 2048;
  EXPECT_EQ(Get(alibi.layer_forward, "attention_alibi_bias").bytes.count(), scores * 2 * 2);
  EXPECT_EQ(alibi.layer_forward.size(), plain.layer_forward.size() + 1);
  std::vector<std::string> names = Names(alibi.layer_forward);
  const auto at = std::find(names.begin(), names.end(), "attention_alibi_bias");
  ASSERT_NE(at, names.end());
  EXPECT_EQ(*(at + 1), "attention_scores_gemm");
  EXPECT_EQ(alibi.layer_backward.size(), plain.layer_backward.size());

  Workload selective = Build(Unfused("bloom-176b"), {.tensor_parallel = 4,
                                                     .recompute = Recompute::kSelective});
  std::vector<std::string> recomputed;
  for (const Op& op : selective.layer_backward) {
    if (op.recompute) recomputed.push_back(op.name);
  }
  EXPECT_THAT(recomputed, ElementsAre("attention_alibi_bias", "attention_scores_gemm",
                                      "attention_softmax", "attention_dropout",
                                      "attention_context_gemm"));

  Workload flash = Build(Preset("bloom-176b"), shard);
  for (const Op& op : flash.layer_forward) EXPECT_NE(op.name, "attention_alibi_bias");
}

TEST(WorkloadTest, UnfusedAttentionRejectsContextParallelism) {
  absl::StatusOr<Workload> w =
      BuildWorkload(Unfused("llama3-8b"), {.tensor_parallel = 2, .context_parallel = 2});
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("context_parallel_size=2"));
  EXPECT_THAT(w.status().message(), HasSubstr("training.attention=flash"));
}

TEST(WorkloadTest, ContextParallelShortensLocalSequence) {
  TransformerConfig c = Preset("llama3-8b");
  Workload w = Build(c, {.tensor_parallel = 2, .context_parallel = 4});
  EXPECT_EQ(Get(w.layer_forward, "qkv_gemm").m, 8192 / 4);
  const Op& attn = Get(w.layer_forward, "attention_fwd");
  EXPECT_EQ(attn.m, 8192 / 4);
  EXPECT_EQ(attn.n, 8192);
}

TEST(WorkloadTest, HeadHasVocabParallelCrossEntropy) {
  Workload w = Build(Preset("gpt3-175b"), {.tensor_parallel = 8, .sequence_parallel = true});
  EXPECT_THAT(Names(w.head_forward),
              ElementsAre("final_norm", "tp_allgather_head", "lm_head_gemm", "cross_entropy",
                          "tp_allreduce_ce_max", "tp_allreduce_ce_target",
                          "tp_allreduce_ce_sumexp"));
  EXPECT_EQ(Get(w.head_forward, "cross_entropy").kind, OpKind::kMemoryBound);
  EXPECT_EQ(Get(w.head_backward, "tp_reducescatter_head_bwd").comm, CommKind::kReduceScatter);
}

TEST(WorkloadTest, RejectsShardsThatDoNotFitNamingTheField) {
  absl::StatusOr<Workload> w = BuildWorkload(Preset("llama3-8b"), {.tensor_parallel = 3});
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("tensor_model_parallel_size=3"));
  EXPECT_THAT(w.status().message(), HasSubstr("model.num_attention_heads=32"));
  EXPECT_THAT(w.status().message(), HasSubstr("1, 2, 4, 8"));

  w = BuildWorkload(Preset("llama3-70b"), {.tensor_parallel = 16});  // 8 query groups
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("model.num_query_groups=8"));

  TransformerConfig odd_ffn = Preset("gpt3-175b");
  odd_ffn.ffn_hidden_size = 49150;
  w = BuildWorkload(odd_ffn, {.tensor_parallel = 4});
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("model.ffn_hidden_size=49150"));

  w = BuildWorkload(Preset("llama3-8b"), {.context_parallel = 3});
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("context_parallel_size=3"));

  w = BuildWorkload(Preset("llama3-8b"), {.micro_batch_size = 0});
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("micro_batch_size"));

  w = BuildWorkload(Preset("llama3-8b"), {.expert_parallel = 2});
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("model.num_experts is 0"));

  w = BuildWorkload(Preset("mixtral-8x7b"), {.expert_parallel = 3});
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("model.num_experts=8"));
}

}  // namespace
}  // namespace clustersim::models
