// File: strategies/step_builder_internal.h
//
// Private to BuildStep (strategies/step_builder.h); include it only from the
// step_builder*.cc files. Declares the builder that emits one training step's
// task graph (its per-GPU state is in step_builder_state.h). Its methods are
// defined by concern:
//   step_builder.cc               GPUs and lanes, chains, op costs, BuildStep
//   step_builder_collectives.cc   collective costs and tasks, the copies the
//                                 folds leave out (StepPlan::fold_copies)
//   step_builder_pipeline.cc      pipeline actions (passes per micro-batch and
//                                 stage), host launches, stage-to-stage sends
//   step_builder_tensor.cc        tensor- and expert-parallel collectives
//   step_builder_context_ring.cc  context-parallel ring attention
//   step_builder_zero.cc          ZeRO-3 per-layer gathers and reduce-scatters,
//                                 distributed-optimizer parameter gathers
//   step_builder_gradients.cc     gradient buckets and their reduction, the
//                                 embedding tie, the optimizer step
//   step_builder_fp8.cc           FP8 weight casts, amax reductions
//   step_builder_merge.cc         merged runs (BuildMode::merge_compute_chains)
//   step_builder_offload.cc       activation offload copies to and from the host
//   step_builder_merged_pair.cc   forward and backward merged layer by layer
//                                 (overlap_moe_expert_parallel_comm)
// Task ids and the engine's tie-breaking follow the order in which tasks are
// added, so outputs depend on that order: Build() fixes it.
#ifndef CLUSTERSIM_STRATEGIES_STEP_BUILDER_INTERNAL_H_
#define CLUSTERSIM_STRATEGIES_STEP_BUILDER_INTERNAL_H_

#include <array>
#include <compare>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/workload.h"
#include "sim/status_macros.h"
#include "strategies/placement.h"
#include "strategies/run_pieces.h"
#include "strategies/step_builder.h"
#include "strategies/step_builder_state.h"
#include "strategies/step_plan.h"

namespace clustersim::strategies::step_builder_internal {

class Builder {
 public:
  Builder(const StepInputs& in, StepPlan* plan)
      : in_(in), p_(*in.parallel), placement_(p_), plan_(*plan) {}

  absl::Status Build();

  // With context-parallel folding: false once a collective of the simulated
  // cp rank costs differently on another cp rank (the fold would not be exact).
  bool context_fold_exact() const { return context_fold_exact_; }
  // With data-parallel folding: false once a collective of another replica
  // costs differently from the simulated replica's (analytic timing,
  // SameOnEveryReplica) or can share a link with simulated traffic (kExternal
  // timing, FoldCopiesOf), so that the step needs every replica.
  bool data_fold_exact() const { return data_fold_exact_; }

 private:
  // How a tensor-parallel collective sits on a GPU's chain (TensorOverlap).
  enum class Overlap { kNone, kUnderNext, kUnderPrevious };

  // Where the ops being added sit: a pipeline action on a stage's GPUs.
  struct Ctx {
    int stage;
    int chunk;
    int microbatch;
    const std::vector<int>* gpus;
    const std::vector<std::vector<int>>* tp_groups;
    Phase phase = Phase::kForward;
  };

  // One op list of a pass (PassUnits): its layer (-1 the embedding,
  // num_layers the head), the parameter bucket its first op waits for
  // (WaitForParameters) and the gradient index it completes (MarkGradDone);
  // -1 for none.
  struct PassUnit {
    std::vector<const models::Op*> ops;
    int layer;
    int wait_params;
    int grad_done;
  };

  // A ZeRO-3 shard of a layer on one GPU (ZeroShards).
  struct ZeroShard {
    bool experts;
    const std::vector<int>* group;  // owned by GpuState
  };

  // A stage-to-stage send, by receiving GPU, its pipeline position, direction
  // and micro-batch.
  struct SendKey {
    int gpu;
    int to_pos;
    bool forward;
    int mb;
    auto operator<=>(const SendKey&) const = default;
  };

  // The first task of an action, which needs what the neighbouring position
  // sends it (`at`).
  struct PendingInput {
    SendKey at;
    sim::TaskId first;
  };

