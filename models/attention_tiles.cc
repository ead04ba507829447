// Tile-level cost of fused causal attention (see the header).
#include "models/attention_tiles.h"

#include <algorithm>
#include <cstdint>

#include "models/attention_window.h"

namespace clustersim::models {
namespace {

// A head-dim-d tile's time against head dim 128's, over the FLOP ratio d/128
// the calibrated rate already charges: 1 at 128 and above.
double HeadDimMultiplier(double ratio_at_64, int64_t head_dim) {
  if (head_dim >= 128) return 1.0;
  const double d = static_cast<double>(std::max<int64_t>(head_dim, 64));
  const double ratio = ratio_at_64 + (1.0 - ratio_at_64) * (d - 64.0) / 64.0;
  return ratio * 128.0 / d;
}

}  // namespace

double AttentionWorkFraction(const AttentionTiles& tiles, bool backward, int64_t head_dim,
                             int64_t s, int64_t window, int64_t block, double window_share) {
  const int64_t n = (s + block - 1) / block;
  const double nd = static_cast<double>(n);
  const double dense = (nd + 1) / (2 * nd);
  // Fixed time per query tile over n² tiles, in tiles.
  const double fixed =
      (backward ? tiles.bwd_query_tile_overhead : tiles.fwd_query_tile_overhead) / nd;
  const double tile = HeadDimMultiplier(
      backward ? tiles.bwd_head_dim64_tile : tiles.fwd_head_dim64_tile, head_dim);
  const double query_tile = HeadDimMultiplier(
      backward ? tiles.bwd_head_dim64_query_tile : tiles.fwd_head_dim64_query_tile, head_dim);
  // The calibrated dense rate spreads the fixed part over the dense tiles:
  // one tile of it costs dense / (dense + fixed) of the mean.
  const double unit = dense / (dense + fixed);
  auto layer = [&](double tile_fraction) {
    return unit * (tile * tile_fraction + query_tile * fixed);
  };
  const double full = layer(dense);
  if (window <= 0 || window_share <= 0) return full;
  const double windowed = layer(CausalTileFraction(s, window, block));
  return (1 - window_share) * full + window_share * windowed;
}

}  // namespace clustersim::models
