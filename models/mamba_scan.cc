#include "models/mamba_scan.h"

#include <string>
#include <utility>

namespace clustersim::models {
namespace {

constexpr int64_t kHalf = 2;  // x, B, C, dout and their gradients
constexpr int64_t kFp32 = 4;  // dt, dA cumsum, forward states, CB

// The sizes every kernel's traffic is made of, in elements.
struct Sizes {
  double f;      // causal fraction of the Q x Q products
  int64_t th;    // dt, dA cumsum: T·H
  int64_t thp;   // x, dout, dx: T·H·P
  int64_t tgn;   // B, C: T·G·N
  int64_t chpn;  // chunk states: C·H·P·N
  int64_t cgqq;  // CB: C·G·Q·Q
};

Sizes SizesOf(const SsdShape& s) {
  return Sizes{SsdCausalFraction(s.chunk_len), s.tokens * s.heads,
               s.tokens * s.heads * s.head_dim, s.tokens * s.groups * s.state,
               s.chunks * s.heads * s.head_dim * s.state,
               s.chunks * s.groups * s.chunk_len * s.chunk_len};
}

Op Memory(std::string name, double bytes, Dtype dtype, int kernels = 1) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::kMemoryBound;
  op.bytes = sim::Bytes(static_cast<int64_t>(bytes));
  op.dtype = dtype;
  op.kernels = kernels;
  return op;
}

// A kernel of tl.dot tiles: the tensor-core roofline at kSsdTileEfficiency.
Op Tile(std::string name, double flops, double bytes, Dtype dtype) {
  Op op = Memory(std::move(name), bytes, dtype);
  op.kind = OpKind::kGemm;
  op.flops = sim::Flops(flops);
  op.tile_efficiency = kSsdTileEfficiency;
  return op;
}

// The forward kernels, named with `prefix` (the backward reruns four).
Op ChunkCumsum(const std::string& prefix, const Sizes& z, Dtype dtype) {
  // Reads dt, writes the fp32 dt and dA cumsum.
  return Memory(prefix + "chunk_cumsum", z.th * (kHalf + 2 * kFp32), dtype);
}
Op ChunkState(const std::string& prefix, const SsdShape& s, const Sizes& z, Dtype dtype) {
  return Tile(prefix + "chunk_state", 2.0 * z.thp * s.state,
              (z.thp + z.tgn) * kHalf + z.th * 2 * kFp32 + z.chpn * kFp32, dtype);
}
Op StatePassing(const std::string& prefix, const Sizes& z, Dtype dtype) {
  // Reads and writes the fp32 states.
  return Memory(prefix + "state_passing", z.chpn * 2 * kFp32, dtype);
}
// C·B^T per chunk (and its two gradients): tokens x chunk x state per group.
double BmmChunkFlops(const SsdShape& s) {
  return 2.0 * s.tokens * s.chunk_len * s.state * s.groups;
}
Op BmmChunk(const std::string& prefix, const SsdShape& s, const Sizes& z, Dtype dtype) {
  return Tile(prefix + "bmm_chunk", BmmChunkFlops(s), 2 * z.tgn * kHalf + z.cgqq * kFp32, dtype);
}

}  // namespace

double SsdCausalFraction(int64_t chunk_len) {
  const int64_t n = (chunk_len + kSsdCausalBlock - 1) / kSsdCausalBlock;
  return static_cast<double>(n + 1) / (2.0 * static_cast<double>(n));
}

std::vector<Op> SsdScanForward(const SsdShape& s, Dtype dtype) {
  const Sizes z = SizesOf(s);
  const std::string p = "mamba_";
  std::vector<Op> ops;
  ops.push_back(ChunkCumsum(p, z, dtype));
  ops.push_back(ChunkState(p, s, z, dtype));
  ops.push_back(StatePassing(p, z, dtype));
  ops.push_back(BmmChunk(p, s, z, dtype));
  // Reads the causal part of CB, x, C, the fp32 states, dt and dA; writes y
  // (with a gate also reads z and writes the ungated y).
  const int64_t gate = s.gate_z ? 2 * z.thp : 0;
  ops.push_back(Tile("mamba_chunk_scan",
                     2.0 * z.thp * (s.state + s.chunk_len * z.f),
                     z.cgqq * z.f * kFp32 + (2 * z.thp + z.tgn + gate) * kHalf + z.chpn * kFp32 +
                         z.th * 2 * kFp32,
                     dtype));
  return ops;
}

