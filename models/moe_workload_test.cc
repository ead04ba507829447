// Mixture-of-experts ops of models/workload.h, checked against Mixtral 8x7B
// (models.md §4.2) and Megatron-LM's MoE FLOPs formula (models/flops.h).
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/flops.h"
#include "models/workload.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Build;
using testing::Get;
using testing::Names;
using ::testing::ElementsAre;

TransformerConfig Mixtral() {
  absl::StatusOr<TransformerConfig> c = ModelCatalog::Default().Find("mixtral-8x7b");
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

double GemmFlops(const std::vector<Op>& ops, bool skip_router) {
  double f = 0;
  for (const Op& op : ops) {
    if (op.kind != OpKind::kGemm) continue;
    if (skip_router && op.name.rfind("router_gemm", 0) == 0) continue;
    f += op.flops.count();
  }
  return f;
}

// Megatron-core's MoEAlltoAllTokenDispatcher with tp 2 (sequence parallel):
// permute -> all-to-all (ep) -> all-gather (tp) -> sort chunks -> experts ->
// unsort -> reduce-scatter (tp) -> all-to-all (ep) -> unpermute, and no
// dense-MLP TP collectives around it.
TEST(MoeWorkloadTest, MixtralLayerFollowsTheAllToAllDispatcher) {
  Workload w = Build(Mixtral(),
                     {.tensor_parallel = 2, .sequence_parallel = true, .expert_parallel = 4});
  EXPECT_THAT(Names(w.layer_forward),
              ElementsAre("layernorm1", "tp_allgather_attn", "qkv_gemm", "attention_fwd",
                          "out_proj_gemm", "tp_reducescatter_attn", "dropout_residual1",
                          "layernorm2", "router_gemm", "router_softmax_topk", "moe_permute",
                          "ep_alltoall_dispatch", "tp_allgather_moe_dispatch", "moe_sort_chunks",
                          "expert_fc1_gemm", "swiglu", "expert_fc2_gemm", "moe_unsort_chunks",
                          "tp_reducescatter_moe_combine", "ep_alltoall_combine", "moe_unpermute",
                          "dropout_residual2"));
  // The host waits for the token counts right after the permute, nowhere else.
  for (const Op& op : w.layer_forward) {
    EXPECT_EQ(op.host_sync_before, op.name == "ep_alltoall_dispatch") << op.name;
  }
  // Each TP rank routes its own 4096/2 = 2048 tokens.
  EXPECT_EQ(Get(w.layer_forward, "router_gemm").m, 2048);
  EXPECT_EQ(Get(w.layer_forward, "router_gemm").n, 8);
  EXPECT_EQ(Get(w.layer_forward, "router_softmax_topk").kind, OpKind::kMemoryBound);
  // Every expert sees 2 choices x 2048 tokens / 8 experts = 512 rows from each
  // of the tp·ep = 8 ranks: 4096 rows for each of the 2 local experts.
  const Op& fc1 = Get(w.layer_forward, "expert_fc1_gemm");
  EXPECT_EQ(fc1.batch, 2);
  EXPECT_EQ(fc1.m, 4096);
  EXPECT_EQ(fc1.n, 2 * 14336 / 2);  // gate + up, one TP shard
  EXPECT_EQ(fc1.k, 4096);
  // Transformer Engine's grouped GEMM: one kernel per expert on 4 streams,
  // forward and backward alike; the dense GEMMs are single kernels.
  EXPECT_EQ(fc1.streams, 4);
  EXPECT_EQ(Get(w.layer_forward, "expert_fc2_gemm").streams, 4);
  for (const char* name : {"expert_fc1_gemm_dgrad", "expert_fc1_gemm_wgrad",
                           "expert_fc2_gemm_dgrad", "expert_fc2_gemm_wgrad"}) {
    EXPECT_EQ(Get(w.layer_backward, name).streams, 4) << name;
  }
  EXPECT_EQ(Get(w.layer_forward, "router_gemm").streams, 0);
  EXPECT_EQ(Get(w.layer_forward, "qkv_gemm").streams, 0);
  // One cuBLAS launch per local expert (2 here), forward and backward; the
  // dense GEMMs launch once.
  for (const char* name : {"expert_fc1_gemm", "expert_fc2_gemm"}) {
    EXPECT_EQ(Get(w.layer_forward, name).kernels, 2) << name;
  }
  for (const char* name : {"expert_fc1_gemm_dgrad", "expert_fc1_gemm_wgrad",
                           "expert_fc2_gemm_dgrad", "expert_fc2_gemm_wgrad"}) {
    EXPECT_EQ(Get(w.layer_backward, name).kernels, 2) << name;
  }
  EXPECT_EQ(Get(w.layer_forward, "router_gemm").kernels, 1);
  EXPECT_EQ(Get(w.layer_backward, "qkv_gemm_dgrad").kernels, 1);
  // The all-gather over tp collects the 2 x 4096 expert rows, h = 4096 bf16.
  const Op& ag = Get(w.layer_forward, "tp_allgather_moe_dispatch");
  EXPECT_EQ(ag.group, CommGroup::kTensor);
  EXPECT_EQ(ag.comm, CommKind::kAllGather);
  EXPECT_EQ(ag.comm_bytes.count(), 2LL * 4096 * 4096 * 2);
  const Op& rs = Get(w.layer_forward, "tp_reducescatter_moe_combine");
  EXPECT_EQ(rs.comm, CommKind::kReduceScatter);
  EXPECT_EQ(rs.comm_bytes, ag.comm_bytes);
  // Backward: the duals, in reverse, and nothing from the dense MLP.
  std::vector<std::string> comm;
  for (const Op& op : w.layer_backward) {
    if (op.kind == OpKind::kCollective) comm.push_back(op.name);
  }
  EXPECT_THAT(comm, ElementsAre("ep_alltoall_combine_bwd", "tp_allgather_moe_combine_bwd",
                                "tp_reducescatter_moe_dispatch_bwd", "ep_alltoall_dispatch_bwd",
                                "tp_allgather_attn_bwd", "tp_allgather_attn_input_bwd",
                                "tp_reducescatter_attn_bwd"));
  EXPECT_EQ(Get(w.layer_backward, "tp_allgather_moe_combine_bwd").comm, CommKind::kAllGather);
  EXPECT_EQ(Get(w.layer_backward, "tp_reducescatter_moe_dispatch_bwd").comm,
            CommKind::kReduceScatter);
  EXPECT_EQ(Get(w.layer_backward, "ep_alltoall_dispatch_bwd").group, CommGroup::kExpert);
}

// Bytes each rank sends in the dispatch all-to-all: k copies of the tokens
// it routes, h bf16 values each. tp 1: 2·4096·4096·2 = 64 MiB; tp 2 (each
// rank routes its half of the sequence): 32 MiB, as in Megatron-core
// (input_splits sum to k·S·B/TP rows).
// Expert TP 1 (parallel folding): whole experts on each rank, no tp
// all-gather or reduce-scatter around them; each rank's all-to-all carries its
// own sequence-parallel shard, and the expert GEMMs see only the ep ranks' rows.
TEST(MoeWorkloadTest, FoldedExpertsSkipTheTensorCollectives) {
  const ShardSpec folded{.tensor_parallel = 2, .sequence_parallel = true, .expert_parallel = 8,
                         .expert_tensor_parallel = 1};
  Workload w = Build(Mixtral(), folded);
  EXPECT_THAT(Names(w.layer_forward),
              ElementsAre("layernorm1", "tp_allgather_attn", "qkv_gemm", "attention_fwd",
                          "out_proj_gemm", "tp_reducescatter_attn", "dropout_residual1",
                          "layernorm2", "router_gemm", "router_softmax_topk", "moe_permute",
                          "ep_alltoall_dispatch", "expert_fc1_gemm", "swiglu", "expert_fc2_gemm",
                          "ep_alltoall_combine", "moe_unpermute", "dropout_residual2"));
  // One local expert (8 / 8) of the full width: 2 x 2048 / 8 = 512 rows from
  // each of the 8 ep ranks.
  const Op& fc1 = Get(w.layer_forward, "expert_fc1_gemm");
  EXPECT_EQ(fc1.batch, 1);
  EXPECT_EQ(fc1.m, 4096);
  EXPECT_EQ(fc1.n, 2 * 14336);
  // The same expert FLOPs per rank as expert TP 2 with ep 4: the work is
  // split over the same 8 ranks either way.
  Workload tp_split =
      Build(Mixtral(), {.tensor_parallel = 2, .sequence_parallel = true, .expert_parallel = 4});
  EXPECT_DOUBLE_EQ(fc1.flops.count(), Get(tp_split.layer_forward, "expert_fc1_gemm").flops.count());
  EXPECT_EQ(Get(w.layer_forward, "ep_alltoall_dispatch").comm_bytes,
            Get(tp_split.layer_forward, "ep_alltoall_dispatch").comm_bytes);
  for (const Op& op : w.layer_backward) {
    const bool tp_moe_collective =
        op.name.rfind("tp_", 0) == 0 && op.name.find("_moe_") != std::string::npos;
    EXPECT_FALSE(tp_moe_collective) << op.name;
  }
}

// DeepSeek-V3's multi-token prediction: one more MoE layer, its 2h -> h input
// projection and the output layer again, after the head; none by default.
TEST(MoeWorkloadTest, MultiTokenPredictionAddsALayerAndAHeadPass) {
  absl::StatusOr<TransformerConfig> ds = ModelCatalog::Default().Find("deepseek-v3-671b");
  ASSERT_TRUE(ds.ok()) << ds.status();
  const ShardSpec shard{.expert_parallel = 8};
  EXPECT_TRUE(Build(*ds, shard).mtp_forward.empty());
  TransformerConfig c = *ds;
  c.mtp_num_layers = 1;
  Workload w = Build(c, shard);
  const double layer = GemmFlops(w.layer_forward, false);
  const double head = GemmFlops(w.head_forward, false);
  const double proj = 2.0 * 4096 * 2 * 7168 * 7168;
  EXPECT_DOUBLE_EQ(GemmFlops(w.mtp_forward, false), layer + head + proj);
  EXPECT_DOUBLE_EQ(GemmFlops(w.mtp_backward, false), 2 * (layer + head + proj));
  EXPECT_EQ(w.mtp_forward.front().name, "mtp_norms");
  EXPECT_EQ(Get(w.mtp_forward, "mtp_eh_proj_gemm").k, 2 * 7168);
  c.mtp_num_layers = -1;
  EXPECT_FALSE(BuildWorkload(c, shard).ok());
}

TEST(MoeWorkloadTest, AllToAllBytesPerRankShrinkWithTensorParallel) {
  const Workload tp1 = Build(Mixtral(), {.expert_parallel = 8});
  const Workload tp2 = Build(
      Mixtral(), {.tensor_parallel = 2, .sequence_parallel = true, .expert_parallel = 8});
  EXPECT_EQ(Get(tp1.layer_forward, "ep_alltoall_dispatch").comm_bytes.count(), 64LL << 20);
  EXPECT_EQ(Get(tp1.layer_forward, "ep_alltoall_combine").comm_bytes.count(), 64LL << 20);
  EXPECT_EQ(Get(tp2.layer_forward, "ep_alltoall_dispatch").comm_bytes.count(), 32LL << 20);
  EXPECT_EQ(Get(tp2.layer_backward, "ep_alltoall_dispatch_bwd").comm_bytes.count(), 32LL << 20);
  // One local expert (E/ep = 1): nothing to sort; tp 1 has no TP collectives.
  for (const Op& op : tp1.layer_forward) {
    EXPECT_FALSE(op.kind == OpKind::kCollective && op.group == CommGroup::kTensor) << op.name;
    EXPECT_EQ(op.name.find("sort_chunks"), std::string::npos) << op.name;
  }
  // Expert rows are the same: 2·4096·8/8 = 8192 either way (tp 2 pools 2x
  // the ranks with half the tokens each).
  EXPECT_EQ(Get(tp1.layer_forward, "expert_fc1_gemm").m, 8192);
  EXPECT_EQ(Get(tp2.layer_forward, "expert_fc1_gemm").m, 8192);
}

TEST(MoeWorkloadTest, TensorParallelMoeWithoutSequenceParallelIsRejected) {
  absl::StatusOr<Workload> w = BuildWorkload(Mixtral(), {.tensor_parallel = 2});
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(std::string(w.status().message()),
              ::testing::HasSubstr("needs sequence_parallel=true"));
}

// Megatron's num_floating_point_operations counts k experts per token and no
// router: the ops' GEMM FLOPs plus 3x the attention forward (expert GEMMs at capacity factor 1, no
// router) must add up to it exactly across tp·ep ranks' worth of work.
TEST(MoeWorkloadTest, GemmFlopsMatchMegatronMoeFormula) {
  TransformerConfig c = Mixtral();
  for (auto [tp, ep] : {std::pair{1, 1}, {1, 2}, {1, 8}, {2, 8}}) {
    Workload w = Build(c, {.tensor_parallel = tp, .sequence_parallel = tp > 1,
                           .expert_parallel = ep});
    // Megatron counts attention backward as 2x forward (FlashAttention-2's
    // kernel does 2.5x; the op carries that), so attention enters as 3x forward.
    const double layer = GemmFlops(w.layer_forward, true) + GemmFlops(w.layer_backward, true) +
                         3 * Get(w.layer_forward, "attention_fwd").flops.count();
    const double head = GemmFlops(w.head_forward, true) + GemmFlops(w.head_backward, true);
    // Per micro-batch of 1 sequence on one rank; the EP group of ep ranks
    // processes ep sequences, so one rank's share is 1/tp of one sequence.
    EXPECT_NEAR(tp * (layer * c.num_layers + head) / MegatronModelFlops(c, 1), 1.0, 1e-9)
        << tp << " " << ep;
  }
}

TEST(MoeWorkloadTest, CapacityFactorPadsExpertRows) {
  TransformerConfig c = Mixtral();
  c.moe_capacity_factor = 1.25;
  Workload w = Build(c, {.expert_parallel = 8});
  // ceil(2 · 4096 · 8 / 8 · 1.25) = 10240 rows for the single local expert.
  const Op& fc2 = Get(w.layer_forward, "expert_fc2_gemm");
  EXPECT_EQ(fc2.batch, 1);
  EXPECT_EQ(fc2.m, 10240);
  c.moe_capacity_factor = 0;
  EXPECT_FALSE(BuildWorkload(c, {}).ok());
}

// Transformer Engine's GroupedLinear quantizes each expert's rows with its own
// quantizer (split_quantize): under current scaling three kernels per expert
// (amax, scale, cast), under MXFP8 one, under delayed scaling one fused kernel
// for all; the dense GEMMs' casts stay one kernel. The host pays one launch for
// the dense casts and one per grouped GEMM (one Python call each).
TEST(MoeWorkloadTest, Fp8CastsQuantizeEachExpertOnItsOwn) {
  for (auto [recipe, kernels] : {std::pair{Fp8Recipe::kCurrent, 1 + 2 * 3 * 4},
                                 {Fp8Recipe::kMxfp8, 1 + 2 * 4},
                                 {Fp8Recipe::kDelayed, 1 + 2}}) {
    Workload w = Build(Mixtral(), {.dtype = Dtype::kFp8, .fp8_recipe = recipe,
                                   .expert_parallel = 2});  // 4 local experts
    for (const std::vector<Op>* ops : {&w.layer_forward, &w.layer_backward}) {
      const Op& cast = Get(*ops, ops == &w.layer_forward ? "fp8_cast_fwd" : "fp8_cast_bwd");
      EXPECT_EQ(cast.kernels, kernels) << Fp8RecipeName(recipe);
      EXPECT_EQ(cast.HostLaunches(), 3) << Fp8RecipeName(recipe);
    }
  }
}

}  // namespace
}  // namespace clustersim::models
