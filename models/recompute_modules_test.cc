// Megatron-Core's selective recompute modules (ShardSpec::modules): which
// forward ops each replays before its backward, the memory each frees and
// the FLOPs RecomputeModulesExtraFlops counts.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/flops.h"
#include "models/memory_model.h"
#include "models/workload.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Build;
using testing::Preset;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::string> Replayed(const std::vector<Op>& ops) {
  std::vector<std::string> names;
  for (const Op& op : ops) {
    if (op.recompute) names.push_back(op.name);
  }
  return names;
}

size_t IndexOf(const std::vector<Op>& ops, std::string_view name) {
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].name == name) return i;
  }
  ADD_FAILURE() << "no op " << name;
  return 0;
}

double Flops(const std::vector<Op>& ops) {
  double f = 0;
  for (const Op& op : ops) f += op.flops.count();
  return f;
}

ShardSpec Selective(RecomputeModules m) {
  return ShardSpec{.recompute = Recompute::kSelective, .modules = m, .expert_parallel = 8,
                   .expert_tensor_parallel = 1};
}

// DeepSeek-V3's Megatron-Bridge presets: "mla_up_proj" alone replays the two
// up projections, after the output projection's backward and before the
// attention core's; the core itself is not replayed (the list replaces the
// default).
TEST(RecomputeModulesTest, MlaUpProjReplaysTheUpProjectionsInPlaceOfTheCore) {
  const TransformerConfig c = Preset("deepseek-v3-671b");
  const Workload w = Build(c, Selective({.core_attn = false, .mla_up_proj = true}));
  EXPECT_THAT(Replayed(w.layer_backward), ElementsAre("q_up_gemm", "kv_up_gemm"));
  const std::vector<Op>& b = w.layer_backward;
  EXPECT_LT(IndexOf(b, "out_proj_gemm_wgrad"), IndexOf(b, "q_up_gemm"));
  EXPECT_EQ(IndexOf(b, "kv_up_gemm") + 1, IndexOf(b, "attention_bwd"));
  // On top of the attention core (Megatron's selective count), per sequence
  // (micro-batch 1) over every layer: the workload's replay.
  const Workload core = Build(c, Selective({}));
  const Workload both = Build(c, Selective({.mla_up_proj = true}));
  const double extra = Flops(both.layer_backward) - Flops(core.layer_backward);
  EXPECT_GT(extra, 0);
  EXPECT_NEAR(RecomputeModulesExtraFlops(c, 1, Recompute::kSelective, {.mla_up_proj = true}),
              extra * c.num_layers, 1e-9 * extra * c.num_layers);
  EXPECT_EQ(RecomputeModulesExtraFlops(c, 1, Recompute::kNone, {.mla_up_proj = true}), 0);
}

TEST(RecomputeModulesTest, MoeActAndLayernormReplayBeforeTheirConsumersBackward) {
  const TransformerConfig c = Preset("deepseek-v3-671b");
  const Workload w = Build(c, Selective({.moe_act = true, .layernorm = true}));
  const std::vector<Op>& b = w.layer_backward;
  EXPECT_THAT(Replayed(b), ElementsAre("layernorm2", "swiglu", "layernorm1", "attention_fwd"));
  EXPECT_LT(IndexOf(b, "swiglu"), IndexOf(b, "expert_fc2_gemm_dgrad"));
  EXPECT_LT(IndexOf(b, "layernorm2"), IndexOf(b, "moe_unpermute_bwd"));
}

// "mlp" replays the dense MLP whole; on a mixture-of-experts layer it does
// nothing (Megatron: only when the layer is not a MoE layer).
TEST(RecomputeModulesTest, MlpReplaysOnlyDenseLayers) {
  const Workload w = Build(Preset("deepseek-v3-671b"), Selective({.core_attn = false, .mlp = true}));
  EXPECT_THAT(Replayed(w.layer_backward), IsEmpty());
  EXPECT_THAT(Replayed(w.dense_layer_backward), ElementsAre("fc1_gemm", "swiglu", "fc2_gemm"));
  const Workload tp = Build(Preset("llama2-70b"),
                            ShardSpec{.tensor_parallel = 4, .sequence_parallel = true,
                                      .recompute = Recompute::kSelective, .modules = {.mlp = true}});
  EXPECT_THAT(Replayed(tp.layer_backward),
              ElementsAre("tp_allgather_mlp", "fc1_gemm", "swiglu", "fc2_gemm",
                          "tp_reducescatter_mlp", "attention_fwd"));
}

TEST(RecomputeModulesTest, RefusesModulesTheModelLacks) {
  EXPECT_THAT(BuildWorkload(Preset("llama2-70b"),
                            ShardSpec{.recompute = Recompute::kSelective,
                                      .modules = {.mla_up_proj = true}})
                  .status()
                  .message(),
              HasSubstr("mla_up_proj"));
  EXPECT_THAT(BuildWorkload(Preset("llama2-70b"),
                            ShardSpec{.recompute = Recompute::kSelective,
                                      .modules = {.moe_act = true}})
                  .status()
                  .message(),
              HasSubstr("moe_act"));
}

// Without "core_attn" the attention core's activations stay; each module
// frees what it replays.
TEST(RecomputeModulesTest, MemoryKeepsTheCoreWithoutCoreAttnAndFreesReplayedOutputs) {
  const TransformerConfig c = Preset("deepseek-v3-671b");
  MemoryInputs in;
  in.model = c;
  in.data_parallel = 8;
  in.shard = Selective({});
  auto activations = [&in] {
    EXPECT_TRUE(ValidateMemoryInputs(in).ok()) << ValidateMemoryInputs(in);
    return static_cast<double>(EstimateMemory(in).activations.count());
  };
  const double core = activations();
  in.shard.modules.core_attn = false;
  const double kept = activations();
  EXPECT_GT(kept, core);
  for (RecomputeModules m : {RecomputeModules{.core_attn = false, .mla_up_proj = true},
                             RecomputeModules{.core_attn = false, .moe_act = true},
                             RecomputeModules{.core_attn = false, .layernorm = true}}) {
    in.shard.modules = m;
    EXPECT_LT(activations(), kept);
  }
}

}  // namespace
}  // namespace clustersim::models
