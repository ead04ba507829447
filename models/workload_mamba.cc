// The Mamba-2 mixer's ops (Megatron-Core megatron/core/ssm/mamba_mixer.py
// MambaMixer, NVIDIA/Megatron-LM @ 2255f6b71c; Dao & Gu 2024, "Transformers
// are SSMs", arXiv 2405.21060).
//
// Tensor parallelism as Megatron-Core shards the mixer (it asserts that tp
// divides the heads and the groups): in_proj is column-parallel (z, x, B, C
// and dt of heads/tp heads and groups/tp groups; TE userbuffer "fc1", so
// tp_comm_overlap covers its all-gather as it does an MLP's fc1),
// conv1d, the scan and the gated RMSNorm run on the rank's own channels,
// out_proj is row-parallel (userbuffer "fc2") and is followed by one
// all-reduce (or reduce-scatter with sequence parallelism), as attention's
// output projection is.
//
// The mixer trains through mamba_ssm's mamba_split_conv1d_scan_combined
// without an rmsnorm_weight (Megatron-Core's use_mem_eff_path default;
// MambaMixer.forward at 7094270c6f, _ssm_training at d7288711ba):
// causal_conv1d over x, B and C, then the SSD scan with the silu(z) gate
// applied inside chunk_scan, then the mixer's own RMSNorm (RMSNormGated
// called without z) over the gated output. The scan runs mamba_ssm's Triton
// kernels, one op per launch with their FLOPs and bytes (models/mamba_scan.h),
// per sequence of s tokens in s/Q chunks of Q (mamba_chunk_size) tokens; in
// BF16 under FP8 too. The combined function saves zxbcdt, not the conv
// output, so its backward first reruns causal_conv1d's forward. conv1d and
// the norm are memory-bound ops, backward at twice their traffic.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/mamba_scan.h"
#include "models/workload_ops.h"

namespace clustersim::models::workload_internal {
namespace {

struct MambaShape {
  int64_t heads, groups, head_dim, state, chunk_len, chunks, d_inner, conv, in_proj;
};

MambaShape ShapeOf(const Dims& d) {
  MambaShape m;
  m.heads = d.mamba_heads_local;
  m.groups = d.mamba_groups_local;
  m.head_dim = d.mamba_head_dim;
  m.state = d.mamba_state;
  m.chunk_len = d.mamba_chunk;
  m.chunks = d.b * ((d.s_local + m.chunk_len - 1) / m.chunk_len);
  m.d_inner = m.heads * m.head_dim;
  m.conv = m.d_inner + 2 * m.groups * m.state;   // x, B, C
  m.in_proj = m.conv + m.d_inner + m.heads;       // z, x, B, C, dt
  return m;
}

SsdShape ScanShapeOf(const Dims& d) {
  const MambaShape m = ShapeOf(d);
  return SsdShape{.tokens = d.tokens, .chunks = m.chunks, .heads = m.heads, .groups = m.groups,
                  .head_dim = m.head_dim, .state = m.state, .chunk_len = m.chunk_len,
                  .gate_z = true};
}

}  // namespace

void MambaMixerForward(const Dims& d, std::vector<Op>* ops) {
  const MambaShape m = ShapeOf(d);
  const Dims b16 = Sixteen(d);  // the scan runs in BF16 under FP8 too
  if (d.sp) ops->push_back(InputGather(d, "tp_allgather_mamba"));
  ops->push_back(Gemm(d, "mamba_in_proj_gemm", d.tokens, m.in_proj, d.h));
  // Depthwise causal conv1d and SiLU over x, B and C (causal_conv1d_fn):
  // read the input and write the output once; the conv_kernel taps stay in
  // registers.
  ops->push_back(MemoryBound(d, "mamba_conv1d", d.tokens * m.conv * 2 * d.act));
  for (Op& op : SsdScanForward(ScanShapeOf(d), b16.dtype)) ops->push_back(std::move(op));
  // RMSNorm per group over the gated y (the gate ran in chunk_scan): read y,
  // write the out_proj input.
  ops->push_back(MemoryBound(d, "mamba_norm", d.tokens * m.d_inner * 2 * d.act));
  ops->push_back(Gemm(d, "mamba_out_proj_gemm", d.tokens, d.h, m.d_inner));
  if (d.sp) {
    ops->push_back(
        Collective(d, "tp_reducescatter_mamba", CommKind::kReduceScatter, BoundaryBytes(d)));
  } else if (d.t > 1) {
    ops->push_back(Collective(d, "tp_allreduce_mamba", CommKind::kAllReduce, BoundaryBytes(d)));
  }
}

void MambaMixerBackward(const Dims& d, const std::vector<Op>& fwd, std::vector<Op>* ops) {
  const Dims b16 = Sixteen(d);
  RowParallelBackward(d, FindOp(fwd, "mamba_out_proj_gemm"), "mamba", ops);
  ops->push_back(MemoryBoundBackward(d, FindOp(fwd, "mamba_norm")));
  // The combined function's own rerun of causal_conv1d (always run, so not
  // activation recompute).
  Op conv = FindOp(fwd, "mamba_conv1d");
  conv.name = "mamba_bwd_recompute_conv1d";
  ops->push_back(std::move(conv));
  for (Op& op : SsdScanBackward(ScanShapeOf(d), b16.dtype)) ops->push_back(std::move(op));
  ops->push_back(MemoryBoundBackward(d, FindOp(fwd, "mamba_conv1d")));
  ColumnParallelBackward(d, FindOp(fwd, "mamba_in_proj_gemm"), "mamba", ops);
}

}  // namespace clustersim::models::workload_internal
