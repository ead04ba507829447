// File: strategies/serving_dynamic_batch.h
//
// TensorRT-LLM's dynamic batch size tuning (executor DynamicBatchConfig with
// enable_batch_size_tuning, which trtllm-bench's throughput command turns on
// for the engines it runs: dynamic_max_batch_size = True in
// tensorrt_llm/bench/dataclasses/configuration.py, ExecutorSettingsConfig).
// Before every iteration the executor (executorImpl.cpp, forwardAsync) asks
// the KV cache how many requests of the moving-average input and output
// length it holds (KVCacheManager::getMaxCapacityBatchSize: primary blocks /
// blocks of one such request) and caps the runtime batch at
// DynamicBatchTuner::getRuntimeBatchSize of that capacity, below the engine's
// max_batch_size:
//
//   capacity <  144: 128      capacity <  832:  768
//   capacity <  336: 256      capacity < 1280: 1024
//   capacity <  672: 512      capacity < 1664: 1536
//   else: the capacity rounded down to a multiple of 512 when it is less than
//         128 above it, else the capacity itself
//
// The numbers: DynamicBatchConfig::kDefaultBatchSizeTable and
// kBatchSizeFallbackGranularity 512 / kBatchSizeFallbackThreshold 128
// (cpp/tensorrt_llm/executor/dynamicBatchTuner.h; NVIDIA/TensorRT-LLM,
// Apache-2.0). A capacity just above a table boundary runs at the boundary
// (300 requests' worth of KV: a batch of 256); below the table's value the KV
// cache binds first. trtllm-bench builds its engines for this: tuning.py's
// calc_engine_setting sets "a slightly optimistic upper bound for max batch
// size" because "in runtime, TRT-LLM relies on its runtime tuning features to
// adjust the runtime max batch size".
//
// Example:
//   int64_t b = TunedReplicaBatchSize(37575, {.block_size = 16}, 1000, 1000, 1);
//   // 300 requests -> 256
#ifndef CLUSTERSIM_STRATEGIES_SERVING_DYNAMIC_BATCH_H_
#define CLUSTERSIM_STRATEGIES_SERVING_DYNAMIC_BATCH_H_

#include <cstdint>

#include "models/kv_footprint.h"

namespace clustersim::strategies {

// Requests of `input_length` + `output_length` tokens whose KV blocks fit in
// `kv_blocks` (each request's blocks rounded up; of sliding-window layers,
// those the window reaches: models/kv_footprint.h).
// REQUIRES: footprint.block_size >= 1, input_length + output_length >= 1.
int64_t KvCapacityBatchSize(int64_t kv_blocks, const models::KvFootprint& footprint,
                            int64_t input_length, int64_t output_length);

// The runtime batch limit the tuner picks for a KV capacity of
// `max_capacity_batch_size` requests (see the table above).
int64_t TunedRuntimeBatchSize(int64_t max_capacity_batch_size);

// A replica's batch limit under tuning: its `kv_blocks` split evenly over
// `attention_dp_ranks` data-parallel attention ranks (1: none), each rank
// tuned for its share, times the ranks.
// REQUIRES: attention_dp_ranks >= 1, as KvCapacityBatchSize.
int64_t TunedReplicaBatchSize(int64_t kv_blocks, const models::KvFootprint& footprint,
                              int64_t input_length, int64_t output_length,
                              int attention_dp_ranks);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SERVING_DYNAMIC_BATCH_H_
