// Serving costs of latent attention, expert FFN sizes, shared experts,
// dense-first layers, explicit head dimensions and expert parallelism, checked
// against shapes and byte counts written out by hand.
#include "strategies/serving_moe.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/calibration.h"
#include "models/gpu_catalog.h"
#include "models/inference_memory.h"
#include "strategies/serving_iteration.h"
#include "strategies/serving_moe_routing.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"

namespace clustersim::strategies {
namespace {

using ::testing::HasSubstr;

const models::Op* FindOp(const std::vector<models::Op>& ops, std::string_view name) {
  for (const models::Op& op : ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

class ServingMoeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gpu_ = *models::GpuCatalog::Default().Find("h200-sxm-141gb");
    kernels_.emplace(*gpu_, models::KernelModelParams{}, models::Calibration::Shipped(gpu_->name));
    absl::StatusOr<topology::Cluster> c = topology::BuildCluster({.node_preset = "dgx-h100"});
    ASSERT_TRUE(c.ok()) << c.status();
    cluster_.emplace(*std::move(c));
    network_.emplace(*cluster_);
  }

  ServingModelSpec Spec(std::string_view preset, int tp, int ep = 1) {
    ServingModelSpec spec;
    spec.replica.model = *models::ModelCatalog::Default().Find(preset);
    spec.replica.tensor_parallel = tp;
    spec.replica.expert_parallel = ep;
    spec.replica.weight_format = models::WeightFormat::kFp8;
    spec.replica.kv_cache_dtype = models::Dtype::kFp8;
    for (int i = 0; i < tp; ++i) spec.gpus.push_back(i);
    return spec;
  }

  ServingCostModel Model(std::string_view preset, int tp, int ep = 1) {
    absl::StatusOr<ServingCostModel> m =
        ServingCostModel::Create(Spec(preset, tp, ep), *kernels_, *network_);
    EXPECT_TRUE(m.ok()) << m.status();
    return *std::move(m);
  }

  static IterationTotals Decode(int64_t seqs, int64_t context) {
    std::vector<SequenceWork> w(seqs, {.new_tokens = 1, .context = context, .decode = true});
    return Summarise(w);
  }

  const models::GpuSpec* gpu_ = nullptr;
  std::optional<models::KernelModel> kernels_;
  std::optional<topology::Cluster> cluster_;
  std::optional<topology::AnalyticNetwork> network_;
};

// DeepSeek-V3 caches kv_lora 512 + rope 64 = 576 values per token and layer
// (DeepSeek-V2 §2.1.2: (d_c + d_h^R)·l): 61 x 576 x 1 B in FP8, whole on every
// TP rank, and 1/ep of it per replica token under data-parallel attention.
TEST_F(ServingMoeTest, LatentKvCacheBytes) {
  const models::TransformerConfig m = *models::ModelCatalog::Default().Find("deepseek-v3-671b");
  EXPECT_EQ(models::KvBytesPerToken(m, 1, 1, models::Dtype::kFp8).count(), 61 * 576);
  EXPECT_EQ(models::KvBytesPerToken(m, 8, 1, models::Dtype::kFp8).count(), 61 * 576);
  EXPECT_EQ(models::KvBytesPerToken(m, 8, 1, models::Dtype::kBf16, 8).count(), 61 * 576 * 2 / 8);
  // Grouped-query attention keeps its formula: Qwen3-235B, 4 KV heads of 128.
  const models::TransformerConfig q = *models::ModelCatalog::Default().Find("qwen3-235b-a22b");
  EXPECT_EQ(models::KvBytesPerToken(q, 1, 1, models::Dtype::kBf16).count(), 94 * 2 * 4 * 128 * 2);
}

// Absorbed decode reads the latent cache once for all heads: 8 sequences of
// 1023 cached tokens (+1 new) read 8 x 1024 x 576 FP8 bytes, plus the
// absorbed queries and outputs (16 heads at tp 8, 576 + 512 values, 16-bit).
TEST_F(ServingMoeTest, AbsorbedDecodeReadsTheLatentCache) {
  ServingCostModel model = Model("deepseek-v3-671b", 8);
  const std::vector<models::Op> ops = model.LayerOps(Decode(8, 1023));
  const models::Op* a = FindOp(ops, "attention_decode");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->kind, models::OpKind::kAttention);
  EXPECT_EQ(a->bytes.count(), 8 * 1024 * 576 + 8 * 16 * (576 + 512) * 2);
  EXPECT_DOUBLE_EQ(a->flops.count(), 2.0 * 16 * (576 + 512) * 8 * 1024);
  const models::Op* q = FindOp(ops, "attention_decode_q_absorb");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->batch, 16);  // one nope -> kv_lora product per head
  EXPECT_EQ(q->k, 128);
  EXPECT_EQ(q->n, 512);
  const models::Op* o = FindOp(ops, "o_proj_gemm");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->k, 16 * 128);  // heads x v_head_dim
  // Replicated down projections, split up projections.
  EXPECT_EQ(FindOp(ops, "kv_down_gemm")->n, 576);
  EXPECT_EQ(FindOp(ops, "q_up_gemm")->n, 16 * 192);
  EXPECT_EQ(FindOp(ops, "kv_cache_write")->bytes.count(), 8 * 576 * (2 + 1));
}

