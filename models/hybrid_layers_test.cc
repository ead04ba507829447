// Hybrid Mamba-Transformer models (TransformerConfig::hybrid_pattern): the
// per-layer kind, the presets against the published sizes, the Mamba-2
// mixer's parameters and FLOPs, and the workload's per-kind op lists.
#include "models/hybrid_layers.h"

#include <string>
#include <vector>

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

bool HasOp(const std::vector<Op>& ops, const std::string& name) {
  for (const Op& op : ops) {
    if (op.name == name) return true;
  }
  return false;
}

const Op& OpNamed(const std::vector<Op>& ops, const std::string& name) {
  for (const Op& op : ops) {
    if (op.name == name) return op;
  }
  ADD_FAILURE() << name << " missing";
  return ops.front();
}

TEST(HybridLayersTest, PatternDecidesEachLayerAndIsMoeLayerAgrees) {
  const TransformerConfig h = Preset("nemotron-h-56b");
  EXPECT_EQ(h.Kind(0), LayerKind::kMamba);
  EXPECT_EQ(h.Kind(1), LayerKind::kMlp);
  EXPECT_EQ(h.Kind(7), LayerKind::kAttention);
  EXPECT_EQ(h.num_layers_of(LayerKind::kMamba), 54);
  EXPECT_EQ(h.num_layers_of(LayerKind::kAttention), 10);
  EXPECT_EQ(h.num_layers_of(LayerKind::kMlp), 54);
  EXPECT_EQ(h.num_attention_layers(), 10);
  EXPECT_EQ(h.num_moe_layers(), 0);
  const TransformerConfig nano = Preset("nemotron-3-nano-30b-a3b");
  EXPECT_EQ(nano.num_layers_of(LayerKind::kMoe), 23);
  EXPECT_EQ(nano.num_moe_layers(), 23);
  for (int l = 0; l < nano.num_layers; ++l) {
    EXPECT_EQ(nano.IsMoeLayer(l), nano.Kind(l) == LayerKind::kMoe) << l;
  }
  const TransformerConfig llama = Preset("llama3-8b");
  EXPECT_EQ(llama.Kind(3), LayerKind::kTransformer);
  EXPECT_EQ(llama.num_attention_layers(), llama.num_layers);
}

TEST(HybridLayersTest, PresetsMatchPublishedParameterCounts) {
  // Nemotron-H 56B (arXiv 2504.03624): 56B.
  const TransformerConfig h = Preset("nemotron-h-56b");
  EXPECT_NEAR(CountParameters(h).Total(h.num_layers) / 1e9, 56.32, 0.01);
  // One Mamba layer: in_proj 8192 x 37120, out_proj 16384 x 8192, conv1d
  // 20480 x (4 + 1), dt_bias/A_log/D 3 x 256, norm 16384.
  EXPECT_DOUBLE_EQ(MambaMixerWeights(h).total, 438424320.0);
  // Nemotron 3 Nano (arXiv 2512.20848): 31.6B total, about 3.6B active.
  const TransformerConfig nano = Preset("nemotron-3-nano-30b-a3b");
  const ParameterCounts p = CountParameters(nano);
  EXPECT_NEAR(p.Total(nano.num_layers) / 1e9, 31.58, 0.01);
  const double inactive = nano.num_layers * p.expert_per_layer * (1.0 - 6.0 / 128.0);
  EXPECT_NEAR((p.Total(nano.num_layers) - inactive) / 1e9, 3.58, 0.01);
}

TEST(HybridLayersTest, MambaFlopsAreProjectionsAndTheChunkedScan) {
  const TransformerConfig h = Preset("nemotron-h-56b");
  const MambaFlops f = MambaMixerForwardFlops(h);
  EXPECT_DOUBLE_EQ(f.projections, 2.0 * 8192 * (8192.0 * 37120 + 16384.0 * 8192));
  // 2·s·H·P·(2N + Q) + 2·s·Q·N·G.
  EXPECT_DOUBLE_EQ(f.scan, 2.0 * 8192 * 256 * 64 * (2 * 256 + 128) + 2.0 * 8192 * 128 * 256 * 8);
  // Model FLOPs: 3 x (54 Mamba + 10 attention + 54 MLP layers + logits).
  const double s = 8192, hid = 8192;
  const double attention = 2 * s * hid * 8192 * (2 + 2.0 * 8 / 64) + 4 * s * s * 8192;
  const double mlp = 4 * s * hid * 32768;
  const double logits = 2 * s * hid * 131072;
  EXPECT_NEAR(MegatronModelFlops(h, 1),
              3 * (54 * (f.projections + f.scan) + 10 * attention + 54 * mlp + logits), 1e3);
  // Full recompute replays a Mamba layer's forward.
  EXPECT_DOUBLE_EQ(LayerReplayFlops(h, 1, 0), f.projections + f.scan);
}

