// File: strategies/step_builder.h
//
// Turns a model, a GPU, a cluster's network model and a parallel strategy into
// the task graph of one training step: every micro-batch's forward and backward
// on every simulated GPU, op by op (costed by the kernel model), tensor-parallel
// collectives where Megatron-LM issues them, the data-parallel gradient
// reduction in buckets (overlapped with the backward pass when
// overlap_grad_reduce is set), the distributed-optimizer parameter all-gather,
// and the optimizer step.
//
// Mixture-of-experts (strategies/expert_parallel.h): the token dispatch and
// combine all-to-alls of every MoE layer (models/workload.h), forward and
// backward, run over the layer's expert-parallel group (placement.h) on their
// own lane (kExpertCommLane), in program order as Megatron-core's all-to-all
// dispatcher issues them, so StepStats measures them as exposed EP time. Dense
// gradients are reduced over the data-parallel group; the routed experts'
// gradients in separate buckets over the expert-data-parallel group
// (dp·cp/ep ranks), and with the distributed optimizer their parameters are
// gathered over that group too.
//
// ZeRO-3 / FSDP (also with pipeline parallelism): before each micro-batch's
// forward and backward of a layer (or embedding / head) on a stage, its
// parameters are all-gathered over the data-parallel group, issued when the
// previous layer starts (one layer of prefetch); its gradients are
// reduce-scattered after every micro-batch's backward, as DeepSpeed ZeRO-3
// and FSDP do with gradient accumulation (sharded gradients, no unsharded
// accumulation buffer; models/memory_model.h counts that working set).
// Under zero-bubble schedules the reduce-scatter follows the deferred weight
// gradient, which needs no gather. On a mixture-of-experts model each layer
// has two shards: the dense part (attention, router, norms) gathered and
// reduced over the data x context group, and the rank's experts over the
// expert-data-parallel group (dp·cp/ep ranks; none when that is one rank),
// with the same prefetch; both sit on the data-parallel lane.
//
// Data-parallel folding: when `mode.fold.data_parallel` is set, only
// data-parallel replica 0 is simulated. Every replica runs the same ops on the
// same hardware, so on a symmetric cluster the step time is unchanged; the
// gradient collectives are still costed over the full data-parallel group.
// Tensor-parallel folding does the same for the ranks of a TP group, and
// context-parallel folding for the ranks of a CP ring (when their collectives
// cost the same; see BuildMode, also for the flow tier, where the folded
// ranks' traffic shares links). The tests check folded against unfolded
// runs (strategies/step_builder_test.cc, strategies/context_parallel_test.cc,
// tests/end_to_end_test.cc).
//
// Example:
//   StepInputs in{.model = &cfg, .parallel = &p, .kernels = &km, .network = &net};
//   absl::StatusOr<StepPlan> plan = BuildStep(in);
//
// Lifetime: the inputs need only live during the call.
#ifndef CLUSTERSIM_STRATEGIES_STEP_BUILDER_H_
#define CLUSTERSIM_STRATEGIES_STEP_BUILDER_H_

#include <atomic>
#include <vector>

#include "absl/status/statusor.h"
#include "models/cuda_graph.h"
#include "models/finetune.h"
#include "models/kernel_model.h"
#include "models/transformer_config.h"
#include "strategies/parallel_config.h"
#include "strategies/step_plan.h"
#include "topology/cluster.h"
#include "topology/network_model.h"