// DeepSeek's NVFP4 checkpoint (nvidia/DeepSeek-R1-FP4) quantises only its
// FFNs: the latent-attention projections stay 16-bit (2 bytes per weight,
// BF16 GEMMs), the routed and shared experts run in FP4. Other models' NVFP4
// checkpoints keep every GEMM in FP4.
TEST_F(ServingMoeTest, Nvfp4MoeCheckpointKeepsAttentionIn16Bit) {
  ServingModelSpec spec = Spec("deepseek-v3-671b", 8, 8);
  spec.replica.weight_format = models::WeightFormat::kNvfp4;
  ServingOpBuilder b(spec.replica, models::Dtype::kFp4, models::Dtype::kBf16);
  std::vector<models::Op> ops;
  const IterationTotals t = Decode(64, 1023);
  b.LatentAttention(t, &ops);
  b.MoeMlp(t, &ops);
  const models::Op* q = FindOp(ops, "q_up_gemm");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->dtype, models::Dtype::kBf16);
  const int64_t rows = 8, n = 128 * 192, k = 1536;  // 64 sequences over 8 ranks
  EXPECT_EQ(q->bytes.count(), rows * k * 2 + rows * n * 2 + k * n * 2);
  EXPECT_EQ(FindOp(ops, "attention_decode_q_absorb")->dtype, models::Dtype::kBf16);
  EXPECT_EQ(FindOp(ops, "expert_gate_up_gemm")->dtype, models::Dtype::kFp4);
  EXPECT_EQ(FindOp(ops, "shared_down_gemm")->dtype, models::Dtype::kFp4);

  for (const char* preset : {"gpt3-6.7b", "mixtral-8x7b"}) {
    ServingModelSpec other = Spec(preset, 1);
    other.replica.weight_format = models::WeightFormat::kNvfp4;
    const ServingOpBuilder o(other.replica, models::Dtype::kFp4, models::Dtype::kBf16);
    EXPECT_EQ(o.AttentionGemm("o_proj_gemm", 8, 4096, 4096).dtype, models::Dtype::kFp4) << preset;
  }
}

