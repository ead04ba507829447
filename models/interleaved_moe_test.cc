// Interleaved mixture-of-experts layers (TransformerConfig::moe_layer_step,
// Hugging Face's interleave_moe_layer_step): which layers have experts, the
// Llama 4 presets against Meta's published sizes, and that parameters, FLOPs,
// memory and the workload's per-layer ops follow the one per-layer decision.
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

// A small SwiGLU MoE model with 8 layers.
TransformerConfig SmallMoe() {
  TransformerConfig m;
  m.name = "small-moe";
  m.num_layers = 8;
  m.hidden_size = 256;
  m.ffn_hidden_size = 1024;
  m.num_attention_heads = 8;
  m.num_query_groups = 2;
  m.seq_length = 512;
  m.vocab_size = 1024;
  m.activation = Activation::kSwiglu;
  m.norm = Norm::kRmsNorm;
  m.tied_embeddings = false;
  m.learned_position_embeddings = false;
  m.add_bias_linear = false;
  m.num_experts = 8;
  m.moe_top_k = 1;
  m.moe_ffn_hidden_size = 256;
  m.moe_shared_expert_ffn_size = 512;
  return m;
}

// Parameters one token passes through, embeddings included: the routed
// experts at k/E (Meta's "17B active" counts them so).
double Active(const TransformerConfig& m) {
  const ParameterCounts p = CountParameters(m);
  const double inactive = p.expert_per_layer * (1.0 - double(m.moe_top_k) / m.num_experts);
  return p.Total(m.num_layers) - m.num_layers * inactive;
}

TEST(InterleavedMoeTest, StepPicksEveryNthLayerAsHuggingFaceDoes) {
  TransformerConfig m = SmallMoe();
  EXPECT_EQ(m.num_moe_layers(), 8);  // unset: every layer
  m.moe_layer_step = 2;              // layers 1, 3, 5, 7
  for (int l = 0; l < 8; ++l) EXPECT_EQ(m.IsMoeLayer(l), l % 2 == 1) << l;
  EXPECT_EQ(m.num_moe_layers(), 4);
  EXPECT_EQ(m.num_dense_layers(), 4);
  m.moe_layer_step = 3;  // layers 2, 5
  EXPECT_EQ(m.num_moe_layers(), 2);
  EXPECT_TRUE(m.IsMoeLayer(2));
  EXPECT_TRUE(m.IsMoeLayer(5));
  m.moe_first_dense_layers = 3;  // both rules: only layer 5
  EXPECT_EQ(m.num_moe_layers(), 1);
  EXPECT_FALSE(m.IsMoeLayer(2));
  EXPECT_TRUE(m.IsMoeLayer(5));
  TransformerConfig dense = SmallMoe();
  dense.num_experts = 0;
  dense.moe_top_k = 0;
  dense.moe_ffn_hidden_size = 0;
  dense.moe_shared_expert_ffn_size = 0;
  EXPECT_FALSE(dense.IsMoeLayer(1));
  EXPECT_EQ(dense.num_dense_layers(), 8);
}

TEST(InterleavedMoeTest, ValidationNamesTheField) {
  TransformerConfig m = SmallMoe();
  m.moe_layer_step = -1;
  EXPECT_THAT(ValidateTransformer(m).message(), HasSubstr("model.moe_layer_step must be >= 0"));
  m.moe_layer_step = 9;  // no layer i with (i + 1) % 9 == 0 among 8
  EXPECT_THAT(ValidateTransformer(m).message(), HasSubstr("model.moe_layer_step=9"));
  m.moe_layer_step = 8;
  EXPECT_TRUE(ValidateTransformer(m).ok());
  TransformerConfig dense = SmallMoe();
  dense.num_experts = 0;
  dense.moe_top_k = 0;
  dense.moe_ffn_hidden_size = 0;
  dense.moe_shared_expert_ffn_size = 0;
  dense.moe_layer_step = 2;
  EXPECT_THAT(ValidateTransformer(dense).message(),
              HasSubstr("model.moe_layer_step=2 needs a mixture-of-experts model"));
}

