#include "models/kv_footprint.h"

#include <algorithm>

#include "sim/check.h"

namespace clustersim::models {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t KvFootprint::Units(int64_t tokens, int64_t new_tokens) const {
  const int64_t blocks = CeilDiv(tokens, block_size);
  if (!windowed()) return blocks * full_weight;
  // The first new token reads the window - 1 keys before it; those keys and
  // the new ones span at most this many blocks.
  const int64_t reach = CeilDiv(window - 1 + new_tokens, block_size) + 1;
  return blocks * full_weight + std::min(blocks, reach) * window_weight;
}

int64_t KvFootprint::Blocks(int64_t units) const { return CeilDiv(units, UnitsPerBlock()); }

int64_t KvFootprint::PrefixTokenUnits(int64_t tokens) const {
  if (!windowed()) return tokens * full_weight;
  const int64_t tail = CeilDiv(window - 1, block_size) * block_size;
  return tokens * full_weight + std::min(tokens, tail) * window_weight;
}

KvFootprint KvFootprintOf(const TransformerConfig& model, int block_size,
                          sim::Bytes kv_bytes_per_token, sim::Bytes drafter_bytes_per_token) {
  SIM_CHECK(block_size >= 1) << "KvFootprintOf: block_size " << block_size;
  KvFootprint f;
  f.block_size = block_size;
  const int layers = model.num_attention_layers();
  if (model.sliding_window <= 0 || model.sliding_window_layers <= 0 || layers <= 0) return f;
  const int64_t model_bytes = kv_bytes_per_token.count() - drafter_bytes_per_token.count();
  f.window = model.sliding_window;
  f.window_weight = model_bytes * model.sliding_window_layers / layers;
  f.full_weight = kv_bytes_per_token.count() - f.window_weight;
  if (f.window_weight <= 0 || f.full_weight < 0) return KvFootprint{.block_size = block_size};
  return f;
}

}  // namespace clustersim::models