std::vector<Op> SsdScanBackward(const SsdShape& s, Dtype dtype) {
  const Sizes z = SizesOf(s);
  const std::string r = "mamba_bwd_recompute_";
  const double intra = 2.0 * z.thp * s.chunk_len * z.f;  // dout·x^T or (CB∘L)^T·dout
  const double state = 2.0 * z.thp * s.state;            // a state-sized matmul
  const double cb_causal = z.cgqq * z.f * kFp32;
  std::vector<Op> ops;
  ops.push_back(ChunkCumsum(r, z, dtype));
  ops.push_back(BmmChunk(r, s, z, dtype));
  ops.push_back(ChunkState(r, s, z, dtype));
  ops.push_back(StatePassing(r, z, dtype));
  // The gate's backward: reads dout, the ungated y, z and x (for D); writes dz
  // and the gradient of the ungated y that the kernels below take as dout.
  if (s.gate_z) ops.push_back(Memory("mamba_chunk_scan_bwd_dz", 6 * z.thp * kHalf, dtype));
  // dstates = C^T·dout per chunk: reads C, dout, dA; writes fp32 dstates.
  ops.push_back(Tile("mamba_chunk_scan_bwd_dstates", state,
                     (z.tgn + z.thp) * kHalf + z.th * kFp32 + z.chpn * kFp32, dtype));
  // Reads the fp32 states and dstates; writes both in 16 bits.
  ops.push_back(Memory("mamba_state_passing_bwd", z.chpn * (2 * kFp32 + 2 * kHalf), dtype));
  // dx = (CB∘L)^T·dout + B·dstates, and ddt: reads x, dout, B, CB, dstates,
  // dt and dA; writes dx and ddt.
  ops.push_back(Tile("mamba_chunk_scan_chunk_state_bwd_dx", state + intra,
                     (3 * z.thp + z.tgn + z.chpn) * kHalf + cb_causal + z.th * 3 * kFp32,
                     dtype));
  // dB = x^T·dstates (fp32 partial sums over the group's heads) and ddA.
  ops.push_back(Tile("mamba_chunk_state_bwd_db", state,
                     (z.thp + z.chpn + z.tgn) * kHalf + z.tgn * kFp32 + z.th * 3 * kFp32,
                     dtype));
  // dC = dout·states^T and the ddA of the previous states.
  ops.push_back(Tile("mamba_chunk_scan_bwd_dc", state,
                     (z.thp + z.chpn + z.tgn) * kHalf + z.tgn * kFp32 + z.th * 2 * kFp32,
                     dtype));
  // dCB = dout·x^T per chunk, summed over the group's heads.
  ops.push_back(Tile("mamba_chunk_scan_bwd_dcb", intra,
                     2 * z.thp * kHalf + z.th * 2 * kFp32 + cb_causal, dtype));
  // dB += dCB^T·C and dC += dCB·B: read the operand, dCB and the residual
  // gradient, write the gradient.
  const double bmm_flops = BmmChunkFlops(s);
  const double bmm_bytes = z.cgqq * kFp32 + z.tgn * (2 * kHalf + kFp32);
  ops.push_back(Tile("mamba_bmm_chunk_bwd_db", bmm_flops, bmm_bytes, dtype));
  ops.push_back(Tile("mamba_bmm_chunk_bwd_dc", bmm_flops, bmm_bytes, dtype));
  // ddA from (dout·x^T) ∘ CB: reads x, dout, dt, dA and the causal CB.
  ops.push_back(Tile("mamba_chunk_scan_bwd_ddacs", intra,
                     2 * z.thp * kHalf + z.th * 3 * kFp32 + cb_causal, dtype));
  // PyTorch: ddA_prev = flip(cumsum(flip(ddA_cumsum_prev))) and ddA +=
  // ddA_next + ddA_prev, five eager kernels over fp32 T·H values.
  ops.push_back(Memory("mamba_ddA_reverse_cumsum", z.th * 12 * kFp32, dtype, 5));
  // ddt and dA: reads ddA, ddt and dt, writes ddt.
  ops.push_back(Memory("mamba_chunk_cumsum_bwd", z.th * (2 * kFp32 + 2 * kHalf), dtype));
  return ops;
}

}  // namespace clustersim::models
