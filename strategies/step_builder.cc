#include "strategies/step_builder.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "models/calibration.h"
#include "models/finetune_ops.h"
#include "models/transformer_config.h"
#include "sim/check.h"
#include "strategies/placement.h"
#include "strategies/run_pieces.h"

namespace clustersim::strategies {
namespace {

// Returns the status of `expr` from the enclosing function when it is an error.
#define RETURN_IF_ERROR_(expr)                \
  do {                                        \
    if (absl::Status _s = (expr); !_s.ok()) { \
      return _s;                              \
    }                                         \
  } while (0)


// Bytes per gradient element in the data-parallel reduction: Megatron-LM keeps
// fp32 main gradients for mixed precision and reduces them in fp32
// (accumulate_allreduce_grads_in_fp32; 18 B/param accounting).
constexpr int64_t kGradBytes = 4;
// Parameter all-gather after a distributed-optimizer step moves 16-bit weights.
constexpr int64_t kParamGatherBytes = 2;
// Fused Adam step per local parameter: read fp32 grad, master, m, v (16 B);
// write master, m, v (12 B) and the 16-bit weight (2 B); plus one fp32 read of
// the gradient for the global-norm clip (4 B). Megatron-LM's FusedAdam +
// clip_grad_norm, counted from the tensors it touches.
constexpr int64_t kOptimizerBytesPerParam = 34;
// FP8 weight cast per parameter: read 16-bit (2 B), write FP8 and its
// transpose (1 B each); Transformer Engine's fp8_cast_transpose_fused.
constexpr int64_t kFp8WeightCastBytes = 4;

topology::Collective ToCollective(models::CommKind k) {
  switch (k) {
    case models::CommKind::kAllReduce: return topology::Collective::kAllReduce;
    case models::CommKind::kReduceScatter: return topology::Collective::kReduceScatter;
    case models::CommKind::kAllGather: return topology::Collective::kAllGather;
    case models::CommKind::kAllToAll: return topology::Collective::kAllToAll;
    case models::CommKind::kSendRecv: return topology::Collective::kSendRecv;
  }
  return topology::Collective::kAllReduce;
}

bool IsWeightGradient(const models::Op& op) { return absl::EndsWith(op.name, "_wgrad"); }

// One gradient bucket: parameters of a run of layers, in backward order.
struct Bucket {
  double params = 0;
  int first_index = 0;  // grad_done_ index of its first piece (backward order)
  int ready_index = 0;  // grad_done_ index whose completion closes the bucket
};

class Builder {
 public:
  Builder(const StepInputs& in, StepPlan* plan)
      : in_(in), p_(*in.parallel), placement_(p_), plan_(*plan) {}

  absl::Status Build() {
    const int L = in_.model->num_layers;
    const int pp = p_.pipeline_parallel;
    const int v = p_.virtual_pipeline;
    const int m = p_.num_microbatches();
    plan_.world_size = placement_.world_size();
    plan_.folded_data_parallel = in_.fold_data_parallel && p_.data_parallel > 1;
    plan_.folded_tensor_parallel = in_.fold_tensor_parallel && p_.tensor_parallel > 1;
    plan_.folded_context_parallel = in_.fold_context_parallel && p_.context_parallel > 1 &&
                                    p_.expert_parallel == 1 && !in_.external_collectives;
    for (int g = 0; g < plan_.world_size; ++g) {
      const RankCoords c = placement_.CoordsOf(g);
      if ((!plan_.folded_data_parallel || c.dp == 0) &&
          (!plan_.folded_tensor_parallel || c.tp == 0) &&
          (!plan_.folded_context_parallel || c.cp == 0)) {
        plan_.simulated_gpus.push_back(g);
      }
    }
    const int n = static_cast<int>(plan_.simulated_gpus.size());
    local_of_.assign(plan_.world_size, -1);
    stage_gpus_.assign(pp, {});
    for (int i = 0; i < n; ++i) {
      const int g = plan_.simulated_gpus[i];
      local_of_[g] = i;
      const std::string gpu = absl::StrCat("gpu", g);
      compute_.push_back(plan_.graph.AddResource(gpu + "/compute", g, kComputeLane));
      tp_lane_.push_back(plan_.graph.AddResource(gpu + "/comm:tp", g, kTensorCommLane));
      dp_lane_.push_back(plan_.graph.AddResource(gpu + "/comm:dp", g, kDataCommLane));
      pp_lane_.push_back(pp > 1 ? plan_.graph.AddResource(gpu + "/comm:pp", g, kPipelineCommLane)
                                : 0);
      ep_lane_.push_back(p_.expert_parallel > 1
                             ? plan_.graph.AddResource(gpu + "/comm:ep", g, kExpertCommLane)
                             : 0);
      cp_lane_.push_back(p_.context_parallel > 1
                             ? plan_.graph.AddResource(gpu + "/comm:cp", g, kContextCommLane)
                             : 0);
      host_lane_.push_back(in_.host_overhead_per_op > sim::Duration::Zero() ||
                                   in_.pipeline_p2p_host > sim::Duration::Zero()
                               ? plan_.graph.AddResource(gpu + "/host", g, kHostLane)
                               : 0);
      stage_gpus_[placement_.CoordsOf(g).pp].push_back(i);
    }
    last_.assign(n, kNone);
    mergeable_.assign(n, kNone);
    pieces_.emplace(n);
    action_first_.assign(n, kNone);
    waits_.assign(n, {});
    under_next_.assign(n, {});
    before_last_.assign(n, kNone);
    layer_started_.assign(n, kNone);
    pending_layer_start_.assign(n, false);
    last_reduce_.assign(n, kNone);
    last_expert_reduce_.assign(n, kNone);
    grad_done_.assign(n, std::vector<sim::TaskId>(L + 2, kNone));
    SplitBackward();
    if (overlap_param_gather_) RETURN_IF_ERROR_(StartParamGathers());

    for (int s = 0; s < pp; ++s) {
      std::vector<std::vector<int>> groups;
      for (int i : stage_gpus_[s]) {
        std::vector<int> group = placement_.TensorGroup(plan_.simulated_gpus[i]);
        if (group.front() == plan_.simulated_gpus[i]) groups.push_back(std::move(group));
      }
      plan_.stage_actions.push_back(ScheduleForStage(p_.schedule, s, pp, m, v));
      for (const PipelineAction& a : plan_.stage_actions.back()) {
        if (auto st = AddAction(s, a, groups); !st.ok()) return st;
      }
    }
    ResolvePendingInputs();
    if (auto st = AddEmbeddingTie(); !st.ok()) return st;
    if (auto st = AddGradientSyncAndOptimizer(); !st.ok()) return st;
    pieces_->CloseAll(&plan_);
    return absl::OkStatus();
  }

  // With context-parallel folding: false once a collective of the simulated
  // cp rank costs differently on another cp rank (the fold would not be exact).
  bool context_fold_exact() const { return context_fold_exact_; }

 private:
  static constexpr sim::TaskId kNone = ~sim::TaskId{0};

  // Ranks that reduce (and, with the distributed optimizer, shard) each
  // gradient: data x context parallel.
  int GradientRanks() const { return p_.data_parallel * p_.context_parallel; }

  // Position of a model chunk in the pipeline: chunk c of stage s is model
  // chunk c·p + s; the first holds the embedding, the last the output head.
  int Position(int stage, int chunk) const { return chunk * p_.pipeline_parallel + stage; }
  int NumPositions() const { return p_.pipeline_parallel * p_.virtual_pipeline; }
  std::pair<int, int> StageChunkOf(int position) const {
    return {position % p_.pipeline_parallel, position / p_.pipeline_parallel};
  }

  void SplitBackward() {
    for (const models::Op& op : plan_.workload.layer_backward) {
      (IsWeightGradient(op) ? layer_weight_grad_ : layer_input_grad_).push_back(&op);
    }
    for (const models::Op& op : plan_.workload.head_backward) {
      (IsWeightGradient(op) ? head_weight_grad_ : head_input_grad_).push_back(&op);
    }
  }

  // Keeps a per-step op alive for the plan's lifetime. TaskInfo points into
  // step_ops, so it must never reallocate (BuildStep reserves enough).
  const models::Op& AddStepOp(models::Op op) {
    SIM_CHECK(plan_.step_ops.size() < plan_.step_ops.capacity())
        << "step_ops would reallocate and invalidate TaskInfo pointers";
    plan_.step_ops.push_back(std::move(op));
    return plan_.step_ops.back();
  }

  void After(sim::TaskId before, sim::TaskId t) {
    if (before != kNone) plan_.graph.AddDependency(before, t);
  }

  uint32_t NewInfo(TaskInfo info) {
    if (!in_.task_infos) return 0;  // StepInputs::task_infos: nobody reads them
    plan_.infos.push_back(info);
    return static_cast<uint32_t>(plan_.infos.size() - 1);
  }