  // step_builder.cc
  int GradientRanks() const { return p_.data_parallel * p_.context_parallel; }
  int Position(int stage, int chunk) const { return chunk * p_.pipeline_parallel + stage; }
  int NumPositions() const { return p_.pipeline_parallel * p_.virtual_pipeline; }
  std::pair<int, int> StageChunkOf(int position) const {
    return {position % p_.pipeline_parallel, position / p_.pipeline_parallel};
  }
  bool Adapters() const { return in_.finetune.method != models::FinetuneMethod::kFull; }
  void AddGpus();
  // `d` on simulated GPU i: scaled by its time_scale (unchanged at 1).
  sim::Duration OnGpu(int i, sim::Duration d) const;
  void SplitBackward();
  const models::Op& AddStepOp(models::Op op);
  void After(sim::TaskId before, sim::TaskId t);
  uint32_t NewInfo(TaskInfo info);
  void Chain(int i, sim::TaskId t);
  const models::OpCost& CostOf(const models::Op& op, int row_chunks = 1);
  void AddCompute(const models::Op& op, const Ctx& ctx, int layer, int row_chunks = 1);
  std::vector<int> SimulatedMembers(const std::vector<int>& group) const;
  const std::vector<int>& DataContextGroupOf(int i);
  const std::vector<int>& ExpertDataGroupOf(int i);
  const std::vector<int>& DataShardGroupOf(int i);
  const std::vector<int>& DataReplicaGroupOf(int i);

  // step_builder_collectives.cc
  absl::StatusOr<topology::CollectiveEstimate> Estimate(const models::Op& op,
                                                        topology::Collective kind,
                                                        const std::vector<int>& gpus);
  // A copy of a group of GPUs on another data-parallel replica (dp_shift > 0)
  // or tensor-parallel rank.
  struct ShiftedCopy {
    std::vector<int> gpus;
    int dp_shift = 0;
  };
  std::vector<int> Shifted(const std::vector<int>& gpus, int d, int t, int c) const;
  std::vector<ShiftedCopy> ShiftedCopies(const std::vector<int>& gpus, int dp_shifts,
                                         int tp_shifts) const;
  absl::StatusOr<topology::CollectiveEstimate> SlowestTensorCopy(
      topology::CollectiveRequest req) const;
  bool SameOnEveryContextRank(topology::CollectiveRequest req, sim::Duration time) const;
  bool SameOnEveryReplica(topology::CollectiveRequest req, sim::Duration time);
  sim::TaskId AddCollectiveTask(const std::vector<sim::ResourceId>& lanes,
                                const topology::CollectiveEstimate& est, TaskInfo info,
                                topology::Collective kind, const std::vector<int>& gpus,
                                sim::Bytes bytes);
  int32_t FoldCopiesOf(const std::vector<int>& gpus);
  bool MayShareLinks(const std::vector<int>& gpus) const;

  // step_builder_pipeline.cc
  absl::Status AddAction(int stage, const PipelineAction& a,
                         const std::vector<std::vector<int>>& tp_groups);
  absl::Status CheckGraphCaptures() const;
  absl::Status FinishAction(int stage, const PipelineAction& a, const Ctx& ctx);
  template <typename OpList>
  absl::Status AddOps(const OpList& ops, const Ctx& ctx, int layer, size_t begin = 0,
                      size_t end = ~size_t{0});
  absl::Status AddLayerBackward(int layer, int in_chunk, const Ctx& ctx);
  void Launch(size_t num_ops, const Ctx& ctx, int layer);
  void LaunchAfterSync(const Ctx& ctx, int layer, bool at_sync, int kernels = 1);
  absl::Status Send(int stage, int to_pos, bool forward, int mb);
  const models::Op& PipelineEngineOp();
  void MarkGradDone(const std::vector<int>& gpus, int index);
  void ResolvePendingInputs();

  // step_builder_merged_pair.cc
  bool MergesPair(const PipelineAction& a, const PipelineAction& b) const;
  std::vector<PassUnit> PassUnits(int stage, const PipelineAction& a) const;
  void SwapChain(int i, ChainState& other);
  absl::Status AddMergedPair(int stage, const PipelineAction& a, const PipelineAction& b,
                             const std::vector<std::vector<int>>& tp_groups);