// MoE layers: expert FFN 2048, one shared expert of 2048; the first three
// layers run the dense 18432 MLP. All split over tp 8.
TEST_F(ServingMoeTest, SharedExpertsAndDenseFirstLayers) {
  ServingCostModel model = Model("deepseek-v3-671b", 8);
  const IterationTotals t = Decode(4, 100);
  const std::vector<models::Op> moe = model.LayerOps(t);
  EXPECT_EQ(FindOp(moe, "expert_gate_up_gemm")->n, 2 * 2048 / 8);
  // T·k = 32 routed rows, nearly one per expert touched: M counts a whole
  // 128-row tile per expert (the kernel model's wave count), the kernel's
  // FLOPs the rows in 16-row tiles, the model FLOPs the 32 routed rows'.
  const models::Op& up = *FindOp(moe, "expert_gate_up_gemm");
  const double padded = ExpectedPaddedRows(256, 8, 4, kGroupedGemmTileRows);
  const double small = ExpectedPaddedRows(256, 8, 4, kGroupedGemmSmallTileRows);
  EXPECT_GT(padded, 30 * 128.0);
  EXPECT_NEAR(small, padded / 8, 1e-9 * padded);
  EXPECT_EQ(up.m, static_cast<int64_t>(std::ceil(padded)));
  EXPECT_NEAR(up.flops.count(), 2 * small * up.n * up.k, 1e-6 * up.flops.count());
  const ServingOpBuilder b(model.spec().replica, models::Dtype::kFp8, models::Dtype::kBf16);
  EXPECT_DOUBLE_EQ(b.ModelFlops(up, t), 2.0 * 32 * up.n * up.k);
  // Under a whole tile per touched expert the grouped GEMM streams its
  // weights: max() of the two times. At 4,096 tokens (128 rows per expert) the
  // expert GEMMs blend compute and weight streaming; the shared-expert GEMMs
  // still take the larger.
  EXPECT_EQ(up.roofline_overlap, 0);
  const std::vector<models::Op> large = model.LayerOps(Decode(4096, 100));
  EXPECT_EQ(FindOp(large, "expert_gate_up_gemm")->roofline_overlap, kGroupedGemmRooflineOverlap);
  EXPECT_EQ(FindOp(large, "expert_down_gemm")->roofline_overlap, kGroupedGemmRooflineOverlap);
  EXPECT_EQ(FindOp(large, "shared_gate_up_gemm")->roofline_overlap, 0);
  EXPECT_EQ(FindOp(moe, "shared_gate_up_gemm")->n, 2 * 2048 / 8);
  EXPECT_EQ(FindOp(moe, "shared_down_gemm")->k, 2048 / 8);
  EXPECT_EQ(FindOp(moe, "router_gemm")->n, 256);
  const std::vector<models::Op> dense = model.LayerOps(t, /*moe=*/false);
  EXPECT_EQ(FindOp(dense, "gate_up_gemm")->n, 2 * 18432 / 8);
  EXPECT_EQ(FindOp(dense, "router_gemm"), nullptr);
  // Iteration time covers 58 MoE and 3 dense layers: more than 61 dense
  // layers' worth of the dense ops alone would not be.
  EXPECT_GT(model.Cost(t).time, sim::Duration::Zero());
}

// Under a whole tile per expert the grouped GEMM computes 16-row tiles and
// streams the touched experts' weights. DeepSeek-V3 at one decode token on tp
// 8 (H200, FP8): 8 routed rows on 8 experts, 8 x 16 rows computed; reading
// the 8 experts' 512 x 7168 FP8 gate/up weights (29 MB) takes about 7 us, and
// the GEMM is memory-bound (about 9 us with the launch). Counted as 8 x 128
// padded rows on the kernel model's tile grid it would be compute-bound at
// about twice that (the last check).
TEST_F(ServingMoeTest, GroupedGemmUnderATileStreamsItsWeights) {
  ServingCostModel model = Model("deepseek-v3-671b", 8);
  const std::vector<models::Op> ops = model.LayerOps(Decode(1, 1000));
  const models::Op& up = *FindOp(ops, "expert_gate_up_gemm");
  EXPECT_NEAR(ExpectedPaddedRows(256, 8, 1, kGroupedGemmSmallTileRows), 8 * 16.0, 1e-9);
  EXPECT_NEAR(up.flops.count(), 2.0 * 8 * 16 * up.n * up.k, 1e-6 * up.flops.count());
  EXPECT_EQ(up.roofline_overlap, 0);
  const models::OpCost cost = kernels_->Cost(up);
  EXPECT_THAT(std::string(cost.detail), HasSubstr("memory-bound"));
  EXPECT_LT(cost.time, sim::Duration::FromSecondsDouble(12e-6));
  models::Op whole_tiles = up;
  whole_tiles.flops = sim::Flops(2.0 * 8 * 128 * up.n * up.k);
  EXPECT_GT(kernels_->Cost(whole_tiles).time, cost.time * 1.8);
}

