// Architecture variants of the transformer layer (models/workload.h):
// Megatron-core's shared experts and multi-head latent attention, forward and
// backward, for models/workload.cc.
#include <string_view>

#include "absl/strings/str_cat.h"
#include "models/workload_ops.h"

namespace clustersim::models::workload_internal {

// Megatron-core's SharedExpertMLP (DeepSeek n_shared_experts, Qwen2-MoE's
// shared expert): a dense, tensor-parallel MLP of the shared FFN size over
// every token, its output added to the routed experts' (no overlap with the
// dispatch, moe_shared_expert_overlap off, Megatron's default).
void SharedExpertsForward(const Dims& d, std::vector<Op>* ops) {
  if (d.sp) ops->push_back(InputGather(d, "tp_allgather_shared"));
  ops->push_back(Gemm(d, "shared_fc1_gemm", d.tokens, d.fs1_n, d.h));
  ops->push_back(MemoryBound(d, absl::StrCat("shared_", d.act_name),
                             d.tokens * d.fs_local * d.act * (d.swiglu ? 3 : 2)));
  ops->push_back(Gemm(d, "shared_fc2_gemm", d.tokens, d.h, d.fs_local));
  if (d.sp) {
    ops->push_back(
        Collective(d, "tp_reducescatter_shared", CommKind::kReduceScatter, BoundaryBytes(d)));
  }
}

// Megatron-core's MLASelfAttention (multi_latent_attention.py) up to the
// attention core: the down projections (q to q_lora, kv to kv_lora + the
// RoPE key) are replicated on every TP rank, as Megatron builds them
// (parallel_mode "duplicated"), each followed by its RMSNorm; the up
// projections are column-parallel: q_lora -> a/tp·(nope + rope) and
// kv_lora -> a/tp·(nope + v). Without q_lora the query is one column-parallel
// h -> a/tp·(nope + rope) GEMM.
void LatentProjections(const Dims& d, std::vector<Op>* ops) {
  if (d.q_lora > 0) {
    ops->push_back(Gemm(d, "q_down_gemm", d.tokens, d.q_lora, d.h));
    ops->push_back(MemoryBound(d, "q_latent_norm", 2 * d.tokens * d.q_lora * d.act));
    ops->push_back(Gemm(d, "q_up_gemm", d.tokens, d.a_local * d.d, d.q_lora));
  } else {
    ops->push_back(Gemm(d, "q_gemm", d.tokens, d.a_local * d.d, d.h));
  }
  ops->push_back(Gemm(d, "kv_down_gemm", d.tokens, d.kv_lora + d.rope, d.h));
  ops->push_back(MemoryBound(d, "kv_latent_norm", 2 * d.tokens * d.kv_lora * d.act));
  ops->push_back(Gemm(d, "kv_up_gemm", d.tokens, d.a_local * (d.d - d.rope + d.dv), d.kv_lora));
}

// Backward of SharedExpertsForward: the row-parallel FC2, the activation and
// the column-parallel FC1 (with their sequence-parallel collectives).
void SharedExpertsBackward(const Dims& d, const std::vector<Op>& fwd, std::vector<Op>* out) {
  RowParallelBackward(d, FindOp(fwd, "shared_fc2_gemm"), "shared", out);
  out->push_back(MemoryBoundBackward(d, FindOp(fwd, absl::StrCat("shared_", d.act_name))));
  ColumnParallelBackward(d, FindOp(fwd, "shared_fc1_gemm"), "shared", out);
}

// Backward of LatentProjections, in reverse, with the column-parallel
// collectives of ColumnParallelBackward around the whole block: re-gather the
// sequence-parallel input for the wgrads, reduce-scatter (or all-reduce) the
// input gradient once. The all-reduce of the latents' partial gradients (the
// up projections are column-parallel; tokens·(q_lora + kv_lora) values) is
// left out: a few percent of the boundary all-reduce.
void LatentProjectionsBackward(const Dims& d, const std::vector<Op>& fwd, std::vector<Op>* out) {
  if (d.sp) {
    out->push_back(
        Collective(d, "tp_allgather_attn_input_bwd", CommKind::kAllGather, BoundaryBytes(d)));
  }
  auto gemm_bwd = [&](std::string_view name) {
    const Op& op = FindOp(fwd, name);
    out->push_back(Dgrad(d, op));
    out->push_back(Wgrad(d, op));
  };
  gemm_bwd("kv_up_gemm");
  out->push_back(MemoryBoundBackward(d, FindOp(fwd, "kv_latent_norm")));
  gemm_bwd("kv_down_gemm");
  if (d.q_lora > 0) {
    gemm_bwd("q_up_gemm");
    out->push_back(MemoryBoundBackward(d, FindOp(fwd, "q_latent_norm")));
    gemm_bwd("q_down_gemm");
  } else {
    gemm_bwd("q_gemm");
  }
  if (d.sp) {
    out->push_back(
        Collective(d, "tp_reducescatter_attn_bwd", CommKind::kReduceScatter, BoundaryBytes(d)));
  } else if (d.t > 1) {
    out->push_back(Collective(d, "tp_allreduce_attn_bwd", CommKind::kAllReduce, BoundaryBytes(d)));
  }
}

}  // namespace clustersim::models::workload_internal
