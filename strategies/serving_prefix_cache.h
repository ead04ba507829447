// File: strategies/serving_prefix_cache.h
//
// Prefix caching (vLLM --enable-prefix-caching, SGLang's radix cache): the KV
// of a prompt's leading tokens that an earlier request already computed stays
// in the replica's KV pool, so a new request with the same prefix skips their
// prefill compute. The cached tokens still count as attention context and
// still occupy KV blocks (strategies/serving_scheduler.h, cached_tokens).
//
// Two ways to say which tokens are cached:
//
// - A hit rate h: every request has floor(h x prompt) cached tokens.
//   h = 0.5 halves the prefill tokens computed.
//
// - Hash blocks (the Mooncake trace's hash_ids, one per block of
//   `block_tokens` = 512 prompt tokens, where equal ids mean equal content
//   including everything before it): an LRU cache of `capacity_blocks` hash
//   blocks is replayed over the requests in arrival order. A request's cached
//   prefix is its longest run of leading hash ids found in the cache (a block
//   after a miss cannot hit: its hash covers the prefix, as vLLM's block
//   hashes do); then all its ids are touched, the last one first, so that a
//   prompt's tail blocks are evicted before its head (vLLM v1's
//   KVCacheManager frees a request's blocks in reverse order for this
//   reason). The capacity is the replica's KV pool in hash blocks
//   (PrefixCacheCapacity: kv_blocks x kv_block_size / block_tokens without
//   sliding-window layers): cached blocks live in the same pool as the
//   running sequences, and a running sequence's blocks are themselves cached,
//   so the pool bounds what can be reused. A windowed layer keeps of each
//   cached hash block only the window's tail (KvFootprint::PrefixTokenUnits),
//   so a model with such layers caches more hash blocks in the same pool.
//   The lookup happens in arrival order rather than at admission, an
//   approximation that is exact when each request is admitted before the
//   next arrives.
//
// In both, at least one prompt token is computed (cached <= prompt - 1), as
// in vLLM, which recomputes the last token of a fully cached prompt to get
// its logits.
//
// Example:
//   ApplyPrefixHitRate(0.5, &requests);
//   PrefixBlockCache lru(/*capacity_blocks=*/1000);
//   int64_t hits = lru.LookupAndTouch({1, 2, 3});  // 0 at first, 3 the second time
#ifndef CLUSTERSIM_STRATEGIES_SERVING_PREFIX_CACHE_H_
#define CLUSTERSIM_STRATEGIES_SERVING_PREFIX_CACHE_H_

#include <cstdint>
#include <list>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "strategies/serving_scheduler.h"

namespace clustersim::strategies {

// Sets every request's cached_tokens to min(floor(hit_rate x prompt),
// prompt - 1). REQUIRES: 0 <= hit_rate <= 1.
void ApplyPrefixHitRate(double hit_rate, std::vector<ServingRequest>* requests);

// An LRU set of hash blocks. Lookups only: never iterated, so the hash map's
// order cannot reach any output.
class PrefixBlockCache {
 public:
  // REQUIRES: capacity_blocks >= 0 (0: nothing is ever cached).
  explicit PrefixBlockCache(int64_t capacity_blocks) : capacity_(capacity_blocks) {}

  // The number of leading `ids` found in the cache; then every id is touched
  // (inserted when missing, evicting the least recently used), the last first.
  int64_t LookupAndTouch(std::span<const int64_t> ids);

  int64_t size() const { return static_cast<int64_t>(lru_.size()); }

 private:
  void Touch(int64_t id);

  int64_t capacity_;
  std::list<int64_t> lru_;  // front: most recently used
  absl::flat_hash_map<int64_t, std::list<int64_t>::iterator> where_;
};

// The hash blocks of `block_tokens` tokens that `scheduler`'s KV pool
// (kv_blocks whole-model blocks) holds, weighed by its KvFootprint.
// REQUIRES: block_tokens >= 1.
int64_t PrefixCacheCapacity(const SchedulerConfig& scheduler, int64_t block_tokens);

// Replays `hash_ids[i]` (request i's blocks) through an LRU of
// `capacity_blocks` in request order and sets cached_tokens =
// min(hits x block_tokens, prompt - 1). REQUIRES: hash_ids.size() ==
// requests->size(), block_tokens >= 1.
void ApplyPrefixBlockCache(const std::vector<std::vector<int64_t>>& hash_ids, int64_t block_tokens,
                           int64_t capacity_blocks, std::vector<ServingRequest>* requests);

// The hit rate a run achieved: Σ cached_tokens / Σ prompt_tokens over its
// requests (0 without requests).
double PrefixHitRate(const std::vector<RequestRecord>& requests);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SERVING_PREFIX_CACHE_H_