// The fused MoE's own kernels around the grouped GEMMs. Mixtral 8x7B (E 8,
// top-2, h 4096) at tp 2 and 100 decode tokens: routing reads 100 x 8 FP32
// logits and writes 100 x 2 ids, weights and sorted positions; the permute
// copies the 100 rows into 200 expert-ordered ones; the finalize reads the
// 200 expert outputs and writes the 100 tokens, all 16-bit. Under EP 8
// (DeepSeek-V3, 64 tokens) the busiest GPU permutes its received rows and
// finalizes them into its own 8 tokens.
TEST_F(ServingMoeTest, FusedMoeKernelsAroundTheGroupedGemms) {
  const std::vector<models::Op> ops = Model("mixtral-8x7b", 2).LayerOps(Decode(100, 500));
  ASSERT_NE(FindOp(ops, "moe_routing"), nullptr);
  EXPECT_EQ(FindOp(ops, "moe_routing")->bytes.count(), 100 * (8 * 4 + 2 * 4 * 3));
  EXPECT_EQ(FindOp(ops, "moe_permute")->bytes.count(), (100 + 200) * 4096 * 2);
  EXPECT_EQ(FindOp(ops, "moe_finalize")->bytes.count(), (200 + 100) * 4096 * 2);
  EXPECT_EQ(FindOp(ops, "moe_permute")->kind, models::OpKind::kMemoryBound);
  // In execution order: routing, permute, the grouped GEMMs, finalize.
  auto index = [&](std::string_view name) { return FindOp(ops, name) - ops.data(); };
  EXPECT_LT(index("router_gemm"), index("moe_routing"));
  EXPECT_LT(index("moe_permute"), index("expert_gate_up_gemm"));
  EXPECT_LT(index("expert_down_gemm"), index("moe_finalize"));

  const std::vector<models::Op> ep = Model("deepseek-v3-671b", 8, 8).LayerOps(Decode(64, 2000));
  const int64_t busiest =
      static_cast<int64_t>(std::ceil(ExpectedMaxRankRows(256, 8, 64, 8, 1.28)));
  EXPECT_EQ(FindOp(ep, "moe_routing")->bytes.count(), 8 * (256 * 4 + 8 * 4 * 3));
  EXPECT_EQ(FindOp(ep, "moe_permute")->bytes.count(), busiest * 7168 * 2 * 2);
  EXPECT_EQ(FindOp(ep, "moe_finalize")->bytes.count(), (busiest + 8) * 7168 * 2);
}

// Llama 4 Maverick: layers 1, 3, ..., 47 run the 128 experts (ffn 8192) and
// the shared expert, the other 24 the dense MLP of 16384; the iteration costs
// 24 of each, as a model with its 24 dense layers first does, and not what a
// model of 48 MoE layers costs.
TEST_F(ServingMoeTest, InterleavedMoeLayers) {
  ServingCostModel model = Model("llama4-maverick-400b", 8);
  const IterationTotals t = Decode(16, 1000);
  EXPECT_EQ(FindOp(model.LayerOps(t), "expert_gate_up_gemm")->n, 2 * 8192 / 8);
  EXPECT_EQ(FindOp(model.LayerOps(t), "shared_gate_up_gemm")->n, 2 * 8192 / 8);
  EXPECT_EQ(FindOp(model.LayerOps(t, /*moe=*/false), "gate_up_gemm")->n, 2 * 16384 / 8);
  auto cost = [&](int step, int first_dense) {
    ServingModelSpec spec = Spec("llama4-maverick-400b", 8);
    spec.replica.model.moe_layer_step = step;
    spec.replica.model.moe_first_dense_layers = first_dense;
    absl::StatusOr<ServingCostModel> m = ServingCostModel::Create(spec, *kernels_, *network_);
    EXPECT_TRUE(m.ok()) << m.status();
    return m->Cost(t);
  };
  const IterationCost interleaved = model.Cost(t);
  EXPECT_EQ(interleaved.time, cost(0, 24).time);
  EXPECT_DOUBLE_EQ(interleaved.flops, cost(0, 24).flops);
  EXPECT_LT(interleaved.time, cost(1, 0).time);  // all MoE reads 24 more layers of experts
}

// Qwen3: head_dim 128 with hidden/heads = 64: QKV and o_proj sized by it.
TEST_F(ServingMoeTest, ExplicitHeadDim) {
  ServingCostModel model = Model("qwen3-235b-a22b", 4);
  const std::vector<models::Op> ops = model.LayerOps(Decode(2, 10));
  EXPECT_EQ(FindOp(ops, "qkv_gemm")->n, (64 / 4 + 2 * 1) * 128);
  EXPECT_EQ(FindOp(ops, "o_proj_gemm")->k, 64 / 4 * 128);
  EXPECT_EQ(FindOp(ops, "expert_down_gemm")->k, 1536 / 4);
}

