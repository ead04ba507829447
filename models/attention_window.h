// File: models/attention_window.h
//
// Sliding-window (local) causal attention: query i attends to keys
// max(0, i - w + 1) .. i, at most w of them (HF sliding_window; FlashAttention
// window_size = (w - 1, 0); cuDNN's sliding window; FlexAttention's sliding
// block mask). The score and P·V work is Σ_i min(i + 1, w) query-key pairs;
// FlashAttention-style kernels skip every fully masked tile, so their work
// follows the windowed pairs at tile granularity.
//
// Example:
//   models::CausalPairs(4096, 0);    // 8,390,656 = 4096·4097/2 (full causal)
//   models::CausalPairs(4096, 128);  // 516,160 = 128·129/2 + 3968·128
//   models::CausalPairsAfter(1000, 1, 128);  // 128: one decode step reads 128
//   keys
#ifndef CLUSTERSIM_MODELS_ATTENTION_WINDOW_H_
#define CLUSTERSIM_MODELS_ATTENTION_WINDOW_H_

#include <cstdint>

namespace clustersim::models {

// Σ_{i=0}^{s-1} min(i + 1, w) in closed form: the query-key pairs of a causal
// attention over s tokens with a window of w keys (w <= 0: no window,
// s·(s + 1)/2).
double CausalPairs(int64_t s, int64_t w);

// The pairs of the `n` queries at positions c .. c + n - 1 of a sequence
// whose first c tokens are cached: CausalPairs(c + n, w) - CausalPairs(c, w).
double CausalPairsAfter(int64_t c, int64_t n, int64_t w);

// KV tokens the n queries after c cached ones read: all c + n without a
// window, at most w + n - 1 with one (the window of the first query and the
// n - 1 keys after it).
int64_t WindowedKvTokens(int64_t c, int64_t n, int64_t w);

// Fraction of the s x s score tiles of `block` x `block` that a causal kernel
// computes when it skips every fully masked tile (w <= 0: no window, which is
// (n_blk + 1) / (2·n_blk) for n_blk = ceil(s / block)). Query tile i needs key
// tiles floor(max(0, i·block - w + 1) / block) .. i.
double CausalTileFraction(int64_t s, int64_t w, int64_t block);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_ATTENTION_WINDOW_H_
