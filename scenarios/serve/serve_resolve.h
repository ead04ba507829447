// File: scenarios/serve/serve_resolve.h
//
// Resolves a scenario's `inference` section (scenarios/proto/inference.proto) for
// `clustersim serve`: fills every default, checks every rule and echoes the
// result. Errors are INVALID_ARGUMENT naming the field and a fix (e.g.
// "inference.workload.prompt_length.value=0 must be >= 1").
//
// Defaults (vLLM's, where it has one): tensor/pipeline parallel 1; weight
// dtype bf16; quant_group_size 128; KV cache in the weights' 16-bit type
// (fp16 for fp16 and 4-bit weights, else bf16); max_batch_size 256 (vLLM
// max_num_seqs; at least the fixed batch); max_tokens_per_step 2048 with
// chunked prefill, else max(2048, longest request) (vLLM
// max_num_batched_tokens); kv_block_size 16; memory_utilization 0.9;
// workload "poisson" when a request rate is given, else "fixed-batch" of
// batch_size 1 (the benchmark modes offline, server, concurrency and trace
// are resolved by serve_mode.h); num_requests 200; seed 0; prompt 1024 and output 128 tokens
// (vLLM benchmark_serving.py's --random-input-len / --random-output-len);
// host_overhead_us_per_iteration the fitted default (models/data/fitted_constants.textproto).
// cluster.num_gpus defaults to one replica (tp x pp GPUs); a GPU without a
// server preset (RTX 3090, ...) gets a generic PCIe 4.0 box.
//
// Request rate and num_requests are the deployment's; replicas (num_gpus /
// (tp x pp)) share them evenly. batch_size is per replica.
//
// Example:
//   absl::StatusOr<ResolvedServe> r = ResolveServe(scenario);
#ifndef CLUSTERSIM_SCENARIOS_SERVE_SERVE_RESOLVE_H_
#define CLUSTERSIM_SCENARIOS_SERVE_SERVE_RESOLVE_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "models/dtype.h"
#include "models/gpu_catalog.h"
#include "models/inference_memory.h"
#include "models/kernel_model.h"
#include "models/quantization.h"
#include "models/transformer_config.h"
#include "scenarios/input/train_cost.h"
#include "scenarios/proto/scenario.pb.h"
#include "scenarios/serve/serve_mode.h"
#include "sim/units.h"
#include "strategies/serving_scheduler.h"
#include "strategies/serving_speculative.h"
#include "strategies/serving_workload.h"
#include "topology/cluster_spec.h"

namespace clustersim::scenarios {

struct ResolvedServe {
  config::Scenario echo;  // every default written out
  std::string name;
  const models::GpuSpec* gpu = nullptr;
  topology::ClusterSpec cluster;
  int num_gpus = 0, gpus_per_node = 0;
  int replicas = 1;
  // The replica (model, tp, pp, formats) and its memory inputs: utilisation,
  // block size, batch and token limits, the longest request.
  models::InferenceMemoryInputs memory;
  strategies::SchedulerConfig scheduler;  // kv_blocks filled by the runner
  // inference.dynamic_batch_size_tuning: the runner caps scheduler.max_batch_size
  // at the tuned batch for the KV cache's capacity (strategies/serving_dynamic_batch.h).
  bool dynamic_batch_size_tuning = false;
  strategies::ServingWorkload workload;   // the whole deployment's
  ServeMode mode;  // the workload kind, its benchmark-mode fields, prefix caching
  double target_tpot_ms = 0, target_ttft_ms = 0;   // 0: none
  sim::Duration host_per_iteration;                // the host's time per iteration
  sim::Duration host_per_sequence;                 // and per sequence of an iteration
  bool host_overlapped = false;                    // host work beside the GPUs'
  sim::Duration eager_dispatch_per_kernel;         // per kernel of an eager iteration
  double decode_attention_flops_per_sm_cycle = 0;  // 0: bound off
  bool decode_attention_grouped_gqa = true;
  ResolvedPricing pricing;
  // inference.speculative (scenarios/serve/serve_speculative.h); none: off.
  std::optional<strategies::SpeculativeSpec> speculative;
};

absl::StatusOr<ResolvedServe> ResolveServe(const config::Scenario& scenario);

// Whether tensor parallelism `tp` splits the model evenly: it divides the
// attention heads and the FFN size.
bool TensorParallelSplits(const models::TransformerConfig& m, int tp);

// The kernel-model settings a serving replica on `gpu` is costed with:
// compute-bound GEMMs at the rate the board sustains at its default power
// limit (models::PowerModel::Sustained, as training), not the ceilings' burst.
// Memory-bound GEMMs and kernels keep their HBM rate, so small-batch decode,
// which draws well under the limit, is not slowed; iterations whose GEMMs are
// compute-bound (prefills, decode batches of thousands) hold the board at its
// limit. NVIDIA's MLPerf v4.1 llama2-70b Offline run on 8 H200 shows such a
// serving run power-bound: the same software made 25,262 / 31,303 / 34,864
// tokens/s at 500 / 700 / 1,000 W (tests/validation/serving-deployed/SOURCES.md).
models::KernelModelParams ServingKernelParams(const models::GpuSpec& gpu);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_SERVE_SERVE_RESOLVE_H_