  // Emits one pipeline action on every GPU of `stage`.
  absl::Status AddAction(int stage, const PipelineAction& a,
                         const std::vector<std::vector<int>>& tp_groups) {
    const int pos = Position(stage, a.chunk);
    const bool first_pos = pos == 0;
    const bool last_pos = pos == NumPositions() - 1;
    const auto [first_layer, end_layer] = p_.LayersOf(pos, in_.model->num_layers);
    const std::vector<int>& gpus = stage_gpus_[stage];
    for (int i : gpus) action_first_[i] = kNone;
    Ctx ctx{stage, a.chunk, a.microbatch, &gpus, &tp_groups};
    const bool final_mb = a.microbatch == p_.num_microbatches() - 1;
    const models::Workload& w = plan_.workload;
    switch (a.pass) {
      case Pass::kForward: {
        ctx.phase = Phase::kForward;
        // --overlap-param-gather: the first micro-batch's forward of each
        // layer waits for the gather of its parameter bucket.
        const bool gathers = overlap_param_gather_ && a.microbatch == 0;
        const int L = in_.model->num_layers;
        if (first_pos) {
          if (gathers) WaitForParameters(gpus, 0);
          RETURN_IF_ERROR_(AddOps(w.embedding_forward, ctx, -1));
        }
        for (int l = first_layer; l < end_layer; ++l) {
          if (gathers) WaitForParameters(gpus, l + 1);
          RETURN_IF_ERROR_(AddOps(w.layer_forward, ctx, l));
        }
        if (last_pos) {
          if (gathers) WaitForParameters(gpus, L + 1);
          RETURN_IF_ERROR_(AddOps(w.head_forward, ctx, L));
        }
        break;
      }
      case Pass::kBackward:
      case Pass::kBackwardInput: {
        ctx.phase = Phase::kBackward;
        const bool whole = a.pass == Pass::kBackward;
        const int L = in_.model->num_layers;
        if (last_pos) {
          RETURN_IF_ERROR_(whole ? AddOps(w.head_backward, ctx, L) : AddOps(head_input_grad_, ctx, L));
          if (whole && final_mb) MarkGradDone(gpus, L + 1);
          if (zero3_ && whole) RETURN_IF_ERROR_(ReduceGradients(ctx, L));
        }
        for (int l = end_layer - 1; l >= first_layer; --l) {
          RETURN_IF_ERROR_(whole ? AddOps(w.layer_backward, ctx, l)
                                 : AddOps(layer_input_grad_, ctx, l));
          if (whole && final_mb) MarkGradDone(gpus, l + 1);
          if (zero3_ && whole) RETURN_IF_ERROR_(ReduceGradients(ctx, l));
        }
        if (first_pos) {
          RETURN_IF_ERROR_(AddOps(w.embedding_backward, ctx, -1));
          if (final_mb) MarkGradDone(gpus, 0);
          if (zero3_) RETURN_IF_ERROR_(ReduceGradients(ctx, -1));
        }
        break;
      }
      case Pass::kBackwardWeight: {
        ctx.phase = Phase::kBackwardWeight;
        const int L = in_.model->num_layers;
        if (last_pos) {
          RETURN_IF_ERROR_(AddOps(head_weight_grad_, ctx, L));
          if (final_mb) MarkGradDone(gpus, L + 1);
          if (zero3_) RETURN_IF_ERROR_(ReduceGradients(ctx, L));
        }
        for (int l = end_layer - 1; l >= first_layer; --l) {
          RETURN_IF_ERROR_(AddOps(layer_weight_grad_, ctx, l));
          if (final_mb) MarkGradDone(gpus, l + 1);
          if (zero3_) RETURN_IF_ERROR_(ReduceGradients(ctx, l));
        }
        break;
      }
    }
    // The first task of this action on each GPU waits for the activation (or
    // gradient) from the neighbouring stage; the last one sends its own on.
    if (a.pass == Pass::kForward) {
      if (!first_pos) {
        for (int i : gpus) pending_inputs_.push_back({i, action_first_[i], pos, true, a.microbatch});
      }
      if (!last_pos) RETURN_IF_ERROR_(Send(stage, pos + 1, /*forward=*/true, a.microbatch));
    } else if (a.pass != Pass::kBackwardWeight) {
      if (!last_pos) {
        for (int i : gpus) pending_inputs_.push_back({i, action_first_[i], pos, false, a.microbatch});
      }
      if (!first_pos) RETURN_IF_ERROR_(Send(stage, pos - 1, /*forward=*/false, a.microbatch));
    }
    return absl::OkStatus();
  }

  // How a tensor-parallel collective sits on a GPU's chain (TensorOverlap).
  enum class Overlap { kNone, kUnderNext, kUnderPrevious };

  struct Ctx {
    int stage;
    int chunk;
    int microbatch;
    const std::vector<int>* gpus;
    const std::vector<std::vector<int>>* tp_groups;
    Phase phase = Phase::kForward;
  };

  // Appends `t` to GPU i's chain of work (program order across its lanes).
  void Chain(int i, sim::TaskId t) {
    mergeable_[i] = kNone;
    After(last_[i], t);
    before_last_[i] = last_[i];
    last_[i] = t;
    if (action_first_[i] == kNone) action_first_[i] = t;
    for (sim::TaskId w : waits_[i]) After(w, t);
    waits_[i].clear();
    waits_[i].swap(under_next_[i]);
    if (pending_layer_start_[i]) {
      layer_started_[i] = t;
      pending_layer_start_[i] = false;
    }
  }

  // Whether GPU i's next op may join its current merged run: the run is the
  // last task of its chain and the op waits for nothing else.
  bool CanExtendRun(int i) const {
    return mergeable_[i] != kNone && mergeable_[i] == last_[i] && waits_[i].empty();
  }

  // Lengthens GPU i's current run by an op on `lane`. A run that takes in a
  // collective records its pieces (StepPlan::merged_runs), so that StepStats
  // sees the lanes the unmerged ops would have occupied.
  void ExtendRun(int i, Lane lane, sim::Duration d) {
    const sim::TaskId run = mergeable_[i];
    const sim::Duration at = plan_.graph.task(run).duration;
    if (lane != kComputeLane) pieces_->Open(i, run, &plan_);
    plan_.graph.ExtendTask(run, d);
    if (pieces_->IsOpen(i, run)) pieces_->Add(i, lane, at, d);
  }

  // The host launches a layer's ops (one pass, one micro-batch) as one task;
  // the first of those ops on the GPU waits for it.
  void Launch(size_t num_ops, const Ctx& ctx, int layer) {
    if (in_.host_overhead_per_op <= sim::Duration::Zero() || num_ops == 0) return;
    if (launch_op_ == nullptr) {
      models::Op op;
      op.name = "host_launch";
      op.kind = models::OpKind::kMemoryBound;
      launch_op_ = &AddStepOp(std::move(op));
    }
    TaskInfo info{.op = launch_op_, .phase = ctx.phase, .microbatch = ctx.microbatch,
                  .layer = layer, .stage = ctx.stage, .chunk = ctx.chunk};
    const uint32_t tag = NewInfo(info);
    const sim::Duration d = in_.host_overhead_per_op * static_cast<int64_t>(num_ops);
    for (int i : *ctx.gpus) waits_[i].push_back(plan_.graph.AddTask(host_lane_[i], d, tag));
  }

  template <typename OpList>
  absl::Status AddOps(const OpList& ops, const Ctx& ctx, int layer) {
    for (int i : *ctx.gpus) mergeable_[i] = kNone;  // runs stay inside one op list
    Launch(ops.size(), ctx, layer);
    // A deferred weight gradient (zero-bubble W pass) needs activations and
    // output gradients, not the weights: no gather.
    if (zero3_ && ctx.phase != Phase::kBackwardWeight) {
      RETURN_IF_ERROR_(GatherParameters(ctx, layer));
    }
    for (size_t k = 0; k < ops.size(); ++k) {
      const models::Op& op = Deref(ops[k]);
      if (op.kind == models::OpKind::kCollective && op.group == models::CommGroup::kExpert) {
        RETURN_IF_ERROR_(AddExpertCollective(op, ctx, layer));
      } else if (op.kind == models::OpKind::kCollective) {
        const models::Op* prev = k > 0 ? &Deref(ops[k - 1]) : nullptr;
        const models::Op* next = k + 1 < ops.size() ? &Deref(ops[k + 1]) : nullptr;
        const Overlap overlap = TensorOverlap(op, layer, prev, next);
        RETURN_IF_ERROR_(AddTensorCollective(op, ctx, layer, overlap));
        // Transformer Engine's ring-exchange overlap (initialize_ub default
        // for qkv/fc1 fprop and proj/fc2 dgrad: num_splits = tp size) runs
        // the GEMM that consumes the gathered input as tp row chunks, one
        // per rank's slice as it arrives, on kUserbufferComputeStreams.
        if (overlap == Overlap::kUnderNext && op.gathers_next_input) {
          AddCompute(*next, ctx, layer, p_.tensor_parallel);
          ++k;
        }
      } else if (op.kind == models::OpKind::kAttention && plan_.workload.context_ring) {
        RETURN_IF_ERROR_(AddRingAttention(op, ctx, layer));
      } else {
        AddCompute(op, ctx, layer);
      }
    }
    return absl::OkStatus();
  }
  static const models::Op& Deref(const models::Op& op) { return op; }
  static const models::Op& Deref(const models::Op* op) { return *op; }