  // step_builder_tensor.cc
  Overlap TensorOverlap(const models::Op& op, int layer, const models::Op* prev,
                        const models::Op* next) const;
  absl::Status AddTensorCollective(const models::Op& op, const Ctx& ctx, int layer,
                                   Overlap overlap = Overlap::kNone);
  absl::Status AddExpertCollective(const models::Op& op, const Ctx& ctx, int layer);
  std::vector<std::vector<int>> NodeParts(const std::vector<int>& group) const;
  absl::Status AddHierarchicalDispatch(const models::Op& op, const Ctx& ctx, int layer);
  absl::Status AddChainedCollective(const models::Op& op, const Ctx& ctx, int layer,
                                    const std::vector<int>& group,
                                    sim::ResourceId GpuLanes::*lane,
                                    Overlap overlap = Overlap::kNone);

  // step_builder_context_ring.cc
  absl::Status AddRingAttention(const models::Op& whole, const Ctx& ctx, int layer);

  // step_builder_zero.cc
  double LayerParams(int layer, bool experts) const;
  const models::Op& ZeroOp(bool gather, int layer, bool experts);
  const models::Op& ZeroReplicaOp(int layer);
  std::vector<ZeroShard> ZeroShards(int i, int layer);
  absl::Status GatherParameters(const Ctx& ctx, int layer);
  absl::Status ReduceGradients(const Ctx& ctx, int layer);
  absl::StatusOr<sim::TaskId> AddDataCollective(const models::Op& op, int i,
                                                const std::vector<int>& group, const Ctx& ctx,
                                                int layer);
  absl::Status AddParamGather(const char* name, double params, int stage,
                              const std::vector<int>& group, const std::vector<int>& members,
                              const std::vector<sim::TaskId>& after,
                              sim::TaskId* done = nullptr);
  bool KeepsGathered(const Ctx& ctx, int layer) const;
  absl::Status BackwardPrefetch(const Ctx& ctx, int layer);
  absl::Status AddShardGathers(int i, int layer, const Ctx& ctx, sim::TaskId after,
                               std::vector<sim::TaskId>* done);
  absl::Status StartParamGathers();
  void WaitForParameters(const std::vector<int>& gpus, int index);
  absl::Status AddExpertParamGather(bool dist_opt);

  // step_builder_gradients.cc
  std::vector<Bucket> MakeBuckets(int i, bool experts) const;
  models::Op GradOp(const Bucket& b, bool dist_opt);
  absl::StatusOr<sim::TaskId> AddBucketCollective(const models::Op& op, const Bucket& b,
                                                  int bucket_index, int stage,
                                                  const std::vector<int>& group,
                                                  const std::vector<int>& members);
  absl::Status AddEmbeddingTie();
  absl::Status AddExpertGradientSync(bool dist_opt);
  absl::Status AddGradientSyncAndOptimizer();

  // step_builder_fp8.cc
  void AddFp8WeightCast(int gpu, sim::TaskId gathered);
  const models::Op& AmaxReductionOp(int stage, bool forward);
  absl::Status AddAmaxReduction(const Ctx& ctx, bool forward);

  // step_builder_offload.cc
  void AddOffloadLanes(int i, const std::string& name);
  const models::Op& HostCopyOp(bool to_host);
  void OffloadAfterForward(const Ctx& ctx, int layer);
  void ReloadBeforeBackward(const Ctx& ctx, int layer);

  // step_builder_merge.cc
  bool CanExtendRun(int i) const;
  void ExtendRun(int i, Lane lane, sim::Duration d);
  absl::Status MergeRing(const models::Op& diagonal, const models::Op& step,
                         const models::Op& exchange, bool backward, int steps,
                         const std::vector<int>& gpus, const std::vector<int>& next_gpu);

