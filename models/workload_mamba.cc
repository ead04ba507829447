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
// The SSD scan is the chunked algorithm of Dao & Gu §6 as mamba_ssm's Triton
// kernels run it (ops/triton/ssd_combined.py, _mamba_chunk_scan_combined_fwd),
// per sequence of s tokens in s/Q chunks of Q (mamba_chunk_size) tokens, H
// heads of P channels, G groups and state size N:
//   mamba_chunk_state: each chunk's final state B^T·X, per chunk and head a
//     (N x Q)·(Q x P) matmul: 2·s·N·P·H FLOPs;
//   mamba_state_passing: the recurrence over chunks, elementwise on the
//     fp32 states (H·P·N per chunk, read and written);
//   mamba_bmm_chunk: C·B^T per chunk and group, (Q x N)·(N x Q): 2·s·Q·N·G;
//   mamba_chunk_scan: the output, (C·B^T ∘ L)·X plus C·state per chunk and
//     head, (Q x (Q + N))·((Q + N) x P): 2·s·P·H·(Q + N).
// The matmuls are tensor-core tl.dot tiles; no sourced efficiency of these
// kernels is known, so they are priced as batched BF16 GEMMs of those shapes
// by the kernel model (the path every GEMM takes), and the state passing,
// conv1d and gated norm as memory-bound ops. Backward: each scan matmul's
// two operand gradients (<name>_bwd_a, <name>_bwd_b; the same FLOPs each),
// the memory-bound ops at twice their traffic; the kernels' recomputation of
// chunk states in backward is not counted.
#include <cstdint>
#include <string>
#include <vector>

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

// A scan matmul's backward: the gradients of both operands,
// dA = dY·B^T and dB = A^T·dY.
void ScanGemmBackward(const Dims& d, const Op& fwd, std::vector<Op>* ops) {
  ops->push_back(Gemm(d, fwd.name + "_bwd_a", fwd.m, fwd.k, fwd.n, fwd.batch));
  ops->push_back(Gemm(d, fwd.name + "_bwd_b", fwd.k, fwd.n, fwd.m, fwd.batch));
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
  ops->push_back(Gemm(b16, "mamba_chunk_state", m.state, m.head_dim, m.chunk_len,
                      m.chunks * m.heads));
  ops->push_back(MemoryBound(d, "mamba_state_passing",
                             m.chunks * m.heads * m.head_dim * m.state * 4 * 2));
  ops->push_back(Gemm(b16, "mamba_bmm_chunk", m.chunk_len, m.chunk_len, m.state,
                      m.chunks * m.groups));
  ops->push_back(Gemm(b16, "mamba_chunk_scan", m.chunk_len, m.head_dim, m.chunk_len + m.state,
                      m.chunks * m.heads));
  // Gated RMSNorm, norm(y)·silu(z) per group (norm_before_gate False): read
  // y and z, write the out_proj input.
  ops->push_back(MemoryBound(d, "mamba_gated_norm", d.tokens * m.d_inner * 3 * d.act));
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
  ops->push_back(MemoryBoundBackward(d, FindOp(fwd, "mamba_gated_norm")));
  ScanGemmBackward(b16, FindOp(fwd, "mamba_chunk_scan"), ops);
  ScanGemmBackward(b16, FindOp(fwd, "mamba_bmm_chunk"), ops);
  ops->push_back(MemoryBoundBackward(d, FindOp(fwd, "mamba_state_passing")));
  ScanGemmBackward(b16, FindOp(fwd, "mamba_chunk_state"), ops);
  ops->push_back(MemoryBoundBackward(d, FindOp(fwd, "mamba_conv1d")));
  ColumnParallelBackward(d, FindOp(fwd, "mamba_in_proj_gemm"), "mamba", ops);
}

}  // namespace clustersim::models::workload_internal