  // ZeRO-3 shards of `layer` (-1 embedding, L head) on one GPU, in
  // parameters: dense (divided by tp) or, for a mixture-of-experts layer, its
  // routed experts (divided by tp x ep). The head and embedding have no experts.
  double LayerParams(int layer, bool experts) const {
    const models::ParameterCounts pc = models::CountParameters(*in_.model);
    const double tp = p_.tensor_parallel;
    if (layer < 0) return experts ? 0 : pc.embedding / tp;
    if (layer >= in_.model->num_layers) return experts ? 0 : (pc.final_norm + pc.lm_head) / tp;
    return experts ? pc.expert_per_layer / (tp * p_.expert_parallel)
                   : (pc.per_layer - pc.expert_per_layer) / tp;
  }

  const models::Op& ZeroOp(bool gather, int layer, bool experts) {
    const int kind = experts ? 3 : layer < 0 ? 0 : (layer >= in_.model->num_layers ? 2 : 1);
    const models::Op*& slot = zero_ops_[gather ? 0 : 1][kind];
    if (slot == nullptr) {
      models::Op op;
      op.name = absl::StrCat("zero3_", experts ? "expert_" : "",
                             gather ? "param_allgather" : "grad_reduce_scatter");
      op.kind = models::OpKind::kCollective;
      op.group = models::CommGroup::kData;
      op.comm = gather ? models::CommKind::kAllGather : models::CommKind::kReduceScatter;
      // 16-bit parameters gathered; gradients reduced in the parameter dtype
      // (FSDP MixedPrecision / DeepSpeed ZeRO-3 defaults).
      op.comm_bytes = sim::Bytes(static_cast<int64_t>(LayerParams(layer, experts)) * 2);
      slot = &AddStepOp(std::move(op));
    }
    return *slot;
  }

  // The ZeRO-3 shards of `layer`: its dense parameters over the data x context
  // group and, on an MoE layer, its experts over the expert-data-parallel
  // group (placement.h); a group of one rank holds its shard whole.
  struct ZeroShard {
    bool experts;
    const std::vector<int>* group;  // owned by the per-GPU group caches below
  };
  std::vector<ZeroShard> ZeroShards(int i, int layer) {
    std::vector<ZeroShard> out = {{false, &DataContextGroupOf(i)}};
    if (in_.model->num_experts > 0 && layer >= 0 && layer < in_.model->num_layers) {
      out.push_back({true, &ExpertDataGroupOf(i)});
    }
    std::erase_if(out, [](const ZeroShard& z) { return z.group->size() == 1; });
    return out;
  }

  // ZeRO-3 / FSDP: before a layer's forward or backward, all-gather its
  // parameters (ZeroShards). The gathers for a layer are issued when the
  // previous layer starts (one layer of prefetch, as FSDP's
  // limit_all_gathers), and the layer's first op waits for them.
  absl::Status GatherParameters(const Ctx& ctx, int layer) {
    for (int i : *ctx.gpus) {
      for (const ZeroShard& z : ZeroShards(i, layer)) {
        absl::StatusOr<sim::TaskId> t =
            AddDataCollective(ZeroOp(true, layer, z.experts), i, *z.group, ctx, layer);
        if (!t.ok()) return t.status();
        After(layer_started_[i], *t);
        waits_[i].push_back(*t);
      }
      layer_started_[i] = kNone;  // set by the layer's first op below
      pending_layer_start_[i] = true;
    }
    return absl::OkStatus();
  }

  // After a layer's backward: reduce-scatter its gradients over the same
  // groups (not blocking compute).
  absl::Status ReduceGradients(const Ctx& ctx, int layer) {
    for (int i : *ctx.gpus) {
      for (const ZeroShard& z : ZeroShards(i, layer)) {
        absl::StatusOr<sim::TaskId> t =
            AddDataCollective(ZeroOp(false, layer, z.experts), i, *z.group, ctx, layer);
        if (!t.ok()) return t.status();
        After(last_[i], *t);
        (z.experts ? last_expert_reduce_ : last_reduce_)[i] = *t;
      }
    }
    return absl::OkStatus();
  }

  // A collective of simulated GPU i over its `group` (unfolded, every member
  // adds its own) on its data-parallel lane.
  absl::StatusOr<sim::TaskId> AddDataCollective(const models::Op& op, int i,
                                                const std::vector<int>& group, const Ctx& ctx,
                                                int layer) {
    absl::StatusOr<topology::CollectiveEstimate> est = Estimate(op, ToCollective(op.comm), group);
    if (!est.ok()) return est.status();
    TaskInfo info{.op = &op, .phase = ctx.phase, .microbatch = ctx.microbatch, .layer = layer,
                  .stage = ctx.stage, .is_collective = true, .algorithm = est->algorithm,
                  .busbw_gbs = est->busbw_gbs, .group_size = static_cast<int>(group.size())};
    return AddCollectiveTask({dp_lane_[i]}, *est, info, ToCollective(op.comm), group,
                             op.comm_bytes);
  }

  // The data x context group of simulated GPU i, built once per GPU (ZeRO-3
  // asks for it per layer and micro-batch).
  const std::vector<int>& DataContextGroupOf(int i) {
    if (data_context_groups_.empty()) data_context_groups_.resize(compute_.size());
    std::vector<int>& g = data_context_groups_[i];
    if (g.empty()) g = placement_.DataContextGroup(plan_.simulated_gpus[i]);
    return g;
  }

  // The expert-data-parallel group of simulated GPU i, built once per GPU.
  const std::vector<int>& ExpertDataGroupOf(int i) {
    if (expert_data_groups_.empty()) expert_data_groups_.resize(compute_.size());
    std::vector<int>& g = expert_data_groups_[i];
    if (g.empty()) g = placement_.ExpertDataGroup(plan_.simulated_gpus[i]);
    return g;
  }

  // Compute streams Transformer Engine's userbuffers overlap issues the chunk
  // GEMMs on, in turn (NVTE_COMM_OVERLAP_MAX_STREAMS = 3 in
  // transformer_engine/common/comm_gemm_overlap; split_overlap_ag puts chunk
  // i on stream i % 3).
  static constexpr int kUserbufferComputeStreams = 3;

  // `row_chunks` > 1: a GEMM run as that many row chunks (RowSplitCost).
  const models::OpCost& CostOf(const models::Op& op, int row_chunks = 1) {
    const auto key = std::make_pair(&op, row_chunks);
    auto it = op_costs_.find(key);
    if (it != op_costs_.end()) return it->second;
    return op_costs_
        .emplace(key, row_chunks > 1
                          ? in_.kernels->RowSplitCost(op, row_chunks, kUserbufferComputeStreams)
                          : in_.kernels->Cost(op))
        .first->second;
  }

  void AddCompute(const models::Op& op, const Ctx& ctx, int layer, int row_chunks = 1) {
    const models::OpCost& cost = CostOf(op, row_chunks);
    TaskInfo info{.op = &op, .phase = ctx.phase, .microbatch = ctx.microbatch, .layer = layer,
                  .stage = ctx.stage, .chunk = ctx.chunk, .efficiency = cost.efficiency,
                  .source = cost.source};
    const uint32_t tag = NewInfo(info);
    for (int i : *ctx.gpus) {
      if (CanExtendRun(i)) {
        // It would start as the run's last op ends: the run just grows.
        ExtendRun(i, kComputeLane, cost.time);
        continue;
      }
      const sim::TaskId t = plan_.graph.AddTask(compute_[i], cost.time, tag);
      const bool starts_layer = pending_layer_start_[i];
      Chain(i, t);
      // ZeRO-3 prefetches the next layer's parameters once this layer's
      // first op has ended: that op stays a task of its own.
      if (merge_chains_ && !starts_layer) mergeable_[i] = t;
    }
  }

  // Costs a collective over `gpus`, once per (op, group): every micro-batch
  // and layer repeats the same few collectives.
  absl::StatusOr<topology::CollectiveEstimate> Estimate(const models::Op& op,
                                                        topology::Collective kind,
                                                        const std::vector<int>& gpus) {
    const auto key = std::make_tuple(&op, gpus.front(), gpus.back());
    auto it = comm_costs_.find(key);
    if (it != comm_costs_.end()) return it->second;
    topology::CollectiveRequest req{kind, gpus, op.comm_bytes, in_.algorithm, in_.protocol};
    absl::StatusOr<topology::CollectiveEstimate> e = in_.network->Estimate(req);
    if (e.ok()) comm_costs_.emplace(key, *e);
    if (e.ok() && plan_.folded_context_parallel && context_fold_exact_) {
      context_fold_exact_ = SameOnEveryContextRank(req, e->time);
    }
    return e;
  }