// Expert parallelism over 8 GPUs: each GPU attends for 1/8 of the batch with
// all heads, sends its rows·k·h 16-bit values to the experts' GPUs and back,
// and runs its 32 experts on T·k/8 rows on average; the layer waits for the
// busiest GPU's rows (under the preset's router skew, CV 1.28), which size the
// all-to-alls and the expert GEMMs; no tensor-parallel all-reduce.
TEST_F(ServingMoeTest, ExpertParallelAllToAll) {
  ServingCostModel model = Model("deepseek-v3-671b", 8, 8);
  const IterationTotals t = Decode(64, 2000);
  const std::vector<models::Op> ops = model.LayerOps(t);
  const models::Op* dispatch = FindOp(ops, "ep_alltoall_dispatch");
  const models::Op* combine = FindOp(ops, "ep_alltoall_combine");
  ASSERT_NE(dispatch, nullptr);
  ASSERT_NE(combine, nullptr);
  EXPECT_EQ(dispatch->comm, models::CommKind::kAllToAll);
  const double busiest = ExpectedMaxRankRows(256, 8, 64, 8, 1.28);
  EXPECT_GT(busiest, ExpectedMaxRankRows(256, 8, 64, 8));  // skewed above uniform
  EXPECT_GT(busiest, 64 * 8 / 8 + 8);  // 64 rows per GPU on average, sd 8
  const int64_t rows = static_cast<int64_t>(std::ceil(busiest));
  EXPECT_EQ(dispatch->comm_bytes.count(), rows * 7168 * 2);  // busiest rows x h x 2 B
  EXPECT_EQ(combine->comm_bytes, dispatch->comm_bytes);
  EXPECT_EQ(FindOp(ops, "tp_allreduce_attn"), nullptr);
  EXPECT_EQ(FindOp(ops, "tp_allreduce_mlp"), nullptr);
  // Its rows touch ~28 of its 32 experts, each run in whole 128-row tiles.
  EXPECT_GT(FindOp(ops, "expert_gate_up_gemm")->m, 25 * 128);
  EXPECT_EQ(FindOp(ops, "expert_gate_up_gemm")->n, 2 * 2048);  // whole experts
  EXPECT_EQ(FindOp(ops, "q_up_gemm")->n, 128 * 192);           // all heads
  EXPECT_EQ(FindOp(ops, "attention_decode")->n, 64 * 2001 / 8);
  const IterationCost c = model.Cost(t);
  EXPECT_GT(c.communication, sim::Duration::Zero());
}

// A prompt of 1000 tokens placed whole on one of 8 attention ranks, beside 64
// decode steps: that rank runs its 8 decode rows plus the 1000 prompt rows in
// every non-expert op and the prompt's whole causal attention, and sends its
// 1008 x 8 routed rows in the all-to-all; spread, each rank would run 133.
TEST_F(ServingMoeTest, PromptPlacedOnOneAttentionRank) {
  ServingCostModel model = Model("deepseek-v3-671b", 8, 8);
  std::vector<SequenceWork> w(64, {.new_tokens = 1, .context = 2000, .decode = true});
  w.push_back({.new_tokens = 1000, .context = 0, .decode = false});
  IterationTotals t = Summarise(w);
  const std::vector<models::Op> spread = model.LayerOps(t);
  EXPECT_EQ(FindOp(spread, "q_down_gemm")->m, (64 + 1000 + 7) / 8);
  t.rank_tokens = 8 + 1000;
  t.rank_prefill_tokens = 1000;
  t.rank_prefill_kv_tokens = 1000;
  t.rank_prefill_pairs = 1000 * 1001 / 2.0;
  const std::vector<models::Op> placed = model.LayerOps(t);
  EXPECT_EQ(FindOp(placed, "q_down_gemm")->m, 1008);
  EXPECT_EQ(FindOp(placed, "shared_gate_up_gemm")->m, 1008);
  EXPECT_EQ(FindOp(placed, "attention_prefill")->m, 1000);
  EXPECT_DOUBLE_EQ(FindOp(placed, "attention_prefill")->flops.count(),
                   2.0 * 128 * (192 + 128) * 1000 * 1001 / 2.0);
  EXPECT_EQ(FindOp(placed, "attention_decode")->m, 8);  // decode stays balanced
  EXPECT_EQ(FindOp(placed, "ep_alltoall_dispatch")->comm_bytes.count(), 1008 * 8 * 7168 * 2);
  EXPECT_GT(model.Cost(t).time, model.Cost(Summarise(w)).time);
}

TEST_F(ServingMoeTest, ExpertParallelErrorsNameTheField) {
  absl::StatusOr<ServingCostModel> uneven =
      ServingCostModel::Create(Spec("deepseek-v3-671b", 8, 4), *kernels_, *network_);
  ASSERT_FALSE(uneven.ok());
  EXPECT_THAT(uneven.status().message(), HasSubstr("inference.expert_parallel_size=4"));
  absl::StatusOr<ServingCostModel> dense =
      ServingCostModel::Create(Spec("llama3-8b", 2, 2), *kernels_, *network_);
  ASSERT_FALSE(dense.ok());
  EXPECT_THAT(dense.status().message(), HasSubstr("mixture-of-experts"));
}

