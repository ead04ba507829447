#include "strategies/serving_dynamic_batch.h"

#include <array>
#include <utility>

namespace clustersim::strategies {
namespace {

// DynamicBatchConfig::kDefaultBatchSizeTable: {capacity below, batch size}.
constexpr std::array<std::pair<int64_t, int64_t>, 6> kBatchSizeTable{{
    {144, 128},
    {336, 256},
    {672, 512},
    {832, 768},
    {1280, 1024},
    {1664, 1536},
}};
constexpr int64_t kFallbackGranularity = 512;
constexpr int64_t kFallbackThreshold = 128;

}  // namespace

int64_t KvCapacityBatchSize(int64_t kv_blocks, const models::KvFootprint& footprint,
                            int64_t input_length, int64_t output_length) {
  const int64_t units_per_request = footprint.Units(input_length + output_length, 1);
  return kv_blocks * footprint.UnitsPerBlock() / units_per_request;
}

int64_t TunedRuntimeBatchSize(int64_t max_capacity_batch_size) {
  for (const auto& [limit, batch] : kBatchSizeTable) {
    if (max_capacity_batch_size < limit) return batch;
  }
  const int64_t threshold =
      max_capacity_batch_size / kFallbackGranularity * kFallbackGranularity;
  return max_capacity_batch_size < threshold + kFallbackThreshold ? threshold
                                                                  : max_capacity_batch_size;
}

int64_t TunedReplicaBatchSize(int64_t kv_blocks, const models::KvFootprint& footprint,
                              int64_t input_length, int64_t output_length,
                              int attention_dp_ranks) {
  const int64_t per_rank =
      KvCapacityBatchSize(kv_blocks, footprint, input_length, output_length) / attention_dp_ranks;
  return TunedRuntimeBatchSize(per_rank) * attention_dp_ranks;
}

}  // namespace clustersim::strategies
