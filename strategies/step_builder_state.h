// File: strategies/step_builder_state.h
//
// Private to BuildStep, beside step_builder_internal.h: the state the builder
// keeps per simulated GPU while it emits a training step (its chain of work,
// its lanes, gradient buckets, prefetched layers, offload windows) and the
// per-step ops it owns for ring attention, hierarchical dispatch and ZeRO-3.

#ifndef CLUSTERSIM_STRATEGIES_STEP_BUILDER_STATE_H_
#define CLUSTERSIM_STRATEGIES_STEP_BUILDER_STATE_H_

#include <vector>

#include "models/workload.h"
#include "sim/task_graph.h"
#include "topology/collective.h"

namespace clustersim::strategies::step_builder_internal {

inline constexpr sim::TaskId kNone = ~sim::TaskId{0};
// No layer prefetched (GpuState::prefetched_layer; -1 is the embedding).
inline constexpr int kNoPrefetch = -2;

inline topology::Collective ToCollective(models::CommKind k) {
  switch (k) {
    case models::CommKind::kAllReduce: return topology::Collective::kAllReduce;
    case models::CommKind::kReduceScatter: return topology::Collective::kReduceScatter;
    case models::CommKind::kAllGather: return topology::Collective::kAllGather;
    case models::CommKind::kAllToAll: return topology::Collective::kAllToAll;
    case models::CommKind::kSendRecv: return topology::Collective::kSendRecv;
  }
  return topology::Collective::kAllReduce;
}

// One gradient bucket: parameters of a run of layers, in backward order.
// Gradient indices (GpuState::grad_done): 0 the embedding, l + 1 layer l,
// num_layers + 1 the head.
struct Bucket {
  double params = 0;
  int first_index = 0;  // gradient index of its first piece (backward order)
  int ready_index = 0;  // gradient index whose completion closes the bucket
};

// The graph resources of one GPU's streams; 0 for a lane the step does not use.
struct GpuLanes {
  sim::ResourceId compute = 0;
  sim::ResourceId tensor = 0;
  sim::ResourceId data = 0;
  sim::ResourceId pipeline = 0;
  sim::ResourceId expert = 0;
  sim::ResourceId context = 0;
  sim::ResourceId host = 0;
  // Activation offload's device-to-host and host-to-device copy streams.
  sim::ResourceId d2h = 0;
  sim::ResourceId h2d = 0;
};

// A GPU's chain of work (program order across its lanes). AddMergedPair keeps
// a second one per GPU for the pass it is not adding.
struct ChainState {
  // The last task, the one before it (tp_comm_overlap), and the first task of
  // the current action.
  sim::TaskId last = kNone;
  sim::TaskId before_last = kNone;
  sim::TaskId action_first = kNone;
  // Tasks the next op on the chain must wait for (host launches, ZeRO-3
  // parameter gathers), and overlapped collectives the op after the next one
  // waits for (tp_comm_overlap).
  std::vector<sim::TaskId> waits;
  std::vector<sim::TaskId> under_next;
  // The compute task the next compute op of the same op list may extend
  // (merge_chains_), or kNone once anything else joined the chain.
  sim::TaskId mergeable = kNone;
  // The first task of the current layer; pending until the layer's first op.
  sim::TaskId layer_started = kNone;
  bool pending_layer_start = false;
};

// One simulated GPU (by local index): its chain of work, its lanes and where
// its work stands.
struct GpuState : ChainState {
  GpuLanes lane;
  // Per gradient index (Bucket): the task after which its gradient is final.
  std::vector<sim::TaskId> grad_done;
  // ZeRO-3: the last dense and the last expert gradient reduce-scatter.
  sim::TaskId last_reduce = kNone;
  sim::TaskId last_expert_reduce = kNone;
  // Megatron-FSDP's backward: the gathers of the layer prefetched by the
  // piece before it (Builder::BackwardPrefetch), or kNoPrefetch.
  std::vector<sim::TaskId> prefetched;
  int prefetched_layer = kNoPrefetch;
  // --overlap-param-gather, per gradient index: the dense and the expert
  // parameter gather its first forward waits for (StartParamGathers).
  std::vector<sim::TaskId> dense_param_gather;
  std::vector<sim::TaskId> expert_param_gather;
  // MoE: expert-gradient reductions its optimizer step waits for, and its
  // expert parameters.
  std::vector<sim::TaskId> expert_synced;
  double expert_params = 0;
  sim::TaskId optimizer_step = kNone;
  // Its data x context and expert-data-parallel groups, and under hybrid
  // sharding its shard and replica groups, built on first use.
  std::vector<int> data_context_group;
  std::vector<int> expert_data_group;
  std::vector<int> data_shard_group, data_replica_group;
  // Factor on its compute ops' durations (StepInputs::gpu_time_scale).
  double time_scale = 1.0;
  // Activation offload (step_builder_offload.cc): offloaded layers whose
  // window has closed in this micro-batch (TE's offloaded_group_count), and
  // the last copy on each stream.
  int offloaded = 0;
  sim::TaskId last_d2h = kNone;
  sim::TaskId last_h2d = kNone;
};

// Ops the context-parallel ring runs, owned by step_ops.
struct RingOps {
  const models::Op* forward_diagonal = nullptr;
  const models::Op* forward_step = nullptr;
  const models::Op* backward_diagonal = nullptr;
  const models::Op* backward_step = nullptr;
  const models::Op* forward_exchange = nullptr;
  const models::Op* backward_exchange = nullptr;
  const models::Op* backward_final_exchange = nullptr;
  const models::Op* recompute_diagonal = nullptr;  // the forward, recomputed
  const models::Op* recompute_step = nullptr;
};

// The two parts of a DeepEP / HybridEP dispatch or combine all-to-all
// (AddHierarchicalDispatch), owned by step_ops; null where a part is empty.
struct DispatchOps {
  const models::Op* rail = nullptr;  // over the scale-out network
  const models::Op* node = nullptr;  // over NVLink
};

// ZeRO-3 collectives of one direction (gather or reduce-scatter), one op per
// kind of shard, owned by step_ops.
struct ZeroShardOps {
  const models::Op* embedding = nullptr;
  const models::Op* layer = nullptr;  // a transformer layer's dense part
  const models::Op* head = nullptr;
  const models::Op* experts = nullptr;  // a layer's routed experts
};

}  // namespace clustersim::strategies::step_builder_internal

#endif  // CLUSTERSIM_STRATEGIES_STEP_BUILDER_STATE_H_
