#include "strategies/serving_prefix_cache.h"

#include <algorithm>
#include <cmath>

#include "sim/check.h"

namespace clustersim::strategies {

void ApplyPrefixHitRate(double hit_rate, std::vector<ServingRequest>* requests) {
  for (ServingRequest& r : *requests) {
    const auto cached =
        static_cast<int64_t>(std::floor(hit_rate * static_cast<double>(r.prompt_tokens)));
    r.cached_tokens = std::clamp<int64_t>(cached, 0, r.prompt_tokens - 1);
  }
}

void PrefixBlockCache::Touch(int64_t id) {
  if (auto it = where_.find(id); it != where_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  if (capacity_ == 0) return;
  if (size() == capacity_) {
    where_.erase(lru_.back());
    lru_.pop_back();
  }
  lru_.push_front(id);
  where_[id] = lru_.begin();
}

int64_t PrefixBlockCache::LookupAndTouch(std::span<const int64_t> ids) {
  int64_t hits = 0;
  while (hits < static_cast<int64_t>(ids.size()) && where_.contains(ids[hits])) ++hits;
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) Touch(*it);
  return hits;
}

int64_t PrefixCacheCapacity(const SchedulerConfig& scheduler, int64_t block_tokens) {
  SIM_CHECK(block_tokens >= 1) << "PrefixCacheCapacity: block_tokens " << block_tokens;
  const models::KvFootprint f = scheduler.KvFootprint();
  return scheduler.kv_blocks * scheduler.kv_block_size * f.UnitsPerBlock() /
         f.PrefixTokenUnits(block_tokens);
}

void ApplyPrefixBlockCache(const std::vector<std::vector<int64_t>>& hash_ids, int64_t block_tokens,
                           int64_t capacity_blocks, std::vector<ServingRequest>* requests) {
  SIM_CHECK(hash_ids.size() == requests->size()) << "one hash-id list per request";
  PrefixBlockCache cache(capacity_blocks);
  for (size_t i = 0; i < requests->size(); ++i) {
    ServingRequest& r = (*requests)[i];
    const int64_t hits = cache.LookupAndTouch(hash_ids[i]);
    r.cached_tokens = std::min(hits * block_tokens, r.prompt_tokens - 1);
  }
}

double PrefixHitRate(const std::vector<RequestRecord>& requests) {
  double cached = 0, prompt = 0;
  for (const RequestRecord& r : requests) {
    cached += static_cast<double>(r.cached_tokens);
    prompt += static_cast<double>(r.prompt_tokens);
  }
  return prompt > 0 ? cached / prompt : 0;
}

}  // namespace clustersim::strategies