// Meta's Llama 4 model cards: Maverick 400B total / 17B active; Scout 109B
// total with its vision encoder (107.8B for the language model) / 17B active.
TEST(InterleavedMoeTest, Llama4PresetsMatchPublishedSizes) {
  const TransformerConfig maverick = Preset("llama4-maverick-400b");
  EXPECT_EQ(maverick.num_moe_layers(), 24);
  EXPECT_FALSE(maverick.IsMoeLayer(0));
  EXPECT_TRUE(maverick.IsMoeLayer(1));
  EXPECT_NEAR(CountParameters(maverick).Total(48) / 1e9, 400.0, 400.0 * 0.005);  // 400.7
  EXPECT_NEAR(Active(maverick) / 1e9, 17.0, 17.0 * 0.02);                        // 17.18
  const TransformerConfig scout = Preset("llama4-scout-109b");
  EXPECT_EQ(scout.num_moe_layers(), 48);
  EXPECT_NEAR(CountParameters(scout).Total(48) / 1e9, 109.0, 109.0 * 0.02);  // 107.8
  EXPECT_NEAR(Active(scout) / 1e9, 17.0, 17.0 * 0.02);                       // 17.17
}

// Maverick by hand: 24 dense layers (attention + 3·h·16384 + 2 norms) and 24
// MoE layers (attention + 129 experts' 3·h·8192 + router h·128 + 2 norms).
TEST(InterleavedMoeTest, MaverickParametersByLayerKind) {
  const TransformerConfig m = Preset("llama4-maverick-400b");
  const double h = 5120, attention = h * 128 * (40 + 2 * 8) + 40 * 128 * h, norms = 2 * h;
  const double dense = attention + 3 * h * 16384 + norms;
  const double moe = attention + 129 * 3 * h * 8192 + h * 128 + norms;
  const double embeddings = 2 * 202048 * h + h;  // input, untied output, final norm
  EXPECT_DOUBLE_EQ(CountParameters(m).Total(48), 24 * dense + 24 * moe + embeddings);
}

// FLOPs and memory depend on how many layers are dense, not where: the
// interleaved model and a dense-first one with as many dense layers agree;
// an all-MoE model does not.
TEST(InterleavedMoeTest, FlopsAndMemoryCountTheDenseLayers) {
  TransformerConfig interleaved = SmallMoe();
  interleaved.moe_layer_step = 2;
  TransformerConfig first = SmallMoe();
  first.moe_first_dense_layers = 4;
  const TransformerConfig all = SmallMoe();
  EXPECT_DOUBLE_EQ(MegatronModelFlops(interleaved, 8), MegatronModelFlops(first, 8));
  EXPECT_NE(MegatronModelFlops(interleaved, 8), MegatronModelFlops(all, 8));
  EXPECT_DOUBLE_EQ(SixNAttentionFlops(interleaved, 8).Total(),
                   SixNAttentionFlops(first, 8).Total());
  MemoryInputs in;
  in.model = interleaved;
  in.shard.expert_parallel = 2;
  in.data_parallel = 2;
  const MemoryBreakdown a = EstimateMemory(in);
  in.model = first;
  const MemoryBreakdown b = EstimateMemory(in);
  EXPECT_EQ(a.weights, b.weights);
  EXPECT_EQ(a.activations, b.activations);
  in.model = all;
  EXPECT_NE(EstimateMemory(in).weights, a.weights);
}

// The workload's per-layer ops: dense MLP lists on the even layers, the
// experts' on the odd ones.
TEST(InterleavedMoeTest, WorkloadRunsTheDenseListOnDenseLayers) {
  TransformerConfig m = SmallMoe();
  m.moe_layer_step = 2;
  ShardSpec shard;
  shard.tensor_parallel = 2;
  shard.sequence_parallel = true;
  shard.expert_parallel = 2;
  absl::StatusOr<Workload> w = BuildWorkload(m, shard);
  ASSERT_TRUE(w.ok()) << w.status();
  for (int l = 0; l < m.num_layers; ++l) {
    EXPECT_EQ(w->IsDenseLayer(l), !m.IsMoeLayer(l)) << l;
    EXPECT_EQ(&w->LayerForwardOps(l), l % 2 == 1 ? &w->layer_forward : &w->dense_layer_forward);
    EXPECT_EQ(&w->LayerBackwardOps(l),
              l % 2 == 1 ? &w->layer_backward : &w->dense_layer_backward);
  }
  auto has = [](const std::vector<Op>& ops, const char* name) {
    for (const Op& op : ops) {
      if (op.name == name) return true;
    }
    return false;
  };
  EXPECT_TRUE(has(w->layer_forward, "expert_fc1_gemm"));
  EXPECT_FALSE(has(w->dense_layer_forward, "expert_fc1_gemm"));
  EXPECT_TRUE(has(w->dense_layer_forward, "fc1_gemm"));
  const absl::StatusOr<Workload> uniform = BuildWorkload(SmallMoe(), shard);
  ASSERT_TRUE(uniform.ok());
  EXPECT_TRUE(uniform->dense_layers.empty());
}

}  // namespace
}  // namespace clustersim::models
