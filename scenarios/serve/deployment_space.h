// File: scenarios/serve/deployment_space.h
//
// The search space of `clustersim serve --search` (inference.deployment_search,
// scenarios/proto/deployment_search.proto) and its shapes: a shape is a
// deployment with its replica (or pool instance) count left open.
//
// Aggregated shapes: every (GPU, tp, pp, ep, weight format, KV-cache format,
// max batch) where tp is at most the GPU's node size (8 for a GPU without a
// server preset) and divides the heads and the ffn size, pp divides the
// layers, tp x pp <= max_gpus, ep is 1 or (an MoE model, tp > 1, tp dividing
// the experts) tp, and fp8 (weights or KV cache) only on a GPU with an fp8
// tensor-core rate. Disaggregated shapes (deployment_search.disaggregated):
// every (GPU, weight format, KV-cache format, prefill tp, decode tp) with the
// same tp rule, pp 1 and the scheduler's max batch; both pools on the GPU.
//
// Resolution checks the space and the scenario it searches: a poisson
// request rate > 0, at least one latency target, GPUs in the catalog with a
// price, sizes and formats known. Errors are INVALID_ARGUMENT naming the
// field (or the CLI flag in brackets) and a fix.
//
// Example:
//   absl::StatusOr<SearchSpace> space = ResolveSearchSpace(scenario);
//   std::vector<Shape> shapes = EnumerateShapes(*space);
#ifndef CLUSTERSIM_SCENARIOS_SERVE_DEPLOYMENT_SPACE_H_
#define CLUSTERSIM_SCENARIOS_SERVE_DEPLOYMENT_SPACE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/gpu_catalog.h"
#include "models/transformer_config.h"
#include "scenarios/proto/scenario.pb.h"

namespace clustersim::scenarios {

struct SearchGpu {
  const models::GpuSpec* spec = nullptr;
  int gpus_per_node = 8;
  double usd_per_gpu_hour = 0;  // the catalog's default price
  std::string price_source;
};

struct SearchSpace {
  config::Scenario base;  // the scenario searched, deployment_search cleared
  models::TransformerConfig model;
  std::vector<SearchGpu> gpus;
  int max_gpus = 16;
  std::vector<int> tensor_parallel, pipeline_parallel, max_batch_sizes;
  std::vector<std::string> weight_dtypes, kv_cache_dtypes;
  bool disaggregated = true;
  int requests_per_replica = 200;
  int top = 15;
  double rate_per_s = 0;
  double target_ttft_ms = 0, target_tpot_ms = 0;  // 0: none (at least one is set)
};

struct Shape {
  int gpu = 0;  // index into SearchSpace::gpus
  bool disaggregated = false;
  int tp = 1, pp = 1, ep = 1;         // aggregated replica
  int prefill_tp = 0, decode_tp = 0;  // disaggregated pools
  std::string weight_dtype, kv_cache_dtype;
  int max_batch_size = 0;  // 0: the scheduler's (disaggregated)
  // GPUs of the smallest deployment of this shape (one replica, or one
  // instance per pool).
  int MinGpus() const { return disaggregated ? prefill_tp + decode_tp : tp * pp; }
};

// REQUIRES: scenario.inference().has_deployment_search().
absl::StatusOr<SearchSpace> ResolveSearchSpace(const config::Scenario& scenario);

// Every shape of the space, in a fixed order (GPU, mode, formats, tp, pp, ep,
// batch). Deterministic.
std::vector<Shape> EnumerateShapes(const SearchSpace& space);

// "h100-sxm5-80gb agg tp 2 pp 1 ep 1 bf16/kv fp8 batch 64" and the like; a
// shape's stable name (tie-breaks and messages).
std::string ShapeName(const SearchSpace& space, const Shape& s);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_SERVE_DEPLOYMENT_SPACE_H_
