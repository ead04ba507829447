// Mixture-of-experts ops of models/workload.h, checked against Mixtral 8x7B
// (models.md §4.2) and Megatron-LM's MoE FLOPs formula (models/flops.h).
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/flops.h"
#include "models/workload.h"

namespace clustersim::models {
namespace {

using ::testing::ElementsAre;

TransformerConfig Mixtral() {
  absl::StatusOr<TransformerConfig> c = ModelCatalog::Default().Find("mixtral-8x7b");
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

Workload Build(const TransformerConfig& c, const ShardSpec& s) {
  absl::StatusOr<Workload> w = BuildWorkload(c, s);
  EXPECT_TRUE(w.ok()) << w.status();
  return *w;
}

std::vector<std::string> Names(const std::vector<Op>& ops) {
  std::vector<std::string> names;
  for (const Op& op : ops) names.push_back(op.name);
  return names;
}

const Op& Get(const std::vector<Op>& ops, std::string_view name) {
  for (const Op& op : ops) {
    if (op.name == name) return op;
  }
  ADD_FAILURE() << "no op " << name;
  return ops.front();
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

TEST(MoeWorkloadTest, MixtralLayerHasRouterExpertsAndAllToAll) {
  Workload w = Build(Mixtral(), {.tensor_parallel = 2, .expert_parallel = 4});
  EXPECT_THAT(Names(w.layer_forward),
              ElementsAre("layernorm1", "qkv_gemm", "attention_fwd", "out_proj_gemm",
                          "tp_allreduce_attn", "dropout_residual1", "layernorm2", "router_gemm",
                          "router_softmax_topk", "moe_permute", "ep_alltoall_dispatch",
                          "expert_fc1_gemm", "swiglu", "expert_fc2_gemm", "ep_alltoall_combine",
                          "moe_unpermute", "tp_allreduce_mlp", "dropout_residual2"));
  // 4096 tokens, top-2 of 8 experts, 4 EP ranks pooling their tokens:
  // 2·4096·4/8 = 4096 rows for each of the 2 local experts.
  const Op& fc1 = Get(w.layer_forward, "expert_fc1_gemm");
  EXPECT_EQ(fc1.batch, 2);
  EXPECT_EQ(fc1.m, 4096);
  EXPECT_EQ(fc1.n, 2 * 14336 / 2);  // gate + up, one TP shard
  EXPECT_EQ(fc1.k, 4096);
  const Op& a2a = Get(w.layer_forward, "ep_alltoall_dispatch");
  EXPECT_EQ(a2a.group, CommGroup::kExpert);
  EXPECT_EQ(a2a.comm, CommKind::kAllToAll);
  // Each rank sends k copies of its 4096 tokens of h = 4096 bf16 values.
  EXPECT_EQ(a2a.comm_bytes.count(), 2LL * 4096 * 4096 * 2);
  EXPECT_EQ(Get(w.layer_forward, "router_gemm").n, 8);
  EXPECT_EQ(Get(w.layer_forward, "router_softmax_topk").kind, OpKind::kMemoryBound);
  // Backward carries the two all-to-alls again, on the expert group.
  int a2a_bwd = 0;
  for (const Op& op : w.layer_backward) a2a_bwd += op.group == CommGroup::kExpert ? 1 : 0;
  EXPECT_EQ(a2a_bwd, 2);
}

// Megatron's num_floating_point_operations counts k experts per token and no
// router: the ops' GEMM FLOPs plus 3x the attention forward (expert GEMMs at capacity factor 1, no
// router) must add up to it exactly across tp·ep ranks' worth of work.
TEST(MoeWorkloadTest, GemmFlopsMatchMegatronMoeFormula) {
  TransformerConfig c = Mixtral();
  for (int ep : {1, 2, 8}) {
    Workload w = Build(c, {.expert_parallel = ep});
    // Megatron counts attention backward as 2x forward (FlashAttention-2's
    // kernel does 2.5x; the op carries that), so attention enters as 3x forward.
    const double layer = GemmFlops(w.layer_forward, true) + GemmFlops(w.layer_backward, true) +
                         3 * Get(w.layer_forward, "attention_fwd").flops.count();
    const double head = GemmFlops(w.head_forward, true) + GemmFlops(w.head_backward, true);
    // Per micro-batch of 1 sequence on one rank; the EP group of ep ranks
    // processes ep sequences, so one rank's share is one sequence.
    EXPECT_NEAR((layer * c.num_layers + head) / MegatronModelFlops(c, 1), 1.0, 1e-9) << ep;
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

}  // namespace
}  // namespace clustersim::models