namespace clustersim::strategies {

// How a run's collectives are timed (BuildMode::collectives).
enum class CollectiveTiming {
  // A fixed duration per collective, from `StepInputs::network`.
  kAnalytic,
  // Every collective is an external task whose end a run-time network model
  // (the flow tier) decides; `network` still picks the algorithm and labels.
  kExternal,
};

// How BuildStep builds the graph: which ranks it simulates, what it records
// about each task, how it times collectives and whether it merges ops.
// Folding, recording and merging trade detail for speed without moving the
// step time of a symmetric cluster; the collective timing picks the network
// tier.
//
// Folding (`fold`) simulates one representative rank of a group; its
// collectives are still costed over the full group.
//  - data_parallel: data-parallel replica 0 only. Exact on a symmetric
//    cluster: every replica runs the same ops on the same hardware.
//  - tensor_parallel: tensor-parallel rank 0 of each group only. Exact: TP
//    ranks run identical ops.
//  - context_parallel: context-parallel rank 0 of each ring only; its ring
//    sends wait for its own sends where they waited for its ring
//    predecessor's, and the gradient collectives are still costed over the
//    full data x context group. Exact when every cp rank's collectives cost
//    the same: BuildStep checks each collective against its copies on the
//    other cp ranks and builds the unfolded graph when one differs (a ring
//    crossing a node boundary between some neighbours only). Ignored with
//    expert parallelism and with kExternal collectives (the flow tier's
//    contention needs every rank's flows).
// With kExternal collectives the folded-away ranks' traffic still loads the
// links it would cross. Each collective lists its copies on those ranks that
// can share a link with simulated traffic (StepPlan::fold_copies: copies that
// span servers or touch a simulated server), and the flow tier runs them
// beside it. Tensor-parallel ranks meet at every layer's collectives, so the
// copies run in step with the representative and it waits for the slowest.
// Data-parallel replicas meet only at the gradient reduction and drift apart
// between, so copies in step with the representative would overstate their
// contention (+8% at 4,096 GPUs with pipeline sends across leaves): when
// another replica's copy can share a link (pipeline sends between servers,
// groups spanning servers), BuildStep builds the graph without the
// data-parallel fold. Replicas whose traffic, besides the gradient reduction
// over the whole group, stays inside their own servers keep it.
//
// record_task_infos: record what each task means (StepPlan::infos, one
// TaskInfo per tag), as traces, reports, the memory timeline and the flow
// tier read it. Off, no TaskInfo is kept: every task's tag is 0 and infos
// holds one default entry, for a run that reads only the engine's times (the
// search's ranked table); the graph and its times are the same either way.
// kExternal collectives need it: the flow tier finds each task's request
// through its TaskInfo.
//
// merge_compute_chains: merge each run of compute ops of one op list (a
// layer's forward or backward between its collectives) into one task per
// GPU, when nothing else waits for or on the ops inside the run: the run's
// start, end and busy time are those of its ops, so step time, bubble,
// exposed communication and the memory timeline are unchanged, but a trace
// would show one slice named after the run's first op. Under ZeRO-3 a
// layer's first op stays a task of its own (the next layer's prefetch waits
// for it). Ignored with tp_comm_overlap. Without record_task_infos and with
// kAnalytic collectives (the search's runs), two kinds of collectives join
// runs too, as pieces (StepPlan::merged_runs) that StepStats reads as the
// lanes they would have occupied: a tensor-parallel collective whose other
// members are folded away (it starts as the run ends, on a lane nothing else
// uses), and a folded context-parallel ring (every step and exchange time in
// it is known when the graph is built).
struct BuildMode {
  struct Fold {
    bool data_parallel = true;
    bool tensor_parallel = false;
    bool context_parallel = false;
  };

