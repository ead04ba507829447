// Architecture variants of the transformer layer (models/workload.h):
// Megatron-core's routed and shared experts and multi-head latent attention,
// forward and backward, for models/workload.cc.
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
  if (d.sp && !d.tp_input_kept) {
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

// Megatron-core MoE layer with the all-to-all token dispatcher
// (token_dispatcher.py, MoEAlltoAllTokenDispatcher), experts tensor-parallel
// like the dense MLP (expert TP = tp, sequence parallel required): every TP
// rank routes only its own ln_tokens = tokens/tp, permutes the k·cf copies
// (moe_sent rows), all-to-alls them over the expert-parallel group, then
// all-gathers them over the tensor group so each TP shard of an expert sees
// the tokens of all tp x ep ranks, sorts them by local expert, runs the
// grouped expert GEMMs; the combine mirrors it (unsort, reduce-scatter over
// tp, all-to-all over ep, unpermute). With expert TP 1 (parallel folding) the
// experts are whole on each rank and the tp all-gather / reduce-scatter drop
// out: the all-to-all alone carries each rank's shard. The all-to-all of the fp32 routing
// probabilities (4 bytes per row against h·2) and the token-count all-gather
// are left out.
//
// The grouped expert GEMMs (Megatron-core TEGroupedMLP, --moe-grouped-gemm:
// Transformer Engine's GroupedLinear) run one cuBLAS GEMM per local expert,
// expert i on compute stream i mod 4 (TE multi_stream_cublas_gemm,
// transformer_engine/common/gemm/cublaslt_gemm.cu; 4 streams:
// common/include/transformer_engine/multi_stream.h), not as one batched
// kernel: each expert's GEMM fills the SMs on its own, and the host launches
// each one (Op::kernels = local experts).
constexpr int kGroupedGemmStreams = 4;

void MoeForward(const Dims& d, std::vector<Op>* ops) {
  const int64_t routed = d.experts_local * d.expert_tokens;  // expert rows on this rank
  ops->push_back(Gemm(d, "router_gemm", d.ln_tokens, d.experts, d.h));
  // fp32 logits: read for the softmax, write probabilities; top-k writes an
  // fp32 weight and an int64 index per choice.
  ops->push_back(MemoryBound(d, "router_softmax_topk",
                             d.ln_tokens * d.experts * 4 * 2 + d.ln_tokens * d.top_k * (4 + 8)));
  ops->push_back(MemoryBound(d, "moe_permute", (d.ln_tokens + d.moe_sent) * d.h * d.act));
  // The dropless dispatcher copies the per-expert token counts to the host
  // after the permute (MoEAlltoAllTokenDispatcher: tokens_per_expert .cpu()
  // for the all-to-all splits), so the host waits there before launching on.
  const size_t after_permute = ops->size();
  if (d.ep > 1) {
    ops->push_back(Collective(d, "ep_alltoall_dispatch", CommKind::kAllToAll,
                              d.moe_sent * d.h * d.act, CommGroup::kExpert));
  }
  if (d.expert_sp) {
    ops->push_back(Collective(d, "tp_allgather_moe_dispatch", CommKind::kAllGather,
                              routed * d.h * d.act));
  }
  // Chunks arrive grouped by source rank; regroup them by local expert.
  const bool sort = d.experts_local > 1 && (d.ep > 1 || d.expert_sp);
  if (sort) ops->push_back(MemoryBound(d, "moe_sort_chunks", 2 * routed * d.h * d.act));
  ops->push_back(Gemm(d, "expert_fc1_gemm", d.expert_tokens, d.fe1_n, d.h, d.experts_local));
  // Padded to capacity, the splits are known on the host: no sync.
  (*ops)[after_permute].host_sync_before = !d.drop_and_pad;
  ops->back().streams = kGroupedGemmStreams;
  ops->back().kernels = static_cast<int>(std::max<int64_t>(1, d.experts_local));
  if (d.glu_clamp) ops->push_back(ExpertGluClamp(d, routed * d.fe_local));
  ops->push_back(MemoryBound(d, d.act_name, routed * d.fe_local * d.act * (d.swiglu ? 3 : 2)));
  // The quick-GeGLU path makes its +1 offset a device tensor with
  // torch.tensor(linear_offset, device=...) on every call, a synchronising
  // host-to-device copy (pytorch/pytorch#120996).
  ops->back().host_sync_before = d.quick_gelu_glu;
  ops->push_back(Gemm(d, "expert_fc2_gemm", d.expert_tokens, d.h, d.fe_local, d.experts_local));
  ops->back().streams = kGroupedGemmStreams;
  ops->back().kernels = static_cast<int>(std::max<int64_t>(1, d.experts_local));
  if (d.expert_bias) ops->push_back(ExpertBias(d, routed));
  if (sort) ops->push_back(MemoryBound(d, "moe_unsort_chunks", 2 * routed * d.h * d.act));
  if (d.expert_sp) {
    ops->push_back(Collective(d, "tp_reducescatter_moe_combine", CommKind::kReduceScatter,
                              routed * d.h * d.act));
  }
  if (d.ep > 1) {
    ops->push_back(Collective(d, "ep_alltoall_combine", CommKind::kAllToAll,
                              d.moe_sent * d.h * d.act, CommGroup::kExpert));
  }
  // Weighted sum of the k expert outputs back into token order.
  ops->push_back(MemoryBound(d, "moe_unpermute",
                             (d.moe_sent + d.ln_tokens) * d.h * d.act + d.ln_tokens * d.top_k * 4));
  if (d.fs_local > 0) SharedExpertsForward(d, ops);
}

// Backward of MoeForward, in reverse: each collective's backward is its
// dual (all-to-all -> all-to-all, reduce-scatter -> all-gather, all-gather ->
// reduce-scatter). The expert GEMMs keep their gathered inputs, so nothing is
// re-gathered; the input gradient stays on the sequence-parallel shard.
void MoeBackward(const Dims& d, const std::vector<Op>& fwd, bool replay_act,
                 std::vector<Op>* out) {
  auto dual = [&](std::string_view name, std::string bwd_name, CommKind kind) {
    for (const Op& op : fwd) {
      if (op.name != name) continue;
      Op b = op;
      b.name = std::move(bwd_name);
      b.comm = kind;
      b.host_sync_before = false;  // the backward pass has no dispatcher sync
      out->push_back(std::move(b));
    }
  };
  auto memory_bwd = [&](std::string_view name) {
    for (const Op& op : fwd) {
      if (op.name == name) out->push_back(MemoryBoundBackward(d, op));
    }
  };
  if (d.fs_local > 0) SharedExpertsBackward(d, fwd, out);
  memory_bwd("moe_unpermute");
  dual("ep_alltoall_combine", "ep_alltoall_combine_bwd", CommKind::kAllToAll);
  dual("tp_reducescatter_moe_combine", "tp_allgather_moe_combine_bwd", CommKind::kAllGather);
  memory_bwd("moe_unsort_chunks");
  if (d.expert_bias) {
    out->push_back(ExpertBiasBackward(d, d.experts_local * d.expert_tokens));
  }
  // Recompute module "moe_act": the activation's output (with its clamp, which
  // the checkpointed function holds) is dropped after fc2 and replayed when
  // fc2's backward needs it.
  if (replay_act && d.glu_clamp) Replay(fwd, {"expert_glu_clamp"}, out);
  if (replay_act) Replay(fwd, {d.act_name}, out);
  const Op& fc2 = FindOp(fwd, "expert_fc2_gemm");
  out->push_back(Dgrad(d, fc2));
  out->push_back(Wgrad(d, fc2));
  memory_bwd(d.act_name);
  if (d.glu_clamp) out->push_back(ExpertGluClampBackward(d, FindOp(fwd, "expert_glu_clamp")));
  const Op& fc1 = FindOp(fwd, "expert_fc1_gemm");
  out->push_back(Dgrad(d, fc1));
  out->push_back(Wgrad(d, fc1));
  memory_bwd("moe_sort_chunks");
  dual("tp_allgather_moe_dispatch", "tp_reducescatter_moe_dispatch_bwd", CommKind::kReduceScatter);
  dual("ep_alltoall_dispatch", "ep_alltoall_dispatch_bwd", CommKind::kAllToAll);
  memory_bwd("moe_permute");
  memory_bwd("router_softmax_topk");
  const Op& router = FindOp(fwd, "router_gemm");
  out->push_back(Dgrad(d, router));
  out->push_back(Wgrad(d, router));
}

}  // namespace clustersim::models::workload_internal
