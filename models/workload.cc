#include "models/workload.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "models/cuda_graph.h"
#include "models/workload_ops.h"
#include "sim/check.h"
#include "sim/status_macros.h"

namespace clustersim::models {
namespace workload_internal {

const Op& FindOp(const std::vector<Op>& ops, std::string_view name) {
  for (const Op& op : ops) {
    if (op.name == name) return op;
  }
  SIM_CHECK(false) << "forward op " << name << " missing";
  return ops.front();
}

// Backward of a column-parallel GEMM (QKV, FC1, LM head): Megatron-LM's
// LinearWithGradAccumulationAndAsyncCommunication. With sequence parallel it
// re-gathers the sharded input for wgrad (unless Dims::tp_input_kept: DTensor
// keeps the gathered input) and reduce-scatters dgrad's output; without, it
// all-reduces dgrad's output. `block` names the collectives.
void ColumnParallelBackward(const Dims& d, const Op& fwd, absl::string_view block,
                            std::vector<Op>* out) {
  if (d.sp && !d.tp_input_kept) {
    out->push_back(Collective(d, absl::StrCat("tp_allgather_", block, "_input_bwd"),
                              CommKind::kAllGather, BoundaryBytes(d)));
  }
  out->push_back(Dgrad(d, fwd));
  if (d.sp) {
    out->push_back(Collective(d, absl::StrCat("tp_reducescatter_", block, "_bwd"),
                              CommKind::kReduceScatter, BoundaryBytes(d)));
  } else if (d.t > 1) {
    out->push_back(Collective(d, absl::StrCat("tp_allreduce_", block, "_bwd"), CommKind::kAllReduce,
                              BoundaryBytes(d)));
  }
  out->push_back(Wgrad(d, fwd));
}

// Backward of a row-parallel GEMM (output projection, FC2): with sequence
// parallel the incoming gradient is all-gathered first (backward of the
// forward reduce-scatter); the forward all-reduce's backward is the identity.
void RowParallelBackward(const Dims& d, const Op& fwd, absl::string_view block,
                         std::vector<Op>* out) {
  if (d.sp) {
    out->push_back(InputGather(d, absl::StrCat("tp_allgather_", block, "_bwd")));
  }
  out->push_back(Dgrad(d, fwd));
  out->push_back(Wgrad(d, fwd));
}

}  // namespace workload_internal

namespace {

using workload_internal::ActivationBackward;
using workload_internal::ActivationForward;
using workload_internal::AttentionCoreBackward;
using workload_internal::AttentionCoreForward;
using workload_internal::BoundaryBytes;
using workload_internal::Collective;
using workload_internal::ColumnParallelBackward;
using workload_internal::Dgrad;
using workload_internal::Dims;
using workload_internal::EagerRope;
using workload_internal::FindOp;
using workload_internal::Fp8CastBytes;
using workload_internal::Fp8RescaleBytes;
using workload_internal::Gemm;
using workload_internal::InputGather;
using workload_internal::LatentProjections;
using workload_internal::MambaMixerBackward;
using workload_internal::MambaMixerForward;
using workload_internal::LatentProjectionsBackward;
using workload_internal::MakeContextRing;
using workload_internal::MakeDims;
using workload_internal::MemoryBound;
using workload_internal::MemoryBoundBackward;
using workload_internal::MoeBackward;
using workload_internal::MoeForward;
using workload_internal::MlpReplay;
using workload_internal::MlpUpReplay;
using workload_internal::NormBackward;
using workload_internal::NormForward;
using workload_internal::OpSacReplay;
using workload_internal::Replay;
using workload_internal::RopeElements;
using workload_internal::RopeBackward;
using workload_internal::RopeForward;
using workload_internal::RowParallelBackward;
using workload_internal::SetFp8CastKernels;
using workload_internal::SharedExpertsBackward;
using workload_internal::SharedExpertsForward;
using workload_internal::Sixteen;
using workload_internal::Wgrad;

// The attention block: layernorm1 through dropout_residual1.
void AttentionBlockForward(const Dims& d, std::vector<Op>* ops) {
  ops->push_back(NormForward(d, "layernorm1", d.ln_tokens * d.h));
  if (d.sp) ops->push_back(InputGather(d, "tp_allgather_attn"));
  if (d.mla) {
    LatentProjections(d, ops);
  } else {
    ops->push_back(Gemm(d, "qkv_gemm", d.tokens, (d.a_local + 2 * d.g_local) * d.d, d.h));
    if (EagerRope(d)) ops->push_back(RopeForward(d, RopeElements(d)));
  }
  AttentionCoreForward(d, ops);
  ops->push_back(Gemm(d, "out_proj_gemm", d.tokens, d.h, d.a_local * d.dv));
  if (d.sp) {
    ops->push_back(
        Collective(d, "tp_reducescatter_attn", CommKind::kReduceScatter, BoundaryBytes(d)));
  } else if (d.t > 1) {
    ops->push_back(Collective(d, "tp_allreduce_attn", CommKind::kAllReduce, BoundaryBytes(d)));
  }
}

// The MLP block, dense or mixture-of-experts: layernorm2 through the MLP's
// tensor-parallel reduction.
void MlpBlockForward(const Dims& d, std::vector<Op>* ops) {
  ops->push_back(NormForward(d, "layernorm2", d.ln_tokens * d.h));
  if (d.moe) {
    MoeForward(d, ops);  // takes and returns the sequence-parallel shard
    return;
  }
  if (d.sp) ops->push_back(InputGather(d, "tp_allgather_mlp"));
  ops->push_back(Gemm(d, "fc1_gemm", d.tokens, d.fc1_n, d.h));
  ops->push_back(ActivationForward(d, d.tokens * d.f_local));
  ops->push_back(Gemm(d, "fc2_gemm", d.tokens, d.h, d.f_local));
  if (d.sp) {
    ops->push_back(
        Collective(d, "tp_reducescatter_mlp", CommKind::kReduceScatter, BoundaryBytes(d)));
  } else if (d.t > 1) {
    ops->push_back(Collective(d, "tp_allreduce_mlp", CommKind::kAllReduce, BoundaryBytes(d)));
  }
}

int64_t ResidualBytes(const Dims& d) {
  return d.ln_tokens * d.h * (3 * d.act + 1);  // x, residual, out, mask
}

// One layer of `kind`: a transformer layer (attention, then the MLP) or a
// hybrid layer's one block, each block behind its norm and followed by its
// residual add; the mixer's norm and residual are layernorm1 and
// dropout_residual1, the MLP's layernorm2 and dropout_residual2.
std::vector<Op> LayerForward(const Dims& d, LayerKind kind) {
  std::vector<Op> ops;
  const bool attention = kind == LayerKind::kTransformer || kind == LayerKind::kAttention;
  const bool mlp = kind == LayerKind::kTransformer || kind == LayerKind::kMlp ||
                   kind == LayerKind::kMoe;
  if (attention) AttentionBlockForward(d, &ops);
  if (kind == LayerKind::kMamba) {
    ops.push_back(NormForward(d, "layernorm1", d.ln_tokens * d.h));
    MambaMixerForward(d, &ops);
  }
  if (attention || kind == LayerKind::kMamba) {
    ops.push_back(MemoryBound(d, "dropout_residual1", ResidualBytes(d)));
  }
  size_t mlp_begin = ops.size();
  if (mlp) {
    MlpBlockForward(d, &ops);
    ops.push_back(MemoryBound(d, "dropout_residual2", ResidualBytes(d)));
  }
  size_t mlp_end = ops.size();
  if (const int64_t cast = Fp8CastBytes(ops, /*backward=*/false, d.fp8_recipe); cast > 0) {
    ops.insert(ops.begin() + 1, MemoryBound(d, "fp8_cast_fwd", cast));  // after the first norm
    SetFp8CastKernels(ops, d.fp8_recipe, &ops[1]);
    if (mlp_begin > 0) ++mlp_begin;
    ++mlp_end;
  }
  // The FP8 cast sits in the first block: the attention's, or an MLP-only
  // layer's MLP.
  const GraphScope mixer = attention ? GraphScope::kAttn : GraphScope::kLayer;
  TagLayerScopes(d.moe && kind != LayerKind::kMlp, mlp_begin, mlp_end, mixer, GraphScope::kLayer,
                 &ops);
  return ops;
}

// The MLP block's backward, dropout_residual2 through layernorm2.
void MlpBlockBackward(const Dims& d, const std::vector<Op>& fwd, const ShardSpec& s,
                      std::vector<Op>* ops) {
  const bool selective = s.recompute == Recompute::kSelective;
  const RecomputeModules& m = s.modules;
  ops->push_back(MemoryBoundBackward(d, FindOp(fwd, "dropout_residual2")));
  // Module "layernorm": each norm's output is dropped and replayed when the
  // backward of the block it feeds begins.
  if (selective && m.layernorm) Replay(fwd, {"layernorm2"}, ops);
  if (d.moe) {
    MoeBackward(d, fwd, selective && m.moe_act, ops);
  } else {
    if (selective && s.recompute_mlp_up) MlpUpReplay(d, fwd, ops);
    if (selective && m.mlp) MlpReplay(d, fwd, ops);
    RowParallelBackward(d, FindOp(fwd, "fc2_gemm"), "mlp", ops);
    ops->push_back(ActivationBackward(d, FindOp(fwd, d.act_name), d.tokens * d.f_local));
    ColumnParallelBackward(d, FindOp(fwd, "fc1_gemm"), "mlp", ops);
  }
  ops->push_back(NormBackward(d, FindOp(fwd, "layernorm2"), d.ln_tokens * d.h));
}

// The attention block's backward after dropout_residual1's: the output
// projection through the QKV projection.
void AttentionBlockBackward(const Dims& d, const std::vector<Op>& fwd, const ShardSpec& s,
                            std::vector<Op>* ops) {
  const bool selective = s.recompute == Recompute::kSelective;
  const RecomputeModules& m = s.modules;
  RowParallelBackward(d, FindOp(fwd, "out_proj_gemm"), "attn", ops);
  // Module "mla_up_proj": the query and key/value up projections' outputs are
  // dropped after the attention core and replayed before its backward
  // (multi_latent_attention.py, CheckpointWithoutOutput).
  if (selective && m.mla_up_proj && d.mla) {
    Replay(fwd, {d.q_lora > 0 ? "q_up_gemm" : "q_gemm", "kv_up_gemm"}, ops);
  }
  AttentionCoreBackward(d, fwd, selective && m.core_attn, ops);
  if (d.mla) {
    LatentProjectionsBackward(d, fwd, ops);
  } else {
    if (EagerRope(d)) ops->push_back(RopeBackward(d, FindOp(fwd, "rope")));
    ColumnParallelBackward(d, FindOp(fwd, "qkv_gemm"), "attn", ops);
  }
}

std::vector<Op> LayerBackward(const Dims& d, const std::vector<Op>& fwd, const ShardSpec& s,
                              LayerKind kind) {
  const Recompute recompute = s.recompute;
  std::vector<Op> ops;
  if (recompute == Recompute::kFull) {
    for (Op op : fwd) {
      op.recompute = true;
      ops.push_back(std::move(op));
    }
  }
  const bool selective = recompute == Recompute::kSelective;
  if (selective && s.recompute_op_sac) OpSacReplay(d, fwd, &ops);
  if (const int64_t cast = Fp8CastBytes(fwd, /*backward=*/true, d.fp8_recipe); cast > 0) {
    ops.push_back(MemoryBound(d, "fp8_cast_bwd", cast));
    SetFp8CastKernels(fwd, d.fp8_recipe, &ops.back());
  }
  if (const int64_t rescale = Fp8RescaleBytes(fwd, d.fp8_recipe); rescale > 0) {
    ops.push_back(MemoryBound(d, "fp8_rescale_bwd", rescale));
  }
  const bool attention = kind == LayerKind::kTransformer || kind == LayerKind::kAttention;
  const size_t mlp_begin = ops.size();
  if (kind != LayerKind::kAttention && kind != LayerKind::kMamba) {
    MlpBlockBackward(d, fwd, s, &ops);
  }
  const size_t mlp_end = ops.size();
  const bool moe = d.moe && kind != LayerKind::kMlp;
  if (!attention && kind != LayerKind::kMamba) {
    TagLayerScopes(moe, mlp_begin, mlp_end, GraphScope::kLayer, GraphScope::kLayer, &ops);
    return ops;
  }
  ops.push_back(MemoryBoundBackward(d, FindOp(fwd, "dropout_residual1")));
  if (selective && s.modules.layernorm) Replay(fwd, {"layernorm1"}, &ops);
  if (attention) {
    AttentionBlockBackward(d, fwd, s, &ops);
  } else {
    MambaMixerBackward(d, fwd, &ops);
  }
  ops.push_back(NormBackward(d, FindOp(fwd, "layernorm1"), d.ln_tokens * d.h));
  TagLayerScopes(moe, mlp_begin, mlp_end, GraphScope::kLayer,
                 attention ? GraphScope::kAttn : GraphScope::kLayer, &ops);
  return ops;
}

void Embedding(const Dims& d, Workload* w) {
  // Vocab-parallel lookup writes b·s·h (zeros outside the local shard); a
  // learned position table adds a read and an add.
  const Op lookup = MemoryBound(d, "embedding_lookup",
                                d.tokens * d.h * d.act * (d.learned_positions ? 4 : 2));
  const Op dropout = MemoryBound(d, "embedding_dropout", d.ln_tokens * d.h * (2 * d.act + 1));
  w->embedding_forward.push_back(lookup);
  w->embedding_forward.back().host_sync_before = d.data_sync;
  if (d.sp) {
    w->embedding_forward.push_back(Collective(d, "tp_reducescatter_embedding",
                                              CommKind::kReduceScatter, BoundaryBytes(d)));
  } else if (d.t > 1) {
    w->embedding_forward.push_back(
        Collective(d, "tp_allreduce_embedding", CommKind::kAllReduce, BoundaryBytes(d)));
  }
  w->embedding_forward.push_back(dropout);

  w->embedding_backward.push_back(MemoryBoundBackward(d, dropout));
  if (d.sp) {
    w->embedding_backward.push_back(
        Collective(d, "tp_allgather_embedding_bwd", CommKind::kAllGather, BoundaryBytes(d)));
  }
  // Scatter-add into the dense (V/tp) x h weight gradient, which is written whole.
  w->embedding_backward.push_back(MemoryBound(
      d, "embedding_bwd", 2 * d.tokens * d.h * d.act + d.v_local * d.h * d.act));
}

void Head(const Dims& d, Workload* w) {
  const Op norm = NormForward(d, "final_norm", d.ln_tokens * d.h);
  const Op lm_head = Gemm(Sixteen(d), "lm_head_gemm", d.tokens, d.v_local, d.h);
  w->head_forward.push_back(norm);
  if (d.sp) {
    w->head_forward.push_back(InputGather(Sixteen(d), "tp_allgather_head"));
  }
  w->head_forward.push_back(lm_head);
  // Megatron-LM's vocab-parallel cross-entropy (tensor_parallel/
  // cross_entropy.py; unfused, --cross-entropy-loss-fusion off, the default),
  // pass by pass over the logits: cast the 16-bit logits to fp32 (read act,
  // write 4 B), max (read 4), subtract the max in place (read and write 4),
  // exp in place (read and write 4), sum (read 4), divide by the sum in place
  // (read and write 4): the softmax kept for backward.
  w->head_forward.push_back(
      MemoryBound(d, "cross_entropy", d.tokens * d.v_local * (d.act + 4 + 4 + 8 + 8 + 4 + 8)));
  if (d.t > 1) {
    // max, target logit and sum of exponentials: one fp32 per token each.
    for (absl::string_view what : {"max", "target", "sumexp"}) {
      w->head_forward.push_back(Collective(d, absl::StrCat("tp_allreduce_ce_", what),
                                           CommKind::kAllReduce, d.tokens * 4));
    }
  }
  // Backward: the softmax times the loss gradient in place (read and write
  // 4 B), then the cast's backward to the 16-bit logit gradient (read 4,
  // write act).
  w->head_backward.push_back(
      MemoryBound(d, "cross_entropy_bwd", d.tokens * d.v_local * (8 + 4 + d.act)));
  ColumnParallelBackward(d, lm_head, "head", &w->head_backward);
  w->head_backward.push_back(NormBackward(d, norm, d.ln_tokens * d.h));
}

// The shapes of a MoE model's layers without experts (its dense-first or
// interleaved dense layers, a hybrid model's non-'E' layers): the model with
// no experts and the shard without expert parallelism.
struct DenseShapes {
  ShardSpec shard;
  Dims dims;
};
DenseShapes DenseCopy(const TransformerConfig& c, const ShardSpec& s) {
  TransformerConfig dense = c;
  dense.num_experts = 0;
  dense.moe_top_k = 0;
  dense.moe_ffn_hidden_size = 0;
  dense.moe_shared_expert_ffn_size = 0;
  dense.moe_first_dense_layers = 0;
  dense.moe_layer_step = 0;
  ShardSpec dense_shard = s;
  dense_shard.expert_parallel = 1;
  return {dense_shard, MakeDims(dense, dense_shard)};
}

// A hybrid model's lists, one pair per kind its pattern holds: the MoE
// layers ('E') with the model's shapes, the others with DenseCopy's.
void HybridLayers(const TransformerConfig& c, const ShardSpec& s, const Dims& d, Workload* w) {
  const auto [dense_shard, dd] = DenseCopy(c, s);
  w->hybrid_layers.resize(c.num_layers);
  for (int l = 0; l < c.num_layers; ++l) {
    const LayerKind kind = c.Kind(l);
    w->hybrid_layers[l] = kind;
    const int i = HybridIndex(kind);
    if (!w->hybrid_forward[i].empty()) continue;
    const bool moe = kind == LayerKind::kMoe;
    w->hybrid_forward[i] = LayerForward(moe ? d : dd, kind);
    w->hybrid_backward[i] =
        LayerBackward(moe ? d : dd, w->hybrid_forward[i], moe ? s : dense_shard, kind);
  }
}

}  // namespace

// One multi-token-prediction module (Megatron-Core MultiTokenPredictionLayer):
// RMSNorms of the hidden state and of the shifted token embedding, their
// concatenation projected 2h -> h (eh_proj, column-parallel), one transformer
// layer of the model's kind, then the shared output layer and loss again.
// Backward mirrors it. Appends to w->mtp_forward / mtp_backward; REQUIRES the
// layer and head lists built.
void MultiTokenPrediction(const Dims& d, Workload* w) {
  const Op norms = MemoryBound(d, "mtp_norms", 2 * 2 * d.ln_tokens * d.h * d.act);
  w->mtp_forward.push_back(norms);
  if (d.sp) w->mtp_forward.push_back(InputGather(d, "tp_allgather_mtp"));
  const Op proj = Gemm(d, "mtp_eh_proj_gemm", d.tokens, d.h / d.t, 2 * d.h);
  w->mtp_forward.push_back(proj);
  if (d.sp) w->mtp_forward.push_back(InputGather(d, "tp_allgather_mtp_proj"));
  for (const std::vector<Op>* part : {&w->layer_forward, &w->head_forward}) {
    w->mtp_forward.insert(w->mtp_forward.end(), part->begin(), part->end());
  }
  for (const std::vector<Op>* part : {&w->head_backward, &w->layer_backward}) {
    w->mtp_backward.insert(w->mtp_backward.end(), part->begin(), part->end());
  }
  ColumnParallelBackward(d, proj, "mtp", &w->mtp_backward);
  w->mtp_backward.push_back(MemoryBoundBackward(d, norms));
}

absl::StatusOr<Workload> BuildWorkload(const TransformerConfig& c, const ShardSpec& s) {
  CLUSTERSIM_RETURN_IF_ERROR(ValidateTransformer(c));
  CLUSTERSIM_RETURN_IF_ERROR(ValidateShard(c, s));
  const Dims d = MakeDims(c, s);
  Workload w;
  Embedding(d, &w);
  if (c.hybrid()) {
    HybridLayers(c, s, d, &w);
  } else {
    w.layer_forward = LayerForward(d, LayerKind::kTransformer);
    w.layer_backward = LayerBackward(d, w.layer_forward, s, LayerKind::kTransformer);
    if (c.num_experts > 0 && c.num_dense_layers() > 0) {
      const auto [dense_shard, dd] = DenseCopy(c, s);
      w.dense_layers.resize(c.num_layers);
      for (int l = 0; l < c.num_layers; ++l) w.dense_layers[l] = !c.IsMoeLayer(l);
      w.dense_layer_forward = LayerForward(dd, LayerKind::kTransformer);
      w.dense_layer_backward =
          LayerBackward(dd, w.dense_layer_forward, dense_shard, LayerKind::kTransformer);
    }
  }
  Head(d, &w);
  for (int i = 0; i < c.mtp_num_layers; ++i) MultiTokenPrediction(d, &w);
  if (s.context_parallel > 1) w.context_ring = MakeContextRing(d, s.context_parallel);
  AddGradientPasses(d, s, &w);
  return w;
}

}  // namespace clustersim::models