  // Whether each copy of `req` on the other context-parallel ranks (its GPUs'
  // cp coordinates shifted by 1..cp-1) takes `time` too. A group that the
  // shift maps onto itself (the data x context group) is one shared task.
  bool SameOnEveryContextRank(topology::CollectiveRequest req, sim::Duration time) const {
    std::vector<int> original = req.gpus;
    std::sort(original.begin(), original.end());
    const std::vector<int> gpus = req.gpus;
    for (int k = 1; k < p_.context_parallel; ++k) {
      for (size_t j = 0; j < gpus.size(); ++j) {
        RankCoords c = placement_.CoordsOf(gpus[j]);
        c.cp = (c.cp + k) % p_.context_parallel;
        req.gpus[j] = placement_.GpuOf(c);
      }
      std::vector<int> shifted = req.gpus;
      std::sort(shifted.begin(), shifted.end());
      if (shifted == original) continue;
      absl::StatusOr<topology::CollectiveEstimate> e = in_.network->Estimate(req);
      if (!e.ok() || e->time != time) return false;
    }
    return true;
  }

  // Adds a collective task over `lanes`: fixed-duration from the estimate, or
  // external (StepInputs::external_collectives) with its request recorded.
  sim::TaskId AddCollectiveTask(const std::vector<sim::ResourceId>& lanes,
                                const topology::CollectiveEstimate& est, TaskInfo info,
                                topology::Collective kind, const std::vector<int>& gpus,
                                sim::Bytes bytes) {
    if (!in_.external_collectives) {
      return plan_.graph.AddTask(lanes, est.time, NewInfo(info));
    }
    info.request = static_cast<int32_t>(plan_.requests.size());
    plan_.requests.push_back({kind, gpus, bytes, est.algorithm, est.protocol});
    return plan_.graph.AddExternalTask(lanes, NewInfo(info));
  }

  // Which GEMM a tensor-parallel collective of a transformer layer runs under
  // with parallelism.tp_comm_overlap (strategies/parallel_config.h): an
  // all-gather under the GEMM after it; a reduce-scatter under the GEMM after
  // it (backward: dgrad's reduce-scatter under wgrad) or else the one before
  // it (forward: out_proj, fc2). Dense GEMMs only: the MoE token dispatch is
  // not a userbuffers overlap.
  Overlap TensorOverlap(const models::Op& op, int layer, const models::Op* prev,
                        const models::Op* next) const {
    if (!p_.tp_comm_overlap || layer < 0 || layer >= in_.model->num_layers) return Overlap::kNone;
    auto dense_gemm = [](const models::Op* o) {
      return o != nullptr && o->kind == models::OpKind::kGemm && !o->name.starts_with("expert_");
    };
    if (op.comm != models::CommKind::kAllGather && op.comm != models::CommKind::kReduceScatter) {
      return Overlap::kNone;
    }
    if (dense_gemm(next)) return Overlap::kUnderNext;
    if (op.comm == models::CommKind::kReduceScatter && dense_gemm(prev)) {
      return Overlap::kUnderPrevious;
    }
    return Overlap::kNone;
  }

  absl::Status AddTensorCollective(const models::Op& op, const Ctx& ctx, int layer,
                                   Overlap overlap = Overlap::kNone) {
    if (op.group != models::CommGroup::kTensor) {
      return absl::UnimplementedError(
          absl::StrCat("collective op ", op.name, " over a non-tensor group is not supported yet"));
    }
    for (const std::vector<int>& group : *ctx.tp_groups) {
      RETURN_IF_ERROR_(AddChainedCollective(op, ctx, layer, group, tp_lane_, overlap));
    }
    return absl::OkStatus();
  }

  // MoE token dispatch / combine: one all-to-all per expert-parallel group
  // (strategies/placement.h), on the expert lane, in program order like
  // Megatron-core's all-to-all token dispatcher (no overlap with compute).
  // The first simulated member of each group creates its task.
  absl::Status AddExpertCollective(const models::Op& op, const Ctx& ctx, int layer) {
    for (int i : *ctx.gpus) {
      const std::vector<int> group = placement_.ExpertGroup(plan_.simulated_gpus[i]);
      if (SimulatedMembers(group).front() != i) continue;
      RETURN_IF_ERROR_(AddChainedCollective(op, ctx, layer, group, ep_lane_));
    }
    return absl::OkStatus();
  }

  // Context parallelism: `whole` (attention_fwd or attention_bwd, possibly a
  // recomputed forward) as Transformer Engine's ring (models/workload.h): on
  // every rank, cp attention steps on the compute lane; while step j runs, the
  // rank sends the K/V chunk it holds (backward: K/V and the dK/dV it has
  // accumulated) to the next ring rank on its CP lane. Step j + 1 waits for
  // its own send and for the receive from the previous rank (TE waits on both
  // requests). Backward ends with a last dK/dV send to the chunk's owner,
  // which the owner's next op waits for. Exposed when a send outlasts a step.
  absl::Status AddRingAttention(const models::Op& whole, const Ctx& ctx, int layer) {
    const models::ContextRing& ring = *plan_.workload.context_ring;
    if (ring_ops_[0] == nullptr) {
      // Copied into step_ops: TaskInfo must not point into the workload's
      // inline optional, which moves with the plan.
      models::Op ops[kRingOps] = {ring.forward_diagonal, ring.forward_step,
                                  ring.backward_diagonal, ring.backward_step,
                                  ring.forward_exchange, ring.backward_exchange,
                                  ring.backward_final_exchange, ring.forward_diagonal,
                                  ring.forward_step};
      ops[7].recompute = ops[8].recompute = true;  // selective / full recompute re-runs the ring
      for (int k = 0; k < kRingOps; ++k) ring_ops_[k] = &AddStepOp(std::move(ops[k]));
    }
    const bool backward = models::IsAttentionBackward(whole);
    const int first = whole.recompute ? 7 : (backward ? 2 : 0);
    const models::Op* diagonal = ring_ops_[first];
    const models::Op* step = ring_ops_[first + 1];
    const models::Op* exchange = ring_ops_[backward ? 5 : 4];
    const std::vector<int>& gpus = *ctx.gpus;
    std::vector<int> prev(gpus.size()), next_gpu(gpus.size());
    for (size_t x = 0; x < gpus.size(); ++x) {
      const std::vector<int> group = placement_.ContextGroup(plan_.simulated_gpus[gpus[x]]);
      const int n = static_cast<int>(group.size());
      const int pos = placement_.CoordsOf(plan_.simulated_gpus[gpus[x]]).cp;
      // Folded: the ring predecessor runs the same tasks at the same times as
      // this rank (exact under context_fold_exact), so it stands in for it.
      prev[x] = plan_.folded_context_parallel ? gpus[x] : local_of_[group[(pos + n - 1) % n]];
      next_gpu[x] = group[(pos + 1) % n];
      SIM_CHECK(prev[x] >= 0) << "context-parallel ring predecessor not simulated";
    }
    if (merge_collectives_ && plan_.folded_context_parallel &&
        std::all_of(gpus.begin(), gpus.end(), [&](int i) { return CanExtendRun(i); })) {
      return MergeRing(*diagonal, *step, *exchange, backward, ring.steps, gpus, next_gpu);
    }
    std::vector<sim::TaskId> sent(compute_.size(), kNone);  // per local GPU: last send
    auto send = [&](const models::Op& op, size_t x) -> absl::StatusOr<sim::TaskId> {
      const int from = plan_.simulated_gpus[gpus[x]];
      const std::vector<int> pair = {from, next_gpu[x]};
      absl::StatusOr<topology::CollectiveEstimate> est =
          Estimate(op, topology::Collective::kSendRecv, pair);
      if (!est.ok()) return est.status();
      TaskInfo info{.op = &op, .phase = ctx.phase, .microbatch = ctx.microbatch, .layer = layer,
                    .stage = ctx.stage, .chunk = ctx.chunk, .is_collective = true,
                    .algorithm = est->algorithm, .busbw_gbs = est->busbw_gbs, .group_size = 2};
      return AddCollectiveTask({cp_lane_[gpus[x]]}, *est, info, topology::Collective::kSendRecv,
                               pair, op.comm_bytes);
    };
    for (int j = 0; j < ring.steps; ++j) {
      const models::Op& op = j == 0 ? *diagonal : *step;
      const models::OpCost& cost = CostOf(op);
      TaskInfo info{.op = &op, .phase = ctx.phase, .microbatch = ctx.microbatch, .layer = layer,
                    .stage = ctx.stage, .chunk = ctx.chunk, .efficiency = cost.efficiency,
                    .source = cost.source};
      const uint32_t tag = NewInfo(info);
      std::vector<sim::TaskId> sends(gpus.size(), kNone);
      for (size_t x = 0; x < gpus.size(); ++x) {
        const int i = gpus[x];
        const sim::TaskId before = last_[i];
        const sim::TaskId t = plan_.graph.AddTask(compute_[i], cost.time, tag);
        After(sent[i], t);
        if (prev[x] != i) After(sent[prev[x]], t);
        Chain(i, t);
        if (j + 1 < ring.steps) {
          absl::StatusOr<sim::TaskId> s = send(*exchange, x);
          if (!s.ok()) return s.status();
          After(j == 0 ? before : sent[i], *s);
          if (prev[x] != i) After(sent[prev[x]], *s);
          sends[x] = *s;
        }
      }
      for (size_t x = 0; x < gpus.size(); ++x) sent[gpus[x]] = sends[x];
    }
    if (backward && ring.steps > 1) {
      std::vector<sim::TaskId> finals(compute_.size(), kNone);  // per local GPU
      for (size_t x = 0; x < gpus.size(); ++x) {
        absl::StatusOr<sim::TaskId> s = send(*ring_ops_[6], x);
        if (!s.ok()) return s.status();
        Chain(gpus[x], *s);
        finals[gpus[x]] = *s;
      }
      for (size_t x = 0; x < gpus.size(); ++x) {
        if (finals[prev[x]] != kNone) waits_[gpus[x]].push_back(finals[prev[x]]);
      }
    }
    return absl::OkStatus();
  }

