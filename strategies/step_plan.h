// File: strategies/step_plan.h
//
// One training step as a task graph ready to simulate, plus what every task
// means (TaskInfo, indexed by the task's tag) so that outputs can describe it.
// Built by BuildStep (step_builder.h); consumed by the engine, StepStats and the
// trace describer.
#ifndef CLUSTERSIM_STRATEGIES_STEP_PLAN_H_
#define CLUSTERSIM_STRATEGIES_STEP_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "models/kernel_model.h"
#include "models/workload.h"
#include "sim/task_graph.h"
#include "strategies/pipeline_schedule.h"
#include "topology/collective.h"

namespace clustersim::strategies {

// Streams of one GPU, as resource lanes.
enum Lane : uint32_t {
  kComputeLane = 0,
  kTensorCommLane = 1,
  kDataCommLane = 2,
  kPipelineCommLane = 3,
  kHostLane = 4,  // the CPU thread that launches the GPU's work
  kExpertCommLane = 5,   // expert-parallel all-to-all (MoE token dispatch and combine)
  kContextCommLane = 6,  // context-parallel ring (K/V exchange)
  kHostCopyLane = 7,     // activation offload's D2H and H2D copy streams
  kNumLanes = 8
};

// kBackwardWeight is the deferred weight-gradient half of a backward under a
// zero-bubble schedule; kBackward is a whole backward or its input half.
enum class Phase : uint8_t { kForward, kBackward, kBackwardWeight, kOptimizer };

// Where a task sits in the step. `layer` is -1 for the embedding, num_layers
// for the output head, and -1 for step-level work (gradient sync, optimizer).
struct TaskInfo {
  const models::Op* op = nullptr;  // owned by StepPlan::workload or StepPlan::step_ops
  Phase phase = Phase::kForward;
  int32_t microbatch = -1;
  int32_t layer = -1;
  int32_t bucket = -1;  // gradient bucket, for data-parallel collectives
  int32_t stage = -1;   // pipeline stage
  int32_t chunk = -1;   // model chunk on the stage (interleaved schedules)
  // Compute tasks: the kernel model's verdict.
  double efficiency = 0;
  models::CostSource source = models::CostSource::kSpecFallback;
  // Collective tasks.
  bool is_collective = false;
  topology::Algorithm algorithm = topology::Algorithm::kAuto;
  double busbw_gbs = 0;
  int group_size = 0;
  int32_t request = -1;  // external collectives: index into StepPlan::requests
};

// An external collective task's request (topology::CollectiveRequest), with
// its GPU list shared: an unfolded step holds millions of these.
struct CollectiveCall {
  topology::Collective op;
  topology::Algorithm algorithm;
  topology::Protocol protocol;
  int32_t group;  // into StepPlan::request_groups
  sim::Bytes bytes;
};

// An activation (forward) or gradient (backward) crossing a stage boundary:
// the send task and the first task of the receiving action, for flow arrows.
struct PipelineTransfer {
  sim::TaskId send;
  sim::TaskId receive;
  int receiver_gpu;
  bool forward;
};

// A merged task that also ran collectives (BuildMode::merge_compute_chains):
// the lanes its ops would have occupied, when (from the task's start) and for
// how long. Pieces of one lane are in time order.
struct RunPiece {
  Lane lane;
  sim::Duration start;
  sim::Duration length;
};
struct MergedRun {
  uint32_t first_piece;  // into StepPlan::run_pieces
  uint32_t num_pieces;
};

struct StepPlan {
  sim::TaskGraph graph;
  std::vector<TaskInfo> infos;     // indexed by task tag
  models::Workload workload;       // ops of one layer/head/embedding
  std::vector<models::Op> step_ops;  // per-step ops: gradient collectives, optimizer
  std::vector<int> simulated_gpus;   // global GPU indices that have resources
  // Each stage's action list, as simulated (strategies/pipeline_schedule.h).
  std::vector<std::vector<PipelineAction>> stage_actions;
  std::vector<PipelineTransfer> transfers;
  int world_size = 0;
  // True when data-parallel replicas were folded into one representative
  // (exact when the cluster is symmetric); their gradient collectives are
  // still costed over the full data-parallel group.
  bool folded_data_parallel = false;
  bool folded_tensor_parallel = false;
  bool folded_context_parallel = false;
  // With CollectiveTiming::kExternal, each collective task is external
  // (a network model decides when it ends) and its request is kept here,
  // its GPUs as an index into `request_groups` (each distinct group once).
  std::vector<CollectiveCall> requests;
  std::vector<std::vector<int>> request_groups;
  // With kExternal collectives and folding: per request, an index into
  // `fold_copies`, or -1. A fold's copies of a request are the same
  // collective on the ranks the fold left out (the request's GPUs with their
  // folded coordinates shifted), which an unfolded run would issue at the
  // same time over their own routes. The flow tier runs them beside the
  // request so that the links they share carry the unfolded load
  // (strategies/flow_executor.h). A group the shift maps onto itself (a
  // collective over the folded dimension) has no copies.
  std::vector<int32_t> request_copies;
  std::vector<std::vector<std::vector<int>>> fold_copies;  // GPU groups, per distinct group
  // Merged runs with collectives inside (search runs, which keep no
  // TaskInfo): such a task's tag is 1 + its index here; every other tag is 0.
  // Tasks with the same pieces share an entry. Empty when
  // BuildMode::record_task_infos is on.
  std::vector<MergedRun> merged_runs;
  std::vector<RunPiece> run_pieces;
};

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_STEP_PLAN_H_