  Fold fold;
  bool record_task_infos = true;
  CollectiveTiming collectives = CollectiveTiming::kAnalytic;
  bool merge_compute_chains = false;
};

struct StepInputs {
  const models::TransformerConfig* model = nullptr;
  const ParallelConfig* parallel = nullptr;  // validated
  const models::KernelModel* kernels = nullptr;
  const topology::NetworkModel* network = nullptr;
  // The cluster the flow tier runs on (kExternal collectives with folding):
  // which copies of a folded collective can share a link with simulated
  // traffic (BuildMode::fold). Null: every copy is taken to.
  const topology::Cluster* cluster = nullptr;
  topology::Algorithm algorithm = topology::Algorithm::kAuto;
  topology::Protocol protocol = topology::Protocol::kAuto;
  BuildMode mode;
  // Host (CPU) time to launch one modelled op from the framework (PyTorch
  // eager + Megatron): the GPU cannot run an op before it is launched, so
  // steps of small ops become launch-bound. Launches run ahead on a host lane,
  // one task per layer and pass. Zero turns the host lane off. Default and
  // source: host_us_per_op of the stack profile (models/data/frameworks.textproto).
  sim::Duration host_overhead_per_op;
  // Megatron-Core's CUDA graphs (training.cuda_graph_scope): the host launches
  // each run of captured ops of a pass as one graph, at one op's host time,
  // and the other ops kernel by kernel. A captured op may not follow a host
  // sync in its pass (error).
  models::CudaGraphScopes cuda_graphs;
  // Host time the pipeline engine blocks for on each stage-to-stage send
  // (training.pipeline_p2p_host_us; DeepSpeed's PipelineEngine): a task on the
  // sender's host lane that the send waits for. Zero: none.
  sim::Duration pipeline_p2p_host;
  // Bytes per gradient element in the ZeRO-3 reduce-scatters: 2 (16-bit) or 4
  // (fp32). Default and source: the stack profile's grad_reduce_bytes.
  int zero3_grad_reduce_bytes = 2;
  // Bytes per local parameter read and written after every micro-batch's
  // backward to accumulate its gradients into whole fp32 buffers
  // (models::ShardSpec::grad_accumulate_bytes), which the data-parallel sync
  // then all-reduces in full even when the optimizer is sharded (DeepSpeed's
  // BF16_Optimizer). Default and source: the stack profile's
  // bf16_grad_accumulate_bytes on bf16 steps; 0: none.
  double grad_accumulate_bytes = 0;
  // The stack shards through FSDP1's FlatParameter: with parameters sharded
  // (zero_stage 2 or 3 over a data x context group of two or more ranks),
  // every micro-batch's backward adds models::FlatParameterGradBytes(
  // zero3_grad_reduce_bytes) of memory traffic per weight. Default and
  // source: the stack profile's flat_parameter.
  bool flat_parameter = false;
  // The stack shards through FSDP2's per-parameter fully_shard: with
  // parameters gathered per micro-batch (zero_stage 3 over a data x context
  // group of two or more ranks), every micro-batch's forward and backward
  // copy the gathered 16-bit parameters out
  // (models::PerParameterGatherCopyBytes(2)) and its backward copies the
  // gradients into the reduce-scatter input
  // (models::PerParameterGradCopyBytes(zero3_grad_reduce_bytes); none for
  // LoRA, whose frozen base has no gradients). Default and source: the stack
  // profile's per_parameter_sharding.
  bool per_parameter_sharding = false;
  // ZeRO-3 runs Megatron-FSDP's schedule (optim_grads_params). It gathers
  // and frees parameters per transformer layer only, its FSDP units: the
  // embedding and output layer (and multi-token prediction, costed with the
  // head) are gathered once, at the first micro-batch's forward, and stay
  // gathered for the rest of the step; their gradients are still
  // reduce-scattered after every backward. In the backward, each piece's
  // pre-backward hook also gathers the next layer of the pass (into the
  // second of its double buffer), so that gather runs under this piece's
  // backward, ahead of its gradient reduce-scatter on the data-parallel lane.
  // Default and source: the stack profile's megatron_fsdp.
  bool megatron_fsdp = false;
  // FP8 steps (ParallelConfig::precision kFp8) run Transformer Engine's delayed
  // scaling inside Megatron-Core: each model chunk's forward of a micro-batch
  // ends (fp8_autocast exit) and its backward ends with a blocking MAX
  // all-reduce of the GPU's amaxes over its pipeline stage's tp x dp x cp ranks
  // (step_builder_fp8.cc). Default and source: the stack profile's
  // fp8_amax_reduction.
  bool fp8_amax_reduction = false;
  // The GPU's link to host memory, per direction (strategies/
  // activation_offload.h): what ParallelConfig::cpu_offload_layers' copies
  // cross. Needed when that is > 0.
  sim::Bandwidth host_link;
  // Megatron-LM's default gradient bucket: max(40M, 1M x dp) parameters.
  double bucket_params = 40e6;
  // LoRA / QLoRA (models/finetune_ops.h): the frozen base runs no weight
  // gradients; only the adapters' 16-bit gradients are reduced over data
  // parallelism and stepped by the optimizer.
  models::FinetuneSpec finetune;
  // Per global GPU, the factor its compute ops take longer than the kernel
  // model says (1 / its relative throughput: 1.25 for a GPU at 80%), from
  // stragglers (scenarios/run/stragglers.h). With tensor-parallel folding the
  // simulated rank runs at its group's slowest member: the group's
  // collectives after every op make all members wait for it. Empty: every
  // GPU at 1. REQUIRES: empty or one entry > 0 per GPU of the world.
  std::vector<double> gpu_time_scale;
  // Set by another thread to stop the build (sim/run_control.h); checked
  // before each pipeline action, so a large unfolded step stops within
  // milliseconds. BuildStep then returns CANCELLED. Null: builds to the end.
  const std::atomic<bool>* cancel = nullptr;
};

absl::StatusOr<StepPlan> BuildStep(const StepInputs& in);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_STEP_BUILDER_H_