  // One collective over `group` on lane `lane_of[j]` of each simulated member
  // j, in each member's program order.
  absl::Status AddChainedCollective(const models::Op& op, const Ctx& ctx, int layer,
                                    const std::vector<int>& group,
                                    const std::vector<sim::ResourceId>& lane_of,
                                    Overlap overlap = Overlap::kNone) {
    absl::StatusOr<topology::CollectiveEstimate> est = Estimate(op, ToCollective(op.comm), group);
    if (!est.ok()) return est.status();
    const std::vector<int> members = SimulatedMembers(group);
    if (merge_collectives_ && &lane_of == &tp_lane_ && overlap == Overlap::kNone &&
        members.size() == 1 && CanExtendRun(members[0])) {
      // The GPU's only tensor-parallel member here (the others are folded):
      // the collective would start as the run ends, on a lane nothing else
      // uses, and the next op would start as it ends.
      ExtendRun(members[0], kTensorCommLane, est->time);
      return absl::OkStatus();
    }
    std::vector<sim::ResourceId> lanes;
    for (int j : members) lanes.push_back(lane_of[j]);
    TaskInfo info{.op = &op, .phase = ctx.phase, .microbatch = ctx.microbatch,
                  .layer = layer, .stage = ctx.stage, .chunk = ctx.chunk,
                  .is_collective = true, .algorithm = est->algorithm,
                  .busbw_gbs = est->busbw_gbs, .group_size = static_cast<int>(group.size())};
    const sim::TaskId t =
        AddCollectiveTask(lanes, *est, info, ToCollective(op.comm), group, op.comm_bytes);
    for (int j : members) {
      switch (overlap) {
        case Overlap::kNone: Chain(j, t); break;
        case Overlap::kUnderNext:  // starts with the next op; the op after that waits
          After(last_[j], t);
          under_next_[j].push_back(t);
          break;
        case Overlap::kUnderPrevious:  // started with the last op; the next op waits
          After(before_last_[j], t);
          waits_[j].push_back(t);
          break;
      }
    }
    return absl::OkStatus();
  }

  // Local indices of the simulated GPUs of `group`, in group order.
  std::vector<int> SimulatedMembers(const std::vector<int>& group) const {
    std::vector<int> members;
    for (int g : group) {
      if (local_of_[g] >= 0) members.push_back(local_of_[g]);
    }
    return members;
  }

  // Activations (forward) or their gradients (backward) crossing a stage
  // boundary: b·s·h 16-bit values, sharded over tp when sequence parallel
  // (Megatron sends each rank's sequence shard). One send per GPU to its peer
  // (same tp/cp/dp coordinates) on the neighbouring stage; Megatron's 1F1B
  // waits for its p2p ops, so the sender's next compute waits too.
  absl::Status Send(int stage, int to_pos, bool forward, int mb) {
    const int to_stage = StageChunkOf(to_pos).first;
    int64_t bytes = int64_t{p_.micro_batch_size} * in_.model->seq_length /
                    p_.context_parallel * in_.model->hidden_size *
                    models::BytesPerElement(p_.precision);
    if (p_.sequence_parallel) bytes /= p_.tensor_parallel;
    const models::Op*& slot = forward ? send_activation_ : send_gradient_;
    if (slot == nullptr) {
      models::Op op;
      op.name = forward ? "pp_send_activation" : "pp_send_gradient";
      op.kind = models::OpKind::kCollective;
      op.group = models::CommGroup::kPipeline;
      op.comm = models::CommKind::kSendRecv;
      op.comm_bytes = sim::Bytes(bytes);
      slot = &AddStepOp(std::move(op));
    }
    const models::Op& op = *slot;
    for (int i : stage_gpus_[stage]) {
      RankCoords c = placement_.CoordsOf(plan_.simulated_gpus[i]);
      const int from_gpu = plan_.simulated_gpus[i];
      c.pp = to_stage;
      const int to_gpu = placement_.GpuOf(c);
      absl::StatusOr<topology::CollectiveEstimate> est =
          Estimate(op, topology::Collective::kSendRecv, {from_gpu, to_gpu});
      if (!est.ok()) return est.status();
      TaskInfo info{.op = &op, .phase = forward ? Phase::kForward : Phase::kBackward,
                    .microbatch = mb, .stage = stage, .is_collective = true,
                    .algorithm = est->algorithm, .busbw_gbs = est->busbw_gbs, .group_size = 2};
      if (in_.pipeline_p2p_host > sim::Duration::Zero()) {
        TaskInfo engine{.op = &PipelineEngineOp(), .phase = info.phase, .microbatch = mb,
                        .stage = stage};
        Chain(i, plan_.graph.AddTask(host_lane_[i], in_.pipeline_p2p_host, NewInfo(engine)));
      }
      const sim::TaskId t = AddCollectiveTask({pp_lane_[i]}, *est, info,
                                              topology::Collective::kSendRecv,
                                              {from_gpu, to_gpu}, op.comm_bytes);
      Chain(i, t);
      sends_[{local_of_[to_gpu], to_pos, forward, mb}] = t;
    }
    return absl::OkStatus();
  }

  // A folded ring (each rank's sends stand in for its predecessor's) on GPUs
  // whose runs can grow: every time in it is known now, so it joins the runs
  // as the tasks AddRingAttention would add run. Step j starts when step j-1
  // and exchange j-1 have ended; exchanges run back to back on the context
  // lane (no other work uses it) from the ring's start; a backward ring ends
  // with its final exchange.
  absl::Status MergeRing(const models::Op& diagonal, const models::Op& step,
                         const models::Op& exchange, bool backward, int steps,
                         const std::vector<int>& gpus, const std::vector<int>& next_gpu) {
    for (size_t x = 0; x < gpus.size(); ++x) {
      const int i = gpus[x];
      const std::vector<int> pair = {plan_.simulated_gpus[i], next_gpu[x]};
      sim::Duration send, final_send;
      if (steps > 1) {
        absl::StatusOr<topology::CollectiveEstimate> e =
            Estimate(exchange, topology::Collective::kSendRecv, pair);
        if (!e.ok()) return e.status();
        send = e->time;
      }
      if (backward && steps > 1) {
        absl::StatusOr<topology::CollectiveEstimate> e =
            Estimate(*ring_ops_[6], topology::Collective::kSendRecv, pair);
        if (!e.ok()) return e.status();
        final_send = e->time;
      }
      const sim::TaskId run = mergeable_[i];
      const sim::Duration base = plan_.graph.task(run).duration;
      pieces_->Open(i, run, &plan_);
      sim::Duration t = base;
      for (int j = 0; j < steps; ++j) {
        const sim::Duration start = j == 0 ? base : sim::Max(t, base + send * j);
        const sim::Duration compute = CostOf(j == 0 ? diagonal : step).time;
        pieces_->Add(i, kComputeLane, start, compute);
        if (j + 1 < steps) pieces_->Add(i, kContextCommLane, base + send * j, send);
        t = start + compute;
      }
      if (backward && steps > 1) {
        pieces_->Add(i, kContextCommLane, t, final_send);
        t += final_send;
      }
      plan_.graph.ExtendTask(run, t - base);
    }
    return absl::OkStatus();
  }

  // The host work of one blocking pipeline send instruction
  // (StepInputs::pipeline_p2p_host), owned by step_ops.
  const models::Op& PipelineEngineOp() {
    if (pipeline_engine_op_ == nullptr) {
      models::Op op;
      op.name = "pp_engine_p2p";
      op.kind = models::OpKind::kMemoryBound;
      pipeline_engine_op_ = &AddStepOp(std::move(op));
    }
    return *pipeline_engine_op_;
  }

