// Head dimension, expert FFN size, shared experts, dense-first layers and
// multi-head latent attention: parameter counts against the published totals,
// FLOPs and workload shapes against hand-computed formulas, and validation.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/flops.h"
#include "models/memory_model.h"
#include "models/transformer_config.h"
#include "models/workload.h"

namespace clustersim::models {
namespace {

using ::testing::HasSubstr;

TransformerConfig Preset(const char* name) {
  absl::StatusOr<TransformerConfig> m = ModelCatalog::Default().Find(name);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : TransformerConfig{};
}

double Total(const TransformerConfig& m) { return CountParameters(m).Total(m.num_layers); }

// Parameters one token passes through, without the input embedding (a
// lookup), as the model cards count "active" parameters: the routed experts
// at k/E.
double ActiveWithoutEmbedding(const TransformerConfig& m) {
  const ParameterCounts p = CountParameters(m);
  const double inactive = p.expert_per_layer * (1.0 - double(m.moe_top_k) / m.num_experts);
  return p.Total(m.num_layers) - m.num_layers * inactive - p.embedding;
}

// DeepSeek-V3 report (arXiv 2412.19437) §4.2 and the release's
// README_WEIGHTS.md: 671B main-model parameters, 36.6B activated (output head
// included, input embedding not).
TEST(ArchitectureTest, DeepSeekV3MatchesPublishedSize) {
  const TransformerConfig m = Preset("deepseek-v3-671b");
  EXPECT_NEAR(Total(m) / 1e9, 671.0, 671.0 * 0.005);
  EXPECT_NEAR(ActiveWithoutEmbedding(m) / 1e9, 36.6, 36.6 * 0.02);
  // One MLA layer's attention weights, by hand: q_down 7168·1536, q_up
  // 1536·128·192, kv_down 7168·576, kv_up 512·128·256, out 128·128·7168.
  const double attention =
      7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
  EXPECT_DOUBLE_EQ(attention, 187105280.0);
  const ParameterCounts p = CountParameters(m);
  const double expert = 3.0 * 7168 * 2048;
  EXPECT_DOUBLE_EQ(p.expert_per_layer * 61, 58 * 256 * expert);
  EXPECT_DOUBLE_EQ(p.linear_per_layer * 61,
                   61 * attention + 58 * (257 * expert) + 3 * (3.0 * 7168 * 18432));
}

// Qwen3 model cards (huggingface.co/Qwen/Qwen3-235B-A22B, Qwen3-30B-A3B) count
// activated parameters with the embeddings: 235B total / 22B activated /
// 234B non-embedding; 30.5B / 3.3B / 29.9B.
TEST(ArchitectureTest, Qwen3MoeMatchesPublishedSize) {
  const TransformerConfig big = Preset("qwen3-235b-a22b");
  EXPECT_EQ(big.head_dim(), 128);  // not hidden/heads = 64
  const ParameterCounts pb = CountParameters(big);
  EXPECT_NEAR(Total(big) / 1e9, 235.0, 235.0 * 0.005);
  EXPECT_NEAR((ActiveWithoutEmbedding(big) + pb.embedding) / 1e9, 22.0, 22.0 * 0.02);
  EXPECT_NEAR((Total(big) - pb.embedding - pb.lm_head) / 1e9, 234.0, 234.0 * 0.005);
  const TransformerConfig small = Preset("qwen3-30b-a3b");
  const ParameterCounts ps = CountParameters(small);
  EXPECT_NEAR(Total(small) / 1e9, 30.5, 30.5 * 0.005);
  EXPECT_NEAR((ActiveWithoutEmbedding(small) + ps.embedding) / 1e9, 3.3, 3.3 * 0.02);
  EXPECT_NEAR((Total(small) - ps.embedding - ps.lm_head) / 1e9, 29.9, 29.9 * 0.005);
}

// gpt-oss model card (arXiv 2508.10925) Table 1: 116.83B total, 5.13B active;
// 20.91B / 3.61B.
TEST(ArchitectureTest, GptOssMatchesPublishedSize) {
  const TransformerConfig big = Preset("gpt-oss-120b");
  EXPECT_EQ(big.head_dim(), 64);  // hidden 2880 / 64 heads is not whole
  EXPECT_NEAR(Total(big) / 1e9, 116.83, 116.83 * 0.005);
  EXPECT_NEAR(ActiveWithoutEmbedding(big) / 1e9, 5.13, 5.13 * 0.02);
  const TransformerConfig small = Preset("gpt-oss-20b");
  EXPECT_NEAR(Total(small) / 1e9, 20.91, 20.91 * 0.005);
  EXPECT_NEAR(ActiveWithoutEmbedding(small) / 1e9, 3.61, 3.61 * 0.02);
}

// A small model whose every term is easy to write out.
TransformerConfig Small() {
  TransformerConfig m;
  m.name = "small";
  m.num_layers = 4;
  m.hidden_size = 256;
  m.ffn_hidden_size = 1024;
  m.num_attention_heads = 8;
  m.num_query_groups = 2;
  m.seq_length = 128;
  m.vocab_size = 1024;
  m.activation = Activation::kSwiglu;
  m.norm = Norm::kRmsNorm;
  m.tied_embeddings = false;
  m.learned_position_embeddings = false;
  m.add_bias_linear = false;
  return m;
}

TEST(ArchitectureTest, FlopsFollowTheArchitecture) {
  TransformerConfig m = Small();
  m.kv_channels = 64;  // a·d = 512 != h
  m.num_experts = 8;
  m.moe_top_k = 2;
  m.moe_ffn_hidden_size = 128;
  m.moe_shared_expert_ffn_size = 256;
  m.moe_first_dense_layers = 1;
  ASSERT_TRUE(ValidateTransformer(m).ok());
  const double s = 128, h = 256;
  // Per layer forward: QKV 2·s·h·(8 + 4)·64, output 2·s·512·h; MoE MLP
  // 2·s·3·h·(2·128 + 256); dense MLP 2·s·3·h·1024; core 4·s²·512; logits 2·s·h·V.
  const double attention = 2 * s * h * 12 * 64 + 2 * s * 512 * h;
  const double moe = 2 * s * 3 * h * (2 * 128 + 256), dense = 2 * s * 3 * h * 1024;
  const double forward = 4 * attention + 3 * moe + dense + 4 * 4 * s * s * 512 + 2 * s * h * 1024;
  EXPECT_DOUBLE_EQ(MegatronModelFlops(m, 1), 3 * forward);
}

TEST(ArchitectureTest, LatentAttentionFlopsAndWorkload) {
  TransformerConfig m = Small();
  m.num_query_groups = 8;
  m.q_lora_rank = 64;
  m.kv_lora_rank = 32;
  m.qk_nope_head_dim = 32;
  m.qk_rope_head_dim = 16;
  m.v_head_dim = 24;
  ASSERT_TRUE(ValidateTransformer(m).ok()) << ValidateTransformer(m);
  const double s = 128, h = 256;
  const double weights = h * 64 + 64 * 8 * 48 + h * (32 + 16) + 32 * 8 * (32 + 24) + 8 * 24 * h;
  const double forward = 4 * (2 * s * weights + 2 * s * 3 * h * 1024) +
                         4 * 2 * s * s * 8 * (48 + 24) + 2 * s * h * 1024;
  EXPECT_DOUBLE_EQ(MegatronModelFlops(m, 1), 3 * forward);

  ShardSpec shard{.tensor_parallel = 2, .sequence_parallel = true, .micro_batch_size = 1};
  absl::StatusOr<Workload> w = BuildWorkload(m, shard);
  ASSERT_TRUE(w.ok()) << w.status();
  auto find = [&](const std::vector<Op>& ops, const std::string& name) {
    for (const Op& op : ops) {
      if (op.name == name) return op;
    }
    ADD_FAILURE() << name << " missing";
    return Op{};
  };
  // Down projections replicated over TP, up projections split.
  EXPECT_EQ(find(w->layer_forward, "q_down_gemm").n, 64);
  EXPECT_EQ(find(w->layer_forward, "q_up_gemm").n, 4 * 48);
  EXPECT_EQ(find(w->layer_forward, "kv_down_gemm").n, 32 + 16);
  EXPECT_EQ(find(w->layer_forward, "kv_up_gemm").n, 4 * (32 + 24));
  EXPECT_EQ(find(w->layer_forward, "out_proj_gemm").k, 4 * 24);
  const Op attention = find(w->layer_forward, "attention_fwd");
  EXPECT_DOUBLE_EQ(attention.flops.count(), 2.0 * 4 * s * s * (48 + 24));
  for (const char* name : {"q_down_gemm_dgrad", "q_up_gemm_wgrad", "kv_down_gemm_wgrad",
                           "kv_up_gemm_dgrad", "tp_reducescatter_attn_bwd"}) {
    find(w->layer_backward, name);
  }
}

TEST(ArchitectureTest, SharedExpertsAndDenseFirstLayersInTheWorkload) {
  TransformerConfig m = Small();
  m.num_experts = 8;
  m.moe_top_k = 2;
  m.moe_ffn_hidden_size = 128;
  m.moe_shared_expert_ffn_size = 256;
  m.moe_first_dense_layers = 1;
  ShardSpec shard{.tensor_parallel = 2, .sequence_parallel = true, .micro_batch_size = 1};
  shard.expert_parallel = 2;
  absl::StatusOr<Workload> w = BuildWorkload(m, shard);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE(w->IsDenseLayer(0));
  EXPECT_FALSE(w->IsDenseLayer(1));
  EXPECT_EQ(&w->LayerForwardOps(0), &w->dense_layer_forward);
  EXPECT_EQ(&w->LayerForwardOps(1), &w->layer_forward);
  int expert_fc1 = 0, shared_fc1 = 0, dense_fc1 = 0;
  for (const Op& op : w->layer_forward) {
    if (op.name == "expert_fc1_gemm") {
      ++expert_fc1;
      EXPECT_EQ(op.n, 2 * 128 / 2);  // gate + up of the expert FFN on one TP shard
      EXPECT_EQ(op.batch, 4);        // 8 experts over ep 2
    }
    if (op.name == "shared_fc1_gemm") {
      ++shared_fc1;
      EXPECT_EQ(op.m, 128);  // every token (gathered over TP)
      EXPECT_EQ(op.n, 2 * 256 / 2);
    }
  }
  for (const Op& op : w->dense_layer_forward) {
    EXPECT_NE(op.group, CommGroup::kExpert) << op.name;
    if (op.name == "fc1_gemm") {
      ++dense_fc1;
      EXPECT_EQ(op.n, 2 * 1024 / 2);
    }
  }
  EXPECT_EQ(expert_fc1, 1);
  EXPECT_EQ(shared_fc1, 1);
  EXPECT_EQ(dense_fc1, 1);
  int shared_grads = 0;
  for (const Op& op : w->layer_backward) {
    if (op.name == "shared_fc1_gemm_wgrad" || op.name == "shared_fc2_gemm_dgrad") ++shared_grads;
  }
  EXPECT_EQ(shared_grads, 2);
}

TEST(ArchitectureTest, ValidationNamesTheField) {
  TransformerConfig dense = Small();
  dense.moe_ffn_hidden_size = 128;
  EXPECT_THAT(ValidateTransformer(dense).message(), HasSubstr("model.moe_ffn_hidden_size=128"));
  TransformerConfig moe = Small();
  moe.num_experts = 8;
  moe.moe_top_k = 2;
  moe.moe_first_dense_layers = 4;
  EXPECT_THAT(ValidateTransformer(moe).message(), HasSubstr("model.moe_first_dense_layers=4"));
  TransformerConfig head = Small();
  head.kv_channels = -1;
  EXPECT_THAT(ValidateTransformer(head).message(), HasSubstr("model.head_dim must be >= 0"));
  TransformerConfig mla = Small();
  mla.kv_lora_rank = 32;
  EXPECT_THAT(ValidateTransformer(mla).message(), HasSubstr("model.qk_nope_head_dim"));
  mla.qk_nope_head_dim = mla.qk_rope_head_dim = mla.v_head_dim = 16;
  EXPECT_THAT(ValidateTransformer(mla).message(), HasSubstr("model.num_query_groups=2"));
  TransformerConfig orphan = Small();
  orphan.v_head_dim = 16;
  EXPECT_THAT(ValidateTransformer(orphan).message(), HasSubstr("model.kv_lora_rank"));
  TransformerConfig odd = Small();
  odd.hidden_size = 250;  // 250 / 8 heads is not whole: fine once head_dim is given
  EXPECT_FALSE(ValidateTransformer(odd).ok());
  odd.kv_channels = 32;
  EXPECT_TRUE(ValidateTransformer(odd).ok());
}

// Defaults reproduce the plain transformer exactly.
TEST(ArchitectureTest, ExplicitHeadDimEqualToTheDefaultChangesNothing) {
  TransformerConfig a = Small();
  TransformerConfig b = Small();
  b.kv_channels = 256 / 8;
  EXPECT_EQ(Total(a), Total(b));
  EXPECT_EQ(MegatronModelFlops(a, 3), MegatronModelFlops(b, 3));
}

}  // namespace
}  // namespace clustersim::models
