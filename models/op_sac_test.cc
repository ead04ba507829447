// torchtitan's per-op selective checkpointing (ShardSpec::recompute_op_sac):
// which forward ops it replays at the start of a layer's backward, in bf16
// and with fp8 linears, and the FLOPs OpSacForwardFlops counts for them.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/flops.h"
#include "models/workload.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Build;
using testing::Preset;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

ShardSpec OpSac(int tp, Dtype dtype) {
  ShardSpec s{.tensor_parallel = tp, .sequence_parallel = tp > 1, .dtype = dtype,
              .recompute = Recompute::kSelective};
  s.recompute_op_sac = true;
  s.modules.core_attn = false;  // the policy saves SDPA's output
  return s;
}

// The replayed ops open the backward, in forward order; returns their names
// and checks that nothing after them is a replay.
std::vector<std::string> LeadingReplay(const std::vector<Op>& ops) {
  std::vector<std::string> names;
  size_t i = 0;
  for (; i < ops.size() && ops[i].recompute; ++i) names.push_back(ops[i].name);
  for (; i < ops.size(); ++i) EXPECT_FALSE(ops[i].recompute) << ops[i].name;
  return names;
}

double ReplayFlops(const std::vector<Op>& ops) {
  double f = 0;
  for (const Op& op : ops) {
    if (op.recompute) f += op.flops.count();
  }
  return f;
}

// Llama 3 8B's mms run wq, wk, wv, wo, w1, w3, w2: every second one (wk, wo,
// w3) is replayed with the norms, the residual add, SwiGLU and the
// sequence-parallel gathers; SDPA is saved, so attention is not replayed.
TEST(OpSacTest, Bf16ReplaysEverySecondMatmulAndTheElementwiseOps) {
  const TransformerConfig c = Preset("llama3-8b");
  const Workload w = Build(c, OpSac(8, Dtype::kBf16));
  EXPECT_THAT(LeadingReplay(w.layer_backward),
              ElementsAre("layernorm1", "tp_allgather_attn", "qkv_gemm_wk", "out_proj_gemm",
                          "dropout_residual1", "layernorm2", "tp_allgather_mlp", "fc1_gemm_w3",
                          "swiglu"));
  const int64_t tokens = c.seq_length;  // micro-batch 1
  for (const Op& op : w.layer_backward) {
    if (op.name == "qkv_gemm_wk") EXPECT_EQ(op.n, 8 / 8 * 128);  // 8 KV heads of 128 over tp 8
    if (op.name == "fc1_gemm_w3") EXPECT_EQ(op.n, c.ffn_hidden_size / 8);
    if (op.name == "fc1_gemm_w3") EXPECT_EQ(op.m, tokens);
  }
  // Unsharded, the replay's GEMM FLOPs over all layers are OpSacForwardFlops'.
  const Workload one = Build(c, OpSac(1, Dtype::kBf16));
  EXPECT_DOUBLE_EQ(ReplayFlops(one.layer_backward) * c.num_layers,
                   OpSacForwardFlops(c, /*global_batch=*/1, /*fp8_linears=*/false));
}

// Float8 linears run aten._scaled_mm, which the policy neither saves nor
// counts: QKV, wo and FC1 are replayed whole, with their input casts; w2's
// output is read by no backward op, so the replay stops before it.
TEST(OpSacTest, Fp8ReplaysEveryLinearButTheLast) {
  const TransformerConfig c = Preset("llama3-8b");
  const Workload w = Build(c, OpSac(1, Dtype::kFp8));
  EXPECT_THAT(LeadingReplay(w.layer_backward),
              ElementsAre("layernorm1", "fp8_cast_fwd", "qkv_gemm", "out_proj_gemm",
                          "dropout_residual1", "layernorm2", "fc1_gemm", "swiglu"));
  EXPECT_DOUBLE_EQ(ReplayFlops(w.layer_backward) * c.num_layers,
                   OpSacForwardFlops(c, /*global_batch=*/1, /*fp8_linears=*/true));
  // More than bf16's three matmuls, less than the whole forward.
  EXPECT_GT(OpSacForwardFlops(c, 1, true), OpSacForwardFlops(c, 1, false));
  double forward_gemms = 0;
  for (const Op& op : w.layer_forward) {
    if (op.kind == OpKind::kGemm) forward_gemms += op.flops.count();
  }
  EXPECT_LT(OpSacForwardFlops(c, 1, true), forward_gemms * c.num_layers);
}

TEST(OpSacTest, RefusedWithoutSelectiveOrOnExperts) {
  ShardSpec full = OpSac(1, Dtype::kBf16);
  full.recompute = Recompute::kFull;
  EXPECT_THAT(BuildWorkload(Preset("llama3-8b"), full).status().message(),
              HasSubstr("selective+op"));
  EXPECT_THAT(BuildWorkload(Preset("mixtral-8x7b"), OpSac(1, Dtype::kBf16)).status().message(),
              HasSubstr("experts"));
}

}  // namespace
}  // namespace clustersim::models