  void MarkGradDone(const std::vector<int>& gpus, int index) {
    for (int i : gpus) grad_done_[i][index] = last_[i];
  }

  // Tied input/output embeddings on different stages: Megatron all-reduces
  // their gradients between the first and last stage before the optimizer.
  absl::Status AddEmbeddingTie() {
    if (p_.pipeline_parallel == 1 || !in_.model->tied_embeddings) return absl::OkStatus();
    models::Op op;
    op.name = "pp_embedding_grad_allreduce";
    op.kind = models::OpKind::kCollective;
    op.group = models::CommGroup::kPipeline;
    op.comm = models::CommKind::kAllReduce;
    op.comm_bytes = sim::Bytes(static_cast<int64_t>(
        static_cast<double>(in_.model->vocab_size) * in_.model->hidden_size /
        p_.tensor_parallel * kGradBytes));
    const models::Op& tie = AddStepOp(std::move(op));
    const int last = p_.pipeline_parallel - 1;
    for (int i : stage_gpus_[0]) {
      RankCoords c = placement_.CoordsOf(plan_.simulated_gpus[i]);
      c.pp = last;
      const int j = local_of_[placement_.GpuOf(c)];
      std::vector<int> group = {plan_.simulated_gpus[i], plan_.simulated_gpus[j]};
      absl::StatusOr<topology::CollectiveEstimate> est =
          Estimate(tie, topology::Collective::kAllReduce, group);
      if (!est.ok()) return est.status();
      TaskInfo info{.op = &tie, .phase = Phase::kOptimizer, .is_collective = true,
                    .algorithm = est->algorithm, .busbw_gbs = est->busbw_gbs, .group_size = 2};
      const sim::TaskId t = AddCollectiveTask({pp_lane_[i], pp_lane_[j]}, *est, info,
                                              topology::Collective::kAllReduce, group,
                                              tie.comm_bytes);
      Chain(i, t);
      Chain(j, t);
    }
    return absl::OkStatus();
  }

  void ResolvePendingInputs() {
    for (const PendingInput& p : pending_inputs_) {
      auto it = sends_.find({p.gpu, p.to_pos, p.forward, p.mb});
      SIM_CHECK(it != sends_.end()) << "no send for pipeline position " << p.to_pos << " mb "
                                    << p.mb;
      After(it->second, p.first);
      plan_.transfers.push_back({it->second, p.first, plan_.simulated_gpus[p.gpu], p.forward});
    }
  }

  // Gradient buckets of GPU i in backward order, each closed once it holds
  // `bucket_params` parameters (Megatron: max(40M, 1M x dp)). MoE: the routed
  // experts' parameters (÷ tp·ep) go to separate buckets (`experts`), reduced
  // over the expert-data-parallel group, as Megatron-core's expert buffers.
  std::vector<Bucket> MakeBuckets(int i, bool experts) const {
    const models::ParameterCounts pc = models::CountParameters(*in_.model);
    const double tp = p_.tensor_parallel;
    const int L = in_.model->num_layers;
    const double limit = std::max(in_.bucket_params, 1e6 * GradientRanks());
    const RankCoords c = placement_.CoordsOf(plan_.simulated_gpus[i]);
    std::vector<std::pair<double, int>> pieces;  // (params on this GPU, grad_done index)
    if (c.pp == p_.pipeline_parallel - 1 && !experts && !Adapters()) {
      pieces.emplace_back((pc.final_norm + (pc.lm_head > 0 || p_.pipeline_parallel == 1
                                                ? pc.lm_head
                                                : pc.embedding)) / tp,
                          L + 1);
    }
    std::vector<int> layers;
    for (int chunk = 0; chunk < p_.virtual_pipeline; ++chunk) {
      const int pos = Position(c.pp, chunk);
      const auto [begin, end] = p_.LayersOf(pos, L);
      for (int l = begin; l < end; ++l) {
        layers.push_back(l);
      }
    }
    std::sort(layers.rbegin(), layers.rend());
    double per_layer = experts ? pc.expert_per_layer / (tp * p_.expert_parallel)
                               : (pc.per_layer - pc.expert_per_layer) / tp;
    // LoRA: only the adapters train (all in the dense buckets).
    if (Adapters()) {
      per_layer = experts ? 0
                          : models::LoraParametersPerLayer(*in_.model, in_.finetune,
                                                           p_.tensor_parallel, p_.expert_parallel);
    }
    for (int l : layers) pieces.emplace_back(per_layer, l + 1);
    if (c.pp == 0 && !experts && !Adapters()) pieces.emplace_back(pc.embedding / tp, 0);
    std::vector<Bucket> buckets;
    Bucket cur;
    for (const auto& [params, index] : pieces) {
      if (cur.params == 0) cur.first_index = index;
      cur.params += params;
      cur.ready_index = index;
      if (cur.params >= limit) {
        buckets.push_back(cur);
        cur = Bucket{};
      }
    }
    if (cur.params > 0) buckets.push_back(cur);
    return buckets;
  }

  models::Op GradOp(const Bucket& b, bool dist_opt) {
    models::Op op;
    op.name = dist_opt ? "dp_grad_reduce_scatter" : "dp_grad_allreduce";
    op.kind = models::OpKind::kCollective;
    op.group = models::CommGroup::kData;
    op.comm = dist_opt ? models::CommKind::kReduceScatter : models::CommKind::kAllReduce;
    op.comm_bytes = sim::Bytes(static_cast<int64_t>(
        b.params * (Adapters() ? models::kAdapterGradientBytes : kGradBytes)));
    return op;
  }

  bool Adapters() const { return in_.finetune.method != models::FinetuneMethod::kFull; }

  // One gradient bucket's reduction over `group` on the data lanes of the
  // simulated `members`, after their backward (or, overlapped, after the
  // bucket's last gradient).
  absl::StatusOr<sim::TaskId> AddBucketCollective(const models::Op& op, const Bucket& b,
                                                  int bucket_index, int stage,
                                                  const std::vector<int>& group,
                                                  const std::vector<int>& members) {
    absl::StatusOr<topology::CollectiveEstimate> est = Estimate(op, ToCollective(op.comm), group);
    if (!est.ok()) return est.status();
    std::vector<sim::ResourceId> lanes;
    for (int j : members) lanes.push_back(dp_lane_[j]);
    TaskInfo info{.op = &op, .phase = Phase::kOptimizer, .bucket = bucket_index, .stage = stage,
                  .is_collective = true, .algorithm = est->algorithm,
                  .busbw_gbs = est->busbw_gbs, .group_size = static_cast<int>(group.size())};
    const sim::TaskId t =
        AddCollectiveTask(lanes, *est, info, ToCollective(op.comm), group, op.comm_bytes);
    for (int j : members) After(p_.overlap_grad_reduce ? grad_done_[j][b.ready_index] : last_[j], t);
    return t;
  }

  // Distributed optimizer: all-gather the updated 16-bit parameters (`params`
  // on each rank) over `group` once every member's optimizer step `after` ran.
  absl::Status AddParamGather(const char* name, double params, int stage,
                              const std::vector<int>& group, const std::vector<int>& members,
                              const std::vector<sim::TaskId>& after,
                              sim::TaskId* done = nullptr) {
    models::Op gather;
    gather.name = name;
    gather.kind = models::OpKind::kCollective;
    gather.group = models::CommGroup::kData;
    gather.comm = models::CommKind::kAllGather;
    gather.comm_bytes = sim::Bytes(static_cast<int64_t>(params) * kParamGatherBytes);
    const models::Op& op = AddStepOp(std::move(gather));
    absl::StatusOr<topology::CollectiveEstimate> est =
        Estimate(op, topology::Collective::kAllGather, group);
    if (!est.ok()) return est.status();
    std::vector<sim::ResourceId> lanes;
    for (int j : members) lanes.push_back(dp_lane_[j]);
    TaskInfo info{.op = &op, .phase = Phase::kOptimizer, .stage = stage, .is_collective = true,
                  .algorithm = est->algorithm, .busbw_gbs = est->busbw_gbs,
                  .group_size = static_cast<int>(group.size())};
    const sim::TaskId t = AddCollectiveTask(lanes, *est, info, topology::Collective::kAllGather,
                                            group, op.comm_bytes);
    for (sim::TaskId o : after) After(o, t);
    if (done != nullptr) *done = t;
    return absl::OkStatus();
  }

