// File: models/mamba_scan.h
//
// The SSD chunked scan of a Mamba-2 mixer (Dao & Gu 2024, arXiv 2405.21060,
// §6) as mamba_ssm's Triton kernels run it (state-spaces/mamba @ e9594ce1c7,
// mamba_ssm/ops/triton/ssd_combined.py _mamba_chunk_scan_combined_fwd and
// _mamba_chunk_scan_combined_bwd): one op per kernel launch, each with the
// FLOPs of its tl.dot tiles and the bytes of the tensors it reads and writes.
//
// Shapes on one tensor-parallel rank: T tokens in C chunks of Q tokens (C =
// sequences · ceil(s/Q)), H heads of P channels, G groups of B and C with
// state size N. x, B, C, dout and their gradients are 16-bit; dt, the dA
// cumulative sums, the chunk states and C·B^T are fp32 in forward (the
// combined forward asks for fp32 states and an fp32 CB), and state passing
// hands the backward kernels 16-bit states and state gradients.
//
// Forward (5 kernels):
//   mamba_chunk_cumsum      dt → softplus(dt + bias), dA cumsum per chunk;
//   mamba_chunk_state       B^T·X per chunk and head, 2·T·H·P·N FLOPs;
//   mamba_state_passing     the recurrence over chunks on the fp32 states;
//   mamba_bmm_chunk         C·B^T per chunk and group, 2·T·Q·N·G;
//   mamba_chunk_scan        (C·B^T ∘ L)·X (causal) plus C·state, per chunk
//                           and head, 2·T·H·P·(N + Q·f).
// With a gate z (SsdShape::gate_z) chunk_scan also reads z and writes both
// y·silu(z) and the ungated y it saves for backward. Megatron-Core's
// MambaMixer trains through mamba_split_conv1d_scan_combined without an
// rmsnorm_weight (its use_mem_eff_path default, NVIDIA/Megatron-LM
// 7094270c6f and d7288711ba, MambaMixer.forward / _ssm_training), which
// passes z to the scan; vLLM's prefill calls the scan with z = None.
// Backward (_mamba_chunk_scan_combined_bwd): the four forward kernels that
// rebuild dA, CB and the states (cumsum, bmm, chunk state, state passing),
// with a gate chunk_scan_bwd_dz (reads dout, the ungated y, z and x; writes
// dz and the gradient of y), then chunk_scan_bwd_dstates
// (C^T·dout, 2·T·H·P·N), state_passing_bwd, chunk_scan_chunk_state_bwd_dx (dx
// from (CB∘L)^T·dout and B·dstates, and ddt: 2·T·H·P·(N + Q·f)),
// chunk_state_bwd_db (x^T·dstates, 2·T·H·P·N), chunk_scan_bwd_dC (dout·states^T,
// 2·T·H·P·N), chunk_scan_bwd_dcb (dout·x^T, 2·T·H·P·Q·f), two bmm_chunk_bwd
// (dB and dC from dCB, 2·T·Q·N·G each), chunk_scan_bwd_ddAcs_stable
// (dout·x^T again, 2·T·H·P·Q·f), the reverse cumsum of ddA in PyTorch, and
// chunk_cumsum_bwd.
//
// f is the causal fraction of the Q x Q intra-chunk products the kernels
// compute: they skip blocks of kSsdCausalBlock rows above the diagonal, so
// (n + 1) / (2n) of them run, n = ceil(Q / kSsdCausalBlock).
//
// Bytes count each tensor a kernel reads or writes once (the group tensors B,
// C and CB that several heads share are counted once: for the shapes of a
// training micro-batch they stay in L2 between the heads' programs).
//
// Cost (models/kernel_model.h, Op::tile_efficiency): a kernel with tl.dot
// tiles runs at kSsdTileEfficiency of the GPU's dense 16-bit peak or at the
// memory-bound rate, whichever is slower; the others are memory-bound ops.
//
// Example:
//   models::SsdShape s{.tokens = 8192, .chunks = 64, .heads = 32, .groups = 1,
//                      .head_dim = 64, .state = 256, .chunk_len = 128};
//   std::vector<models::Op> fwd = models::SsdScanForward(s, models::Dtype::kBf16);
#ifndef CLUSTERSIM_MODELS_MAMBA_SCAN_H_
#define CLUSTERSIM_MODELS_MAMBA_SCAN_H_

#include <cstdint>
#include <vector>

#include "models/dtype.h"
#include "models/workload.h"

namespace clustersim::models {

// The fraction of the dense 16-bit tensor-core peak the SSD kernels' tl.dot
// tiles reach. Fitted to the forward of the five unfused kernels ("Original")
// measured on one H100 in vllm-project/vllm PR #27299 (comment by cyang49,
// 2025-10-25; microbenchmark of granite-4.0-h-small's mixer: one sequence of
// T tokens, 128 heads of 64, 1 group, state 128, chunk 256): 1.262327e7,
// 1.292440e7 and 1.180002e7 tokens/s at T = 8192, 16384 and 32768.
// models/mamba_scan_test.cc recomputes the fit: it minimises the squared
// relative error of the summed kernel times (shipped H100 calibration) over
// those points, which it then reproduces within +2%, +4% and -6%. The points
// are where the kernels run at a steady rate with one sequence's CB in the
// H100's 50 MB L2, as for a training micro-batch of 8192 tokens; the same
// table's 4096 tokens is reproduced within 1%, its 1024 and 2048 are launch-
// and occupancy-bound (the model is 40-70% fast there) and its 65536 and up
// re-read CB from HBM for every head (12-14% fast). The same fraction is
// used on every GPU: no measurement of these kernels on another GPU is known.
inline constexpr double kSsdTileEfficiency = 0.103;

// The row block below which the causal kernels skip the upper triangle
// (BLOCK_SIZE_M of most of _chunk_scan_fwd_kernel's autotune configs).
inline constexpr int64_t kSsdCausalBlock = 64;

struct SsdShape {
  int64_t tokens = 0;  // T: tokens on the rank (micro-batch · sequence)
  int64_t chunks = 0;  // C: sequences · ceil(sequence / chunk_len)
  int64_t heads = 0, groups = 0, head_dim = 0, state = 0, chunk_len = 0;
  bool gate_z = false;  // the silu(z) gate applied inside chunk_scan (above)
};

// The forward kernels, in launch order. `dtype` is the 16-bit dtype whose
// peak the tile efficiency multiplies.
std::vector<Op> SsdScanForward(const SsdShape& s, Dtype dtype);

// The backward kernels, in launch order, including the forward kernels the
// backward reruns to rebuild dA, CB and the chunk states (named
// mamba_bwd_recompute_*; they are part of the kernel, not activation
// recompute, so they are not marked Op::recompute).
std::vector<Op> SsdScanBackward(const SsdShape& s, Dtype dtype);

// The causal fraction f of the Q x Q intra-chunk products (above).
double SsdCausalFraction(int64_t chunk_len);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_MAMBA_SCAN_H_
