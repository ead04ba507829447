// A hybrid model's serving ops (strategies/serving_mamba.h).
//
// Attention, MLP and MoE layers run their half of a transformer layer's ops
// (ServingCostModel::LayerOps, split at the MLP's norm). A Mamba layer runs
// Megatron-Core's / vLLM's Mamba-2 mixer on the rank's heads/tp: the input
// norm, in_proj, the causal conv1d, the gated RMSNorm, out_proj and its
// tensor-parallel all-reduce; the SSD scan runs over the prefill tokens in
// chunks of mamba_chunk_size as the training forward's five Triton kernels
// (models/mamba_scan.h), and each decode step reads and writes the
// sequence's SSM state (heads·head_dim·state) and conv state
// ((conv_kernel − 1)·conv channels) once, as mamba_ssm's
// selective_state_update and causal_conv1d_update do.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/mamba_scan.h"
#include "strategies/serving_iteration.h"
#include "strategies/serving_mamba.h"
#include "strategies/serving_moe.h"

namespace clustersim::strategies {

using models::Op;

absl::Status ValidateServingMamba(const models::ReplicaModel& replica) {
  const models::TransformerConfig& m = replica.model;
  if (m.num_layers_of(models::LayerKind::kMamba) == 0) return absl::OkStatus();
  const int tp = replica.tensor_parallel;
  if (m.mamba_num_heads % tp != 0 || m.mamba_num_groups % tp != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inference.tensor_parallel_size=", tp, " must divide model.mamba_num_heads=",
        m.mamba_num_heads, " and model.mamba_num_groups=", m.mamba_num_groups,
        " (the Mamba mixer's heads and groups are split over tp)"));
  }
  if (replica.expert_parallel > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inference.expert_parallel_size=", replica.expert_parallel,
        " (data-parallel attention) is not modelled with Mamba layers; set it to 1"));
  }
  return absl::OkStatus();
}

std::vector<Op> ServingCostModel::HybridLayerOps(const IterationTotals& t,
                                                 models::LayerKind kind) const {
  const models::TransformerConfig& m = spec_.replica.model;
  if (kind != models::LayerKind::kMamba) {
    std::vector<Op> whole = LayerOps(t, kind == models::LayerKind::kMoe);
    const auto mlp = std::find_if(whole.begin(), whole.end(),
                                  [](const Op& op) { return op.name == "post_norm"; });
    if (kind == models::LayerKind::kAttention) return std::vector<Op>(whole.begin(), mlp);
    return std::vector<Op>(mlp, whole.end());
  }
  const ServingOpBuilder b = Builder();
  const int64_t tp = spec_.replica.tensor_parallel;
  const int64_t T = b.RankRows(t), h = m.hidden_size;
  const int64_t d_inner = m.mamba_d_inner() / tp, conv = m.mamba_conv_dim() / tp;
  std::vector<Op> ops;
  ops.push_back(ServingMemoryOp("input_norm", T * h * 2 * 2));
  ops.push_back(b.Gemm("mamba_in_proj_gemm", T, m.mamba_in_proj_width() / tp, h));
  ops.push_back(ServingMemoryOp("mamba_conv1d", T * conv * 2 * 2));
  ops.push_back(ServingMemoryOp("mamba_gated_norm", T * d_inner * 3 * 2));
  ops.push_back(b.Gemm("mamba_out_proj_gemm", T, h, d_inner));
  if (tp > 1) {
    ops.push_back(ServingCollective("tp_allreduce_mamba", models::CommKind::kAllReduce, T * h * 2));
  }
  return ops;
}

std::vector<Op> ServingCostModel::MambaStateOps(const IterationTotals& t) const {
  const models::TransformerConfig& m = spec_.replica.model;
  const int64_t tp = spec_.replica.tensor_parallel;
  const int64_t heads = m.mamba_num_heads / tp, groups = m.mamba_num_groups / tp;
  const int64_t p = m.mamba_head_dim, n = m.mamba_state_dim, q = m.mamba_chunk_size;
  std::vector<Op> ops;
  if (t.prefill_tokens > 0) {
    const models::SsdShape shape{.tokens = t.prefill_tokens,
                                 .chunks = (t.prefill_tokens + q - 1) / q,
                                 .heads = heads,
                                 .groups = groups,
                                 .head_dim = p,
                                 .state = n,
                                 .chunk_len = q};
    ops = models::SsdScanForward(shape, attention_dtype_);
  }
  if (t.decode_seqs > 0) {
    const int64_t state = models::MambaStateElementsPerLayer(m, spec_.replica.tensor_parallel);
    const int64_t state_bytes = models::BytesPerElement(spec_.replica.kv_cache_dtype);
    ops.push_back(ServingMemoryOp("mamba_state_decode", t.decode_seqs * state * state_bytes * 2));
  }
  return ops;
}

}  // namespace clustersim::strategies