TEST(HybridLayersTest, InvalidPatternsNameTheField) {
  TransformerConfig h = Preset("nemotron-h-56b");
  h.hybrid_pattern.pop_back();
  EXPECT_THAT(ValidateTransformer(h).message(), HasSubstr("hybrid_override_pattern has 117"));
  h = Preset("nemotron-h-56b");
  h.hybrid_pattern[3] = 'X';
  EXPECT_THAT(ValidateTransformer(h).message(), HasSubstr("'X' at layer 3"));
  h = Preset("nemotron-h-56b");
  h.hybrid_pattern[1] = 'E';
  EXPECT_THAT(ValidateTransformer(h).message(), HasSubstr("num_experts"));
  h = Preset("nemotron-h-56b");
  h.mamba_state_dim = 0;
  EXPECT_THAT(ValidateTransformer(h).message(), HasSubstr("mamba_state_dim"));
  h = Preset("nemotron-h-56b");
  h.mamba_num_groups = 4;
  ShardSpec s{.tensor_parallel = 8, .sequence_parallel = true};
  EXPECT_THAT(ValidateShard(h, s).message(), HasSubstr("mamba_num_groups=4"));
}

TEST(HybridLayersTest, WorkloadRunsOneBlockPerLayerWithTensorParallelMixer) {
  const TransformerConfig h = Preset("nemotron-h-56b");
  ShardSpec s{.tensor_parallel = 8, .sequence_parallel = true, .micro_batch_size = 1};
  s.dtype = Dtype::kFp8;
  absl::StatusOr<Workload> w = BuildWorkload(h, s);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE(w->layer_forward.empty());
  const std::vector<Op>& mamba = w->LayerForwardOps(0);
  const std::vector<Op>& mlp = w->LayerForwardOps(1);
  const std::vector<Op>& attention = w->LayerForwardOps(7);
  // Mamba: in_proj column-parallel (37120 / 8), out_proj row-parallel
  // (16384 / 8), one reduce-scatter; no attention, no MLP.
  const Op& in_proj = OpNamed(mamba, "mamba_in_proj_gemm");
  EXPECT_EQ(in_proj.n, 37120 / 8);
  EXPECT_EQ(in_proj.dtype, Dtype::kFp8);
  EXPECT_EQ(OpNamed(mamba, "mamba_out_proj_gemm").k, 16384 / 8);
  EXPECT_TRUE(HasOp(mamba, "tp_allgather_mamba"));
  EXPECT_TRUE(HasOp(mamba, "tp_reducescatter_mamba"));
  EXPECT_TRUE(HasOp(mamba, "mamba_conv1d"));
  EXPECT_TRUE(HasOp(mamba, "mamba_norm"));
  EXPECT_FALSE(HasOp(mamba, "qkv_gemm"));
  EXPECT_FALSE(HasOp(mamba, "fc1_gemm"));
  // The scan: 32 local heads of 64, 8192 tokens in 64 chunks of 128, in
  // BF16: chunk_scan's FLOPs 2·T·H·P·(N + Q·f), f = 3/4 for Q = 128.
  const Op& scan = OpNamed(mamba, "mamba_chunk_scan");
  EXPECT_DOUBLE_EQ(scan.flops.count(), 2.0 * 8192 * 32 * 64 * (256 + 128 * 0.75));
  EXPECT_EQ(scan.dtype, Dtype::kBf16);
  EXPECT_GT(scan.tile_efficiency, 0);
  EXPECT_DOUBLE_EQ(OpNamed(mamba, "mamba_bmm_chunk").flops.count(), 2.0 * 8192 * 128 * 256 * 1);
  // MLP and attention layers hold their block alone.
  EXPECT_TRUE(HasOp(mlp, "fc1_gemm"));
  EXPECT_FALSE(HasOp(mlp, "qkv_gemm"));
  EXPECT_TRUE(HasOp(attention, "qkv_gemm"));
  EXPECT_FALSE(HasOp(attention, "fc1_gemm"));
  // Backward mirrors each: the Mamba layer's both projections' gradients and
  // the scan's backward kernels.
  const std::vector<Op>& mamba_bwd = w->LayerBackwardOps(0);
  for (const char* name : {"mamba_in_proj_gemm_wgrad", "mamba_out_proj_gemm_dgrad",
                           "mamba_bwd_recompute_chunk_state", "mamba_chunk_scan_chunk_state_bwd_dx",
                           "mamba_bwd_recompute_conv1d", "mamba_chunk_scan_bwd_dz",
                           "layernorm1_bwd"}) {
    EXPECT_TRUE(HasOp(mamba_bwd, name)) << name;
  }
  EXPECT_FALSE(HasOp(w->LayerBackwardOps(1), "qkv_gemm_dgrad"));
}

TEST(HybridLayersTest, ActivationsKeepOneBlockPerLayer) {
  MemoryInputs in;
  in.model = Preset("nemotron-h-56b");
  in.shard = ShardSpec{.tensor_parallel = 8, .sequence_parallel = true, .micro_batch_size = 1};
  in.data_parallel = 4;
  const double hybrid = EstimateMemory(in).activations.count();
  // The same sizes as transformer layers (attention and MLP in each) keep
  // more: a hybrid layer holds one block.
  MemoryInputs plain = in;
  plain.model.hybrid_pattern.clear();
  const double transformer = EstimateMemory(plain).activations.count();
  EXPECT_LT(hybrid, transformer);
  EXPECT_GT(hybrid, 0.3 * transformer);
}

}  // namespace
}  // namespace clustersim::models