  // --overlap-param-gather (ParallelConfig::overlap_param_gather): the
  // parameter all-gathers that follow the previous step's optimizer update,
  // at the start of this step (in the periodic steady state the two are the
  // same instant), one per gradient bucket in forward order, back to back on
  // the data-parallel lane as Megatron-Core issues them (each bucket's
  // forward pre-hook waits for its gather and dispatches the next; the host
  // runs ahead of the GPU). Dense buckets over the data x context group, then
  // (MoE) expert buckets over the expert-data-parallel group. Fills
  // param_gather_of_, which WaitForParameters reads.
  absl::Status StartParamGathers() {
    const int n = static_cast<int>(compute_.size());
    param_gather_of_.assign(2, std::vector<std::vector<sim::TaskId>>(
                                   n, std::vector<sim::TaskId>(in_.model->num_layers + 2, kNone)));
    for (const bool experts : {false, true}) {
      if (experts && in_.model->num_experts == 0) continue;
      for (int i = 0; i < n; ++i) {
        const std::vector<int>& group = experts ? ExpertDataGroupOf(i) : DataContextGroupOf(i);
        const std::vector<int> members = SimulatedMembers(group);
        if (group.size() == 1 || members.front() != i) continue;
        std::vector<Bucket> buckets = MakeBuckets(i, experts);
        std::reverse(buckets.begin(), buckets.end());  // forward order
        const int stage = placement_.CoordsOf(plan_.simulated_gpus[i]).pp;
        sim::TaskId previous = kNone;
        for (const Bucket& b : buckets) {
          RETURN_IF_ERROR_(AddParamGather(
              experts ? "expert_dp_param_allgather" : "dp_param_allgather", b.params, stage,
              group, members, {previous}, &previous));
          for (int j : members) {
            for (int index = b.ready_index; index <= b.first_index; ++index) {
              param_gather_of_[experts][j][index] = previous;
            }
          }
        }
      }
    }
    return absl::OkStatus();
  }

  // The next op of each of `gpus` waits for the gathers (dense and expert) of
  // the parameter bucket holding grad_done_ index `index`.
  void WaitForParameters(const std::vector<int>& gpus, int index) {
    for (const std::vector<std::vector<sim::TaskId>>& of : param_gather_of_) {
      for (int i : gpus) {
        if (of[i][index] != kNone) waits_[i].push_back(of[i][index]);
      }
    }
  }

  // MoE: the routed experts' gradients, reduced in their own buckets over the
  // expert-data-parallel group (dp·cp/ep ranks; placement.h). Fills
  // expert_synced_ (what each GPU's optimizer step waits for) and
  // expert_params_ (expert parameters on each GPU). In unfolded runs the
  // member with expert-data rank 0 creates its group's collectives.
  absl::Status AddExpertGradientSync(bool dist_opt) {
    const int n = static_cast<int>(compute_.size());
    expert_synced_.assign(n, {});
    expert_params_.assign(n, 0.0);
    if (in_.model->num_experts == 0) return absl::OkStatus();
    for (int i = 0; i < n; ++i) {
      const int gpu = plan_.simulated_gpus[i];
      const std::vector<int>& group = ExpertDataGroupOf(i);
      const std::vector<int> members = SimulatedMembers(group);
      if (members.front() != i) continue;
      const std::vector<Bucket> buckets = MakeBuckets(i, /*experts=*/true);
      for (int j : members) {
        for (const Bucket& b : buckets) expert_params_[j] += b.params;
        // ZeRO-3 reduced them layer by layer (ReduceGradients).
        if (zero3_ && last_expert_reduce_[j] != kNone) {
          expert_synced_[j].push_back(last_expert_reduce_[j]);
        }
      }
      if (group.size() == 1 || zero3_) continue;
      for (size_t bi = 0; bi < buckets.size(); ++bi) {
        models::Op op = GradOp(buckets[bi], dist_opt);
        op.name = dist_opt ? "expert_dp_grad_reduce_scatter" : "expert_dp_grad_allreduce";
        absl::StatusOr<sim::TaskId> t =
            AddBucketCollective(AddStepOp(std::move(op)), buckets[bi], static_cast<int>(bi),
                                placement_.CoordsOf(gpu).pp, group, members);
        if (!t.ok()) return t.status();
        for (int j : members) expert_synced_[j].push_back(*t);
      }
    }
    return absl::OkStatus();
  }

  // MoE with the distributed optimizer: each expert-data-parallel group
  // gathers its updated expert parameters after its members' optimizer steps.
  absl::Status AddExpertParamGather(bool dist_opt) {
    const int n = static_cast<int>(compute_.size());
    const int group_size = p_.data_parallel * p_.context_parallel / p_.expert_parallel;
    // (ZeRO-3 gathers them layer by layer, --overlap-param-gather at the start.)
    if (in_.model->num_experts == 0 || !dist_opt || group_size == 1 || zero3_ ||
        overlap_param_gather_) {
      return absl::OkStatus();
    }
    for (int i = 0; i < n; ++i) {
      const int gpu = plan_.simulated_gpus[i];
      const std::vector<int>& group = ExpertDataGroupOf(i);
      const std::vector<int> members = SimulatedMembers(group);
      if (members.front() != i) continue;
      std::vector<sim::TaskId> after;
      for (int j : members) after.push_back(optimizer_step_[j]);
      RETURN_IF_ERROR_(AddParamGather("expert_dp_param_allgather", expert_params_[i],
                                      placement_.CoordsOf(gpu).pp, group, members, after));
    }
    return absl::OkStatus();
  }

  absl::Status AddGradientSyncAndOptimizer() {
    const int n = static_cast<int>(compute_.size());
    const bool dist_opt = p_.distributed_optimizer || p_.zero_stage >= 1;
    RETURN_IF_ERROR_(AddExpertGradientSync(dist_opt));
    optimizer_step_.assign(n, kNone);
    const double expert_shards =
        dist_opt ? p_.data_parallel * p_.context_parallel / p_.expert_parallel : 1;
    for (int i = 0; i < n; ++i) {
      // Gradients are reduced over data x context ranks (Megatron's DP-CP
      // group). One collective serves the group's simulated ranks: its first
      // simulated member creates it.
      const std::vector<int>& group = DataContextGroupOf(i);
      const std::vector<int> members = SimulatedMembers(group);
      if (members.front() != i) continue;
      const std::vector<Bucket> buckets = MakeBuckets(i, /*experts=*/false);
      double local_params = 0;
      for (const Bucket& b : buckets) local_params += b.params;
      const int stage = placement_.CoordsOf(plan_.simulated_gpus[i]).pp;
      std::vector<sim::TaskId> synced;
      if (zero3_) {
        for (int j : members) synced.push_back(last_reduce_[j]);
      } else if (GradientRanks() > 1) {
        for (size_t bi = 0; bi < buckets.size(); ++bi) {
          absl::StatusOr<sim::TaskId> t =
              AddBucketCollective(AddStepOp(GradOp(buckets[bi], dist_opt)), buckets[bi],
                                  static_cast<int>(bi), stage, group, members);
          if (!t.ok()) return t.status();
          synced.push_back(*t);
        }
      }
      // Optimizer step on each member's compute stream once its gradients
      // (dense and, for MoE, expert) are synced: dense parameters sharded over
      // dp, expert parameters over the expert-data-parallel group.
      models::Op adam;
      adam.name = "optimizer_step";
      adam.kind = models::OpKind::kMemoryBound;
      adam.dtype = models::Dtype::kFp32;
      const double opt_params = (dist_opt ? local_params / GradientRanks() : local_params) +
                                expert_params_[i] / expert_shards;
      adam.bytes = sim::Bytes(static_cast<int64_t>(
          opt_params * (Adapters() ? models::kAdapterOptimizerStepBytes : kOptimizerBytesPerParam)));
      const models::Op& adam_op = AddStepOp(std::move(adam));
      const models::OpCost cost = in_.kernels->Cost(adam_op);
      std::vector<sim::TaskId> opt;
      for (int j : members) {
        TaskInfo info{.op = &adam_op, .phase = Phase::kOptimizer,
                      .stage = placement_.CoordsOf(plan_.simulated_gpus[j]).pp,
                      .efficiency = cost.efficiency, .source = cost.source};
        const sim::TaskId t = plan_.graph.AddTask(compute_[j], cost.time, NewInfo(info));
        for (sim::TaskId s : synced) After(s, t);
        for (sim::TaskId s : expert_synced_[j]) After(s, t);
        Chain(j, t);
        opt.push_back(t);
        optimizer_step_[j] = t;
      }
      sim::TaskId gathered = kNone;
      if (dist_opt && GradientRanks() > 1 && !zero3_ && !overlap_param_gather_) {
        RETURN_IF_ERROR_(AddParamGather("dp_param_allgather", local_params, stage, group,
                                        members, opt, &gathered));
      }
      for (int j : members) AddFp8WeightCast(j, gathered);
    }
    return AddExpertParamGather(dist_opt);
  }

