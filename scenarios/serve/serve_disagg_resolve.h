// File: scenarios/serve/serve_disagg_resolve.h
//
// Resolves `inference.disaggregated` (scenarios/proto/inference.proto) for
// `clustersim serve`: two pools, prefill and decode, each of identical
// instances of tp x pp GPUs, optionally of its own GPU type, on one cluster
// whose links join them. Everything else (model, formats, workload, targets,
// host time, price) resolves as for a colocated deployment (serve_resolve.h).
//
// Placement: the prefill pool takes GPUs [0, P) and the decode pool the next
// D GPUs, so instances of a pool sit together and a pool larger than a node
// spans nodes; a decode pool of another GPU type starts on a fresh node (no
// node mixes GPU types). cluster.num_gpus defaults to what the pools need
// and, when given, must hold them.
//
// Defaults per pool: num_instances 1 (or num_gpus / (tp x pp)); tp and pp 1;
// the cluster's GPU; max_batch_size and max_tokens_per_step from inference.*
// (the prefill pool's token budget at least the longest prompt). Sequence
// lengths for memory: the longest prompt (+ 1 token) on the prefill pool, the
// longest prompt + output on the decode pool.
//
// Errors (INVALID_ARGUMENT, exit 2) name the field and a fix: zero or
// negative instances, both or neither of num_instances / num_gpus wrong, tp
// not dividing the heads or the ffn size, pp not dividing the layers, a pool
// whose GPUs cannot hold the model (with the tp that would fit), an unknown
// routing, an attainment outside (0, 1].
//
// Example:
//   absl::StatusOr<ResolvedDisagg> d = ResolveDisagg(scenario);
//   // d->prefill.instances, d->decode.memory.replica.tensor_parallel, ...
#ifndef CLUSTERSIM_SCENARIOS_SERVE_SERVE_DISAGG_RESOLVE_H_
#define CLUSTERSIM_SCENARIOS_SERVE_SERVE_DISAGG_RESOLVE_H_

#include <string>

#include "absl/status/statusor.h"
#include "models/gpu_catalog.h"
#include "models/inference_memory.h"
#include "scenarios/input/train_cost.h"
#include "scenarios/proto/scenario.pb.h"
#include "scenarios/serve/serve_resolve.h"
#include "strategies/serving_disaggregated.h"
#include "strategies/serving_scheduler.h"

namespace clustersim::scenarios {

struct ResolvedPool {
  std::string role;                      // "prefill" | "decode"
  const models::GpuSpec* gpu = nullptr;  // catalog entry
  int instances = 1;
  int first_gpu = 0;                      // global index of instance 0's first GPU
  models::InferenceMemoryInputs memory;   // replica (model, tp, pp, formats) and limits
  strategies::SchedulerConfig scheduler;  // of one instance, kv_blocks included
  ResolvedPricing pricing;
  int GpusPerInstance() const {
    return memory.replica.tensor_parallel * memory.replica.pipeline_parallel;
  }
  int NumGpus() const { return instances * GpusPerInstance(); }
};

struct ResolvedDisagg {
  ResolvedServe base;  // model, formats, workload, targets, cluster (all pools' GPUs)
  ResolvedPool prefill, decode;
  bool layerwise = false;
  strategies::DisaggRouting routing = strategies::DisaggRouting::kLeastLoaded;
  double attainment = 0.9;
  bool search = false;
  int search_total_gpus = 0;
  double search_rate = 0;  // 0: none
  int NumGpus() const { return prefill.NumGpus() + decode.NumGpus(); }
};

// REQUIRES: scenario.inference().has_disaggregated().
absl::StatusOr<ResolvedDisagg> ResolveDisagg(const config::Scenario& scenario);

// The same deployment with other pool shapes (the ratio search): instances
// and tp per pool, pp 1, the cluster re-sized to hold them. Errors as
// ResolveDisagg's.
absl::StatusOr<ResolvedDisagg> ReshapeDisagg(const config::Scenario& scenario,
                                             int prefill_instances, int prefill_tp,
                                             int decode_instances, int decode_tp);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_SERVE_SERVE_DISAGG_RESOLVE_H_