// Weights per GPU under EP: everything but the routed experts whole, the
// experts / ep. DeepSeek-V3 in FP8 on 8 GPUs: (671B - 656B experts) + 656B/8,
// about 97 GB, against 671B/8 = 84 GB with every weight tensor-parallel.
TEST_F(ServingMoeTest, ExpertParallelWeights) {
  models::InferenceMemoryInputs in;
  in.replica = Spec("deepseek-v3-671b", 8, 8).replica;
  const models::ParameterCounts p = models::CountParameters(in.replica.model);
  const double experts = p.expert_per_layer * 61;
  const models::InferenceMemory ep = models::EstimateInferenceMemory(in, gpu_->memory);
  EXPECT_NEAR(static_cast<double>(ep.weights.count()) / 1e9,
              ((p.Total(61) - experts) + experts / 8) / 1e9,
              3.0);  // + 16-bit norms, router, embeddings
  in.replica.expert_parallel = 1;
  const models::InferenceMemory tp = models::EstimateInferenceMemory(in, gpu_->memory);
  EXPECT_LT(tp.weights, ep.weights);
}

// DeepSeek-V3's FP8 checkpoint scales its weights per 128 x 128 block. On an
// H200 the input of each block-scaled GEMM is quantized in a kernel of its own
// (one for the fused q and kv down-projections): 2 B read and 1 B written per
// element plus a 4 B scale per 128. Not on a B200, and not for a per-tensor
// FP8 checkpoint.
TEST_F(ServingMoeTest, BlockScaledFp8QuantizesGemmInputsOnHopper) {
  auto quants = [](const std::vector<models::Op>& ops) {
    int n = 0;
    for (const models::Op& op : ops) n += op.name.ends_with("_act_quant") ? 1 : 0;
    return n;
  };
  const IterationTotals t = Decode(4, 1000);
  ServingCostModel m = Model("deepseek-v3-671b", 8);
  const std::vector<models::Op> ops = m.LayerOps(t);
  const models::Op* q = FindOp(ops, "q_down_gemm_act_quant");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->kind, models::OpKind::kMemoryBound);
  EXPECT_EQ(q->bytes.count(), 4 * 7168 * 3 + 4 * (7168 / 128) * 4);
  EXPECT_EQ(FindOp(ops, "kv_down_gemm_act_quant"), nullptr);
  for (std::string_view name :
       {"q_up_gemm_act_quant", "attention_decode_q_absorb_act_quant",
        "attention_decode_v_absorb_act_quant", "o_proj_gemm_act_quant",
        "shared_gate_up_gemm_act_quant", "shared_down_gemm_act_quant"}) {
    EXPECT_NE(FindOp(ops, name), nullptr) << name;
  }
  EXPECT_EQ(quants(ops), 7);
  // The per-head absorbed products quantize every head's rows.
  EXPECT_EQ(FindOp(ops, "attention_decode_q_absorb_act_quant")->bytes.count(),
            4 * 16 * 128 * 3 + 4 * 16 * 4);
  // A dense-first layer: q, q_up, the absorbed pair, o, the MLP's two.
  EXPECT_EQ(quants(m.LayerOps(t, /*moe=*/false)), 7);

  ServingModelSpec per_tensor = Spec("deepseek-v3-671b", 8);
  per_tensor.replica.model.fp8_weight_block = 0;
  absl::StatusOr<ServingCostModel> plain =
      ServingCostModel::Create(per_tensor, *kernels_, *network_);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(quants(plain->LayerOps(t)), 0);
  EXPECT_LT(plain->Cost(t).time, m.Cost(t).time);

  const models::GpuSpec* b200 = *models::GpuCatalog::Default().Find("b200-sxm-180gb");
  const models::KernelModel blackwell(*b200, models::KernelModelParams{},
                                      models::Calibration::Shipped(b200->name));
  absl::StatusOr<ServingCostModel> on_b200 =
      ServingCostModel::Create(Spec("deepseek-v3-671b", 8), blackwell, *network_);
  ASSERT_TRUE(on_b200.ok()) << on_b200.status();
  EXPECT_EQ(quants(on_b200->LayerOps(t)), 0);
}

}  // namespace
}  // namespace clustersim::strategies
