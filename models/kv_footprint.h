// File: models/kv_footprint.h
//
// What a sequence holds in a paged KV cache whose blocks carry `block_size`
// tokens of every attention layer, when some layers attend to a sliding
// window only (TransformerConfig::sliding_window_layers). Full-attention
// layers keep a block for every block_size tokens of the sequence; a windowed
// layer keeps only the blocks that the window of the step's first new token
// and the new tokens themselves reach, and frees the rest once they fall out
// of the window: vLLM's hybrid KV cache manager (SlidingWindowManager,
// vllm/v1/core/single_type_kv_cache_manager.py: remove_skipped_blocks) and
// TensorRT-LLM's variable sliding-window attention (a block pool per window
// size) both do this.
//
// The cache is counted in units: a whole-model block (every layer) is
// full_weight + window_weight units, the two kinds of layers' KV bytes per
// token. Without windowed layers the weights are 1 and 0, so a unit is a
// block and every count equals ceil(tokens / block_size).
//
// Example (gpt-oss-20b: 12 of 24 layers with a 128-token window):
//   KvFootprint f = KvFootprintOf(model, 16, kv_bytes_per_token);
//   f.Units(8192, 1);     // a decode step: 512 blocks' worth of full layers,
//                         // 9 of windowed ones
//   f.Units(8192, 8192);  // the whole prompt computed at once: every block
#ifndef CLUSTERSIM_MODELS_KV_FOOTPRINT_H_
#define CLUSTERSIM_MODELS_KV_FOOTPRINT_H_

#include <cstdint>

#include "models/transformer_config.h"
#include "sim/units.h"

namespace clustersim::models {

struct KvFootprint {
  int block_size = 16;
  int64_t window = 0;  // tokens a windowed layer attends to; 0: none
  int64_t full_weight = 1, window_weight = 0;

  bool windowed() const { return window > 0 && window_weight > 0; }
  int64_t UnitsPerBlock() const { return full_weight + window_weight; }
  // The units a sequence of `tokens` cached tokens holds while the last
  // `new_tokens` of them are computed. REQUIRES: 1 <= new_tokens <= tokens.
  int64_t Units(int64_t tokens, int64_t new_tokens) const;
  // Whole-model blocks that hold `units`, rounded up.
  int64_t Blocks(int64_t units) const;
  // Token-units (tokens x weight, unrounded) that a cached prefix segment of
  // `tokens` tokens keeps so that a later request can hit its end: every token
  // of the full layers and, of the windowed ones, only the ceil((window - 1) /
  // block_size) blocks before that end, as vLLM's SlidingWindowManager.
  // find_longest_cache_hit requires (the blocks before them may be gone).
  // Without windowed layers, tokens x full_weight.
  int64_t PrefixTokenUnits(int64_t tokens) const;
};

// The footprint of `model` whose KV bytes per token (every layer on one GPU,
// a drafter's included) are `kv_bytes_per_token`; the windowed layers' share
// is theirs of the model's attention layers.
KvFootprint KvFootprintOf(const TransformerConfig& model, int block_size,
                          sim::Bytes kv_bytes_per_token, sim::Bytes drafter_bytes_per_token);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_KV_FOOTPRINT_H_
