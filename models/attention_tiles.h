// File: models/attention_tiles.h
//
// How a fused attention kernel's time splits over its tiles. A FlashAttention-
// style kernel (cuDNN, FlashAttention, FlexAttention) gives each block of
// `block` queries to one CTA, which walks the key tiles the mask leaves: its
// time is a fixed part per query tile (loading Q, the softmax's final rescale,
// writing O and the log-sum-exp; in the backward, loading dO and writing dQ)
// plus one part per key tile. A long causal attention amortises the fixed part
// over many key tiles; a sliding window of 128 keys leaves each query tile two
// key tiles, so the fixed part dominates and the kernel runs far below its
// dense rate. Head dimension 64 halves a tile's FLOPs but not its time.
//
// Both are read from cuDNN's own benchmark (NVIDIA/cudnn-frontend
// benchmark/sdpa_benchmark_training/results, models/data/calibration/cudnn/
// SOURCE.md): the dense head-dim-128 kernel timed at two lengths gives the
// fixed part in key tiles (time per query tile = a + b·tiles), and GPT-OSS's
// head-dim-64 kernel at two windows gives that head dimension's a and b.
// A GPU without these figures (AttentionTiles::known() false) keeps the plain
// tile count, each tile at the calibrated dense rate.
//
// Example (a GB200's forward, 4096 tokens, window 128, head dim 64):
//   const models::AttentionTiles& t = gb200.attention_tiles;  // 3.85 tiles, ...
//   models::AttentionWorkFraction(t, false, 64, 4096, 128, 128, 1.0);  // 0.273
//   // against the dense causal kernel's 33/64 at head dim 128 (time ∝
//   // fraction x FLOPs; head dim 64 has half the FLOPs): 0.26x its time per
//   // head, where cuDNN measures 25.6 / 95.5 ns per query tile = 0.27x.
#ifndef CLUSTERSIM_MODELS_ATTENTION_TILES_H_
#define CLUSTERSIM_MODELS_ATTENTION_TILES_H_

#include <cstdint>
#include <string>

namespace clustersim::models {

// One GPU's fused-attention tile costs (catalog field attention_tiles).
struct AttentionTiles {
  // A query tile's fixed time, in key tiles of the dense head-dim-128 kernel.
  double fwd_query_tile_overhead = 0;
  double bwd_query_tile_overhead = 0;
  // At head dimension 64: a key tile's time and a query tile's fixed time,
  // each against head dimension 128's.
  double fwd_head_dim64_tile = 1;
  double fwd_head_dim64_query_tile = 1;
  double bwd_head_dim64_tile = 1;
  double bwd_head_dim64_query_tile = 1;
  std::string source;
  bool known() const { return fwd_query_tile_overhead > 0 && bwd_query_tile_overhead > 0; }
};

// The time of a causal attention over s tokens (queries and keys alike) in
// which `window_share` of the layers attend to a window of `window` keys, in
// units of the dense causal kernel's time per tile at head dimension 128
// scaled to `head_dim` by FLOPs (what the calibrated efficiency costs): the
// plain causal tile fraction (n + 1) / (2n) for a dense head-dim-128 layer.
// Head dimensions between 64 and 128 interpolate the two linearly; below 64
// they take 64's ratios, above 128 their FLOPs.
// REQUIRES: tiles.known(), s > 0, block > 0, 0 <= window_share <= 1.
double AttentionWorkFraction(const AttentionTiles& tiles, bool backward, int64_t head_dim,
                             int64_t s, int64_t window, int64_t block, double window_share);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_ATTENTION_TILES_H_
