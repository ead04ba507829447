// Closed forms of sliding-window causal attention (see the header).
#include "models/attention_window.h"

#include <algorithm>
#include <cstdint>

namespace clustersim::models {

double CausalPairs(int64_t s, int64_t w) {
  if (s <= 0) return 0;
  const double sd = static_cast<double>(s);
  if (w <= 0 || w >= s) return sd * (sd + 1) / 2;
  const double wd = static_cast<double>(w);
  // Queries 0 .. w-1 see i + 1 keys, the s - w after them w each.
  return wd * (wd + 1) / 2 + (sd - wd) * wd;
}

double CausalPairsAfter(int64_t c, int64_t n, int64_t w) {
  return CausalPairs(c + n, w) - CausalPairs(c, w);
}

int64_t WindowedKvTokens(int64_t c, int64_t n, int64_t w) {
  if (w <= 0) return c + n;
  return std::min(c + n, w + std::max<int64_t>(n, 1) - 1);
}

double CausalTileFraction(int64_t s, int64_t w, int64_t block) {
  if (s <= 0 || block <= 0) return 1.0;
  const int64_t tiles = (s + block - 1) / block;
  double computed = 0;
  for (int64_t i = 0; i < tiles; ++i) {
    const int64_t first_key = w > 0 ? std::max<int64_t>(0, i * block - w + 1) : 0;
    computed += static_cast<double>(i - first_key / block + 1);
  }
  return computed / (static_cast<double>(tiles) * static_cast<double>(tiles));
}

}  // namespace clustersim::models