  const StepInputs& in_;
  const ParallelConfig& p_;
  // ZeRO-3 / FSDP with data parallelism: parameters gathered per layer,
  // gradients reduce-scattered per layer and micro-batch.
  const bool zero3_ = p_.zero_stage == 3 && p_.data_parallel * p_.context_parallel > 1;
  // --overlap-param-gather where there is a parameter gather to overlap.
  const bool overlap_param_gather_ = p_.overlap_param_gather && !zero3_ &&
                                     (p_.distributed_optimizer || p_.zero_stage >= 1) &&
                                     p_.data_parallel * p_.context_parallel > 1;
  // --overlap-moe-expert-parallel-comm: steady-state forward / backward
  // pairs merged (AddMergedPair); not with ZeRO-3's per-layer gathers.
  const bool merge_pairs_ = p_.overlap_moe_expert_parallel_comm && !zero3_;
  bool context_fold_exact_ = true;
  bool data_fold_exact_ = true;
  std::vector<bool> simulated_node_;  // per server of StepInputs::cluster
  const bool merge_chains_ = in_.mode.merge_compute_chains && !p_.tp_comm_overlap;
  // Tensor-parallel collectives join runs too when their other members are
  // folded away; the merged task's tag then names its pieces, so only
  // without TaskInfo tags, and not with run-time (external) collectives.
  const bool merge_collectives_ = merge_chains_ && !in_.mode.record_task_infos &&
                                  in_.mode.collectives == CollectiveTiming::kAnalytic;
  std::optional<RunPieces> pieces_;  // of runs with collectives (merge_collectives_)
  Placement placement_;
  StepPlan& plan_;
  std::vector<GpuState> gpu_;  // per local GPU (index into plan_.simulated_gpus)
  std::vector<int> local_of_;  // per global GPU: its local index, or -1
  std::vector<std::vector<int>> stage_gpus_;  // local GPU indices per stage
  // Ops owned by step_ops, added on first use.
  RingOps ring_ops_;
  ZeroShardOps zero_gather_ops_;
  ZeroShardOps zero_reduce_ops_;
  ZeroShardOps zero_replica_ops_;  // hybrid sharding's all-reduce over replicas
  std::map<const models::Op*, DispatchOps> dispatch_ops_;  // by the all-to-all they replace
  std::vector<const models::Op*> fp8_cast_ops_;  // per local layer count
  std::map<std::pair<int, bool>, const models::Op*> amax_ops_;  // by (stage, forward)
  const models::Op* launch_op_ = nullptr;
  // Activation offload: each offloaded layer's window end (OffloadWindowEnds)
  // and the copy ops, owned by step_ops.
  std::vector<int> offload_windows_;
  const models::Op* offload_op_ = nullptr;
  const models::Op* reload_op_ = nullptr;
  const models::Op* pipeline_engine_op_ = nullptr;
  const models::Op* send_activation_ = nullptr;
  const models::Op* send_gradient_ = nullptr;
  // The backward split into input and weight gradients (zero-bubble
  // schedules), for each layer op list (Workload::OpListIndex).
  using OpPointers = std::vector<const models::Op*>;
  std::array<OpPointers, models::Workload::kOpLists> layer_input_grad_, layer_weight_grad_;
  OpPointers head_input_grad_, head_weight_grad_;
  // Block recompute: each layer list's backward without the replayed forward
  // (the ops marked recompute), for the layers it does not replay.
  std::array<OpPointers, models::Workload::kOpLists> layer_kept_backward_;
  std::map<SendKey, sim::TaskId> sends_;
  std::vector<PendingInput> pending_inputs_;
  std::map<std::pair<const models::Op*, int>, models::OpCost> op_costs_;
  std::map<std::tuple<const models::Op*, int, int>, topology::CollectiveEstimate> comm_costs_;
  std::map<std::vector<int>, int32_t> fold_copy_index_;  // group -> StepPlan::fold_copies
  // The collectives whose copies on other replicas SameOnEveryReplica costed:
  // kind, group (first and last GPU), size in bytes.
  std::set<std::tuple<int, int, int, int64_t>> replica_checked_;
  // External (flow) timing: the one task of a data-parallel collective that
  // its group's simulated members share (AddDataCollective), keyed by op,
  // group (its first and last GPU, as comm_costs_), phase, micro-batch and
  // layer, with the members that took it.
  using SharedCollectiveKey = std::tuple<const models::Op*, int, int, int, int, int>;
  std::map<SharedCollectiveKey, std::pair<sim::TaskId, std::vector<int>>> shared_data_collectives_;
  // group -> StepPlan::request_groups
  absl::flat_hash_map<std::vector<int>, int32_t> request_group_index_;
};

}  // namespace clustersim::strategies::step_builder_internal

#endif  // CLUSTERSIM_STRATEGIES_STEP_BUILDER_INTERNAL_H_