  // FP8 training: Transformer Engine casts each FP8 GEMM's weight to FP8 (and
  // its transpose, for the dgrad GEMM) once per step and caches it for the
  // other micro-batches (Megatron-core's forward_step sets
  // is_first_microbatch on the first micro-batch only): read the 16-bit
  // weight, write the FP8 copy and its transpose, 4 B per parameter of the
  // transformer layers this GPU holds (the head and embedding stay 16-bit).
  // The cast of the next step's first micro-batch is placed after this
  // step's optimizer update on the compute stream and, with the distributed
  // optimizer, after the parameter all-gather (`gathered`) it reads; one per
  // step either way. (MoE: the expert parameter gather is not waited for.)
  void AddFp8WeightCast(int gpu, sim::TaskId gathered) {
    if (p_.precision != models::Dtype::kFp8) return;
    const RankCoords c = placement_.CoordsOf(plan_.simulated_gpus[gpu]);
    int layers = 0;
    for (int chunk = 0; chunk < p_.virtual_pipeline; ++chunk) {
      const auto [begin, end] = p_.LayersOf(Position(c.pp, chunk), in_.model->num_layers);
      layers += end - begin;
    }
    if (layers == 0) return;
    if (fp8_cast_ops_.size() <= static_cast<size_t>(layers)) fp8_cast_ops_.resize(layers + 1);
    const models::Op*& slot = fp8_cast_ops_[layers];
    if (slot == nullptr) {  // one op per layer count, its parameters counted once
      const models::ParameterCounts pc = models::CountParameters(*in_.model);
      const double per_layer = (pc.per_layer - pc.expert_per_layer) / p_.tensor_parallel +
                               pc.expert_per_layer / (p_.tensor_parallel * p_.expert_parallel);
      models::Op cast;
      cast.name = "fp8_weight_cast";
      cast.kind = models::OpKind::kMemoryBound;
      cast.dtype = models::Dtype::kBf16;
      cast.bytes = sim::Bytes(static_cast<int64_t>(layers * per_layer * kFp8WeightCastBytes));
      slot = &AddStepOp(std::move(cast));
    }
    const models::OpCost cost = in_.kernels->Cost(*slot);
    TaskInfo info{.op = slot, .phase = Phase::kOptimizer, .stage = c.pp,
                  .efficiency = cost.efficiency, .source = cost.source};
    const sim::TaskId t = plan_.graph.AddTask(compute_[gpu], cost.time, NewInfo(info));
    After(gathered, t);
    Chain(gpu, t);
  }

  // The first task of an action on `gpu`, at pipeline position `to_pos`,
  // needs what the neighbouring position sends it for micro-batch `mb`.
  struct PendingInput {
    int gpu;
    sim::TaskId first;
    int to_pos;
    bool forward;
    int mb;
  };

  const StepInputs& in_;
  const ParallelConfig& p_;
  // ZeRO-3 / FSDP with data parallelism: parameters gathered per layer,
  // gradients reduce-scattered per layer and micro-batch.
  const bool zero3_ = p_.zero_stage == 3 && p_.data_parallel * p_.context_parallel > 1;
  // --overlap-param-gather where there is a parameter gather to overlap.
  const bool overlap_param_gather_ = p_.overlap_param_gather && !zero3_ &&
                                     (p_.distributed_optimizer || p_.zero_stage >= 1) &&
                                     p_.data_parallel * p_.context_parallel > 1;
  // [dense, experts][local GPU][grad_done_ index]: the parameter gather that
  // index's first forward waits for (StartParamGathers).
  std::vector<std::vector<std::vector<sim::TaskId>>> param_gather_of_;
  bool context_fold_exact_ = true;
  const bool merge_chains_ = in_.merge_compute_chains && !p_.tp_comm_overlap;
  // Per GPU: the compute task the next compute op of the same op list may
  // extend (merge_chains_), or kNone once anything else joined the chain.
  std::vector<sim::TaskId> mergeable_;
  // Tensor-parallel collectives join runs too when their other members are
  // folded away; the merged task's tag then names its pieces, so only
  // without TaskInfo tags, and not with run-time (external) collectives.
  const bool merge_collectives_ =
      merge_chains_ && !in_.task_infos && !in_.external_collectives;
  std::optional<RunPieces> pieces_;  // of runs with collectives (merge_collectives_)
  Placement placement_;
  StepPlan& plan_;
  std::vector<int> local_of_;
  std::vector<std::vector<int>> stage_gpus_;  // local GPU indices per stage
  std::vector<std::vector<int>> data_context_groups_;  // per local GPU, filled on first use
  std::vector<std::vector<int>> expert_data_groups_;   // per local GPU, filled on first use
  std::vector<sim::ResourceId> compute_, tp_lane_, dp_lane_, pp_lane_, host_lane_, ep_lane_,
      cp_lane_;
  // Context ring ops, owned by step_ops: forward diagonal and step, backward
  // diagonal and step, forward / backward / final exchange, recomputed
  // forward diagonal and step.
  static constexpr int kRingOps = 9;
  const models::Op* ring_ops_[kRingOps] = {};
  // Per GPU: tasks the next op on its chain must wait for (host launches,
  // ZeRO-3 parameter gathers).
  std::vector<std::vector<sim::TaskId>> waits_;
  // Per GPU: overlapped collectives the op after the next one waits for, and
  // the task before the last one on the chain (tp_comm_overlap).
  std::vector<std::vector<sim::TaskId>> under_next_;
  std::vector<sim::TaskId> before_last_;
  std::vector<sim::TaskId> layer_started_;  // first task of the current layer, per GPU
  // ZeRO-3, per GPU: the last dense and the last expert gradient reduce-scatter.
  std::vector<sim::TaskId> last_reduce_, last_expert_reduce_;
  // MoE, per GPU: expert-gradient reductions its optimizer step waits for,
  // its expert parameters, and its optimizer step.
  std::vector<std::vector<sim::TaskId>> expert_synced_;
  std::vector<double> expert_params_;
  std::vector<sim::TaskId> optimizer_step_;
  std::vector<const models::Op*> fp8_cast_ops_;  // per local layer count
  std::vector<bool> pending_layer_start_;
  // [gather, reduce][embedding, dense layer, head, experts of a layer]
  const models::Op* zero_ops_[2][4] = {};
  const models::Op* launch_op_ = nullptr;
  const models::Op* pipeline_engine_op_ = nullptr;
  std::vector<sim::TaskId> last_;
  std::vector<sim::TaskId> action_first_;  // first task of the current action per GPU
  std::vector<std::vector<sim::TaskId>> grad_done_;
  std::vector<const models::Op*> layer_input_grad_, layer_weight_grad_;
  std::vector<const models::Op*> head_input_grad_, head_weight_grad_;
  const models::Op* send_activation_ = nullptr;
  const models::Op* send_gradient_ = nullptr;
  std::map<std::tuple<int, int, bool, int>, sim::TaskId> sends_;
  std::vector<PendingInput> pending_inputs_;
  std::map<std::pair<const models::Op*, int>, models::OpCost> op_costs_;
  std::map<std::tuple<const models::Op*, int, int>, topology::CollectiveEstimate> comm_costs_;
};

#undef RETURN_IF_ERROR_

}  // namespace

absl::StatusOr<StepPlan> BuildStep(const StepInputs& in) {
  SIM_CHECK(in.model && in.parallel && in.kernels && in.network) << "StepInputs incomplete";
  StepPlan plan;
  models::ShardSpec shard;
  shard.tensor_parallel = in.parallel->tensor_parallel;
  shard.sequence_parallel = in.parallel->sequence_parallel;
  shard.context_parallel = in.parallel->context_parallel;
  shard.micro_batch_size = in.parallel->micro_batch_size;
  shard.dtype = in.parallel->precision;
  shard.recompute = in.parallel->recompute;
  shard.expert_parallel = in.parallel->expert_parallel;
  absl::StatusOr<models::Workload> w = models::BuildWorkload(*in.model, shard);
  if (!w.ok()) return w.status();
  if (auto st = models::ApplyFinetune(*in.model, in.finetune, shard, &*w); !st.ok()) return st;
  plan.workload = *std::move(w);
  // Per-step ops (gradient buckets, optimizer, gathers, embedding tie) for
  // every simulated GPU; reserved so that TaskInfo pointers stay valid.
  plan.step_ops.reserve(static_cast<size_t>(in.parallel->model_parallel_size()) *
                            (in.fold_data_parallel ? 1 : in.parallel->data_parallel) *
                            (in.model->num_layers + 8) * (in.model->num_experts > 0 ? 2 : 1) *
                            (in.parallel->overlap_param_gather ? 2 : 1) +
                        16);
  // One TaskInfo per op of each micro-batch's layers (shared by a stage's
  // GPUs), about one task each with the folds: reserved, not regrown.
  const size_t ops_per_layer =
      plan.workload.layer_forward.size() + plan.workload.layer_backward.size();
  const size_t infos = static_cast<size_t>(in.parallel->num_microbatches()) *
                       (in.model->num_layers + 2) * ops_per_layer;
  if (in.task_infos) {
    plan.infos.reserve(infos);
  } else {
    plan.infos.emplace_back();  // tag 0 of every task
  }
  plan.graph.Reserve(infos);
  Builder b(in, &plan);
  if (auto s = b.Build(); !s.ok()) return s;
  if (plan.folded_context_parallel && !b.context_fold_exact()) {
    StepInputs unfolded = in;
    unfolded.fold_context_parallel = false;
    return BuildStep(unfolded);
  }
  return plan;
}

}  // namespace clustersim::strategies
