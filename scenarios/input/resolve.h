// File: scenarios/input/resolve.h
//
// Turns a parsed Scenario into the typed inputs of each module, filling every
// default and checking every rule, and echoes the fully resolved scenario
// (every default written out) for the result. Errors are INVALID_ARGUMENT (or
// UNIMPLEMENTED for features a later release simulates) and name the field
// path and a fix, e.g.
//   "cluster.gpu=\"a100\" is not a known GPU; valid: a100-pcie-80gb, ..."
//
// Defaults: cluster.num_gpus = one node; cluster.node from the GPU (an A100
// goes in a DGX A100); parallel sizes 1; micro_batch_size 1; global_batch_size
// = micro_batch_size x data-parallel size; precision bf16; recompute none;
// attention flash (training.attention; carried as model.attention_backend);
// network tier analytic, algorithm auto; price from the GPU's default entry in
// the price catalog (scenarios/input/train_cost.h).
//
// Example:
//   absl::StatusOr<ResolvedScenario> r = Resolve(scenario);
#ifndef CLUSTERSIM_SCENARIOS_INPUT_RESOLVE_H_
#define CLUSTERSIM_SCENARIOS_INPUT_RESOLVE_H_

#include <string>

#include "absl/status/statusor.h"
#include "models/cuda_graph.h"
#include "models/finetune.h"
#include "models/framework_profile.h"
#include "models/gpu_catalog.h"
#include "models/transformer_config.h"
#include "scenarios/input/train_cost.h"
#include "scenarios/proto/scenario.pb.h"
#include "strategies/parallel_config.h"
#include "topology/cluster_spec.h"
#include "topology/collective.h"
#include "topology/link_technology.h"

namespace clustersim::scenarios {

struct ResolvedScenario {
  config::Scenario echo;  // the scenario with every default filled in
  std::string name;
  models::TransformerConfig model;
  const models::GpuSpec* gpu = nullptr;  // points into the GPU catalog
  topology::ClusterSpec cluster;
  int num_gpus = 0;
  double power_cap_w = 0;  // cluster.power_cap_w; 0: the default limit
  const topology::LinkTechnology* host_link = nullptr;  // ResolvedCluster::host_link
  strategies::ParallelConfig parallel;
  topology::Algorithm algorithm = topology::Algorithm::kAuto;
  topology::Protocol protocol = topology::Protocol::kAuto;
  bool flow_network = false;  // network.tier is "flow"
  // The training stack's profile (training.framework); never null once resolved.
  const models::FrameworkProfile* framework = nullptr;
  double host_overhead_us_per_op = 0;
  models::CudaGraphScopes cuda_graphs;  // training.cuda_graph_scope
  double pipeline_p2p_host_us = 0;  // training.pipeline_p2p_host_us
  double framework_attention_factor = 1;  // training.framework_attention_factor
  bool attention_at_sustained_clock = false;  // training.attention_at_sustained_clock
  double framework_gemm_factor = 1;       // training.framework_gemm_factor
  int grad_reduce_bytes = 2;              // training.grad_reduce_bytes (ZeRO-3)
  // Bytes per parameter per micro-batch that accumulate 16-bit gradients into
  // fp32: the profile's bf16_grad_accumulate_bytes on bf16 steps, else 0.
  double grad_accumulate_bytes = 0;
  // FSDP1's FlatParameter gradient passes: the profile's flat_parameter.
  bool flat_parameter = false;
  // FSDP2's per-parameter copy passes: the profile's per_parameter_sharding.
  bool per_parameter_sharding = false;
  // ZeRO-3 runs Megatron-FSDP's schedule: the profile's megatron_fsdp.
  bool megatron_fsdp = false;
  // FP8 steps' amax all-reduce per model chunk: the profile's fp8_amax_reduction.
  bool fp8_amax_reduction = false;
  models::FinetuneSpec finetune;  // full training unless LoRA/QLoRA
  ResolvedPricing pricing;  // $/GPU-hour, its source, the run length (train_cost.h)
};

absl::StatusOr<ResolvedScenario> Resolve(const config::Scenario& scenario);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_INPUT_RESOLVE_H_
