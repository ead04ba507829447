// The builder's core: simulated GPUs and their lanes, the order of the step's
// parts (Build), each GPU's chain of work, op costs and compute tasks. The
// other parts are in the step_builder_*.cc files (step_builder_internal.h
// lists them).
#include "strategies/step_builder.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "models/finetune_ops.h"
#include "sim/check.h"
#include "strategies/step_builder_internal.h"

namespace clustersim::strategies {
namespace step_builder_internal {
namespace {

bool IsWeightGradient(const models::Op& op) { return absl::EndsWith(op.name, "_wgrad"); }

// Compute streams Transformer Engine's userbuffers overlap issues the chunk
// GEMMs on, in turn (NVTE_COMM_OVERLAP_MAX_STREAMS = 3 in
// transformer_engine/common/comm_gemm_overlap; split_overlap_ag puts chunk
// i on stream i % 3).
constexpr int kUserbufferComputeStreams = 3;

}  // namespace

absl::Status Builder::Build() {
  const int pp = p_.pipeline_parallel;
  const int v = p_.virtual_pipeline;
  const int m = p_.num_microbatches();
  AddGpus();
  SplitBackward();
  CLUSTERSIM_RETURN_IF_ERROR(CheckGraphCaptures());
  if (overlap_param_gather_) CLUSTERSIM_RETURN_IF_ERROR(StartParamGathers());

  for (int s = 0; s < pp; ++s) {
    std::vector<std::vector<int>> groups;
    for (int i : stage_gpus_[s]) {
      std::vector<int> group = placement_.TensorGroup(plan_.simulated_gpus[i]);
      if (group.front() == plan_.simulated_gpus[i]) groups.push_back(std::move(group));
    }
    plan_.stage_actions.push_back(
        ScheduleForStage(p_.schedule, s, pp, m, v, merge_pairs_ && v > 1 ? 1 : 0));
    const std::vector<PipelineAction>& actions = plan_.stage_actions.back();
    for (size_t k = 0; k < actions.size(); ++k) {
      if (in_.cancel != nullptr && in_.cancel->load(std::memory_order_relaxed)) {
        return absl::CancelledError("cancelled");
      }
      if (k + 1 < actions.size() && MergesPair(actions[k], actions[k + 1])) {
        if (auto st = AddMergedPair(s, actions[k], actions[k + 1], groups); !st.ok()) return st;
        ++k;
        continue;
      }
      if (auto st = AddAction(s, actions[k], groups); !st.ok()) return st;
    }
  }
  ResolvePendingInputs();
  if (auto st = AddEmbeddingTie(); !st.ok()) return st;
  if (auto st = AddGradientSyncAndOptimizer(); !st.ok()) return st;
  pieces_->CloseAll(&plan_);
  return absl::OkStatus();
}

// Picks the simulated GPUs (BuildMode::fold) and adds their lanes, GPU by
// GPU in lane order (resource ids follow it).
void Builder::AddGpus() {
  const int L = in_.model->num_layers;
  const int pp = p_.pipeline_parallel;
  const BuildMode::Fold& fold = in_.mode.fold;
  plan_.world_size = placement_.world_size();
  plan_.folded_data_parallel = fold.data_parallel && p_.data_parallel > 1;
  plan_.folded_tensor_parallel = fold.tensor_parallel && p_.tensor_parallel > 1;
  plan_.folded_context_parallel = fold.context_parallel && p_.context_parallel > 1 &&
                                  p_.expert_parallel == 1 &&
                                  in_.mode.collectives == CollectiveTiming::kAnalytic;
  for (int g = 0; g < plan_.world_size; ++g) {
    const RankCoords c = placement_.CoordsOf(g);
    if ((!plan_.folded_data_parallel || c.dp == 0) &&
        (!plan_.folded_tensor_parallel || c.tp == 0) &&
        (!plan_.folded_context_parallel || c.cp == 0)) {
      plan_.simulated_gpus.push_back(g);
    }
  }
  const int n = static_cast<int>(plan_.simulated_gpus.size());
  // About one task per op of each micro-batch's layers on every simulated GPU
  // of a stage (L / pp layers each): reserved at once, since a graph of tens
  // of millions of tasks would otherwise be copied each time it doubled.
  const size_t ops_per_layer = plan_.workload.LargestLayerOps();
  plan_.graph.Reserve(static_cast<size_t>(p_.num_microbatches()) * (L + 2) * ops_per_layer * n /
                      pp);
  if (in_.cluster != nullptr) {
    simulated_node_.assign(in_.cluster->num_nodes(), false);
    for (int g : plan_.simulated_gpus) {
      if (g < in_.cluster->num_gpus()) simulated_node_[in_.cluster->NodeOf(g)] = true;
    }
  }
  local_of_.assign(plan_.world_size, -1);
  stage_gpus_.assign(pp, {});
  gpu_.assign(n, {});
  const bool host = in_.host_overhead_per_op > sim::Duration::Zero() ||
                    in_.pipeline_p2p_host > sim::Duration::Zero();
  for (int i = 0; i < n; ++i) {
    const int g = plan_.simulated_gpus[i];
    local_of_[g] = i;
    const std::string name = absl::StrCat("gpu", g);
    GpuLanes& lane = gpu_[i].lane;
    lane.compute = plan_.graph.AddResource(name + "/compute", g, kComputeLane);
    lane.tensor = plan_.graph.AddResource(name + "/comm:tp", g, kTensorCommLane);
    lane.data = plan_.graph.AddResource(name + "/comm:dp", g, kDataCommLane);
    if (pp > 1) lane.pipeline = plan_.graph.AddResource(name + "/comm:pp", g, kPipelineCommLane);
    if (p_.expert_parallel > 1) {
      lane.expert = plan_.graph.AddResource(name + "/comm:ep", g, kExpertCommLane);
    }
    if (p_.context_parallel > 1) {
      lane.context = plan_.graph.AddResource(name + "/comm:cp", g, kContextCommLane);
    }
    if (host) lane.host = plan_.graph.AddResource(name + "/host", g, kHostLane);
    if (p_.cpu_offload_layers > 0) AddOffloadLanes(i, name);
    stage_gpus_[placement_.CoordsOf(g).pp].push_back(i);
    gpu_[i].grad_done.assign(L + 2, kNone);
    if (!in_.gpu_time_scale.empty()) {
      double& scale = gpu_[i].time_scale;
      scale = in_.gpu_time_scale[g];
      if (plan_.folded_tensor_parallel) {
        for (int m : placement_.TensorGroup(g)) scale = std::max(scale, in_.gpu_time_scale[m]);
      }
    }
  }
  pieces_.emplace(n);
}

void Builder::SplitBackward() {
  const models::Workload& w = plan_.workload;
  for (int i = 0; i < models::Workload::kOpLists; ++i) {
    for (const models::Op& op : w.BackwardList(i)) {
      (IsWeightGradient(op) ? layer_weight_grad_[i] : layer_input_grad_[i]).push_back(&op);
    }
  }
  for (const models::Op& op : w.head_backward) {
    (IsWeightGradient(op) ? head_weight_grad_ : head_input_grad_).push_back(&op);
  }
  if (p_.recompute == models::Recompute::kFull &&
      p_.recompute_method == models::RecomputeMethod::kBlock) {
    for (int i = 0; i < models::Workload::kOpLists; ++i) {
      for (const models::Op& op : w.BackwardList(i)) {
        if (!op.recompute) layer_kept_backward_[i].push_back(&op);
      }
    }
  }
}

// Keeps a per-step op alive for the plan's lifetime. TaskInfo points into
// step_ops, so it must never reallocate (BuildStep reserves enough).
const models::Op& Builder::AddStepOp(models::Op op) {
  SIM_CHECK(plan_.step_ops.size() < plan_.step_ops.capacity())
      << "step_ops would reallocate and invalidate TaskInfo pointers";
  plan_.step_ops.push_back(std::move(op));
  return plan_.step_ops.back();
}

void Builder::After(sim::TaskId before, sim::TaskId t) {
  if (before != kNone) plan_.graph.AddDependency(before, t);
}

uint32_t Builder::NewInfo(TaskInfo info) {
  if (!in_.mode.record_task_infos) return 0;  // nobody reads them
  plan_.infos.push_back(info);
  return static_cast<uint32_t>(plan_.infos.size() - 1);
}

// Appends `t` to GPU i's chain of work (program order across its lanes).
void Builder::Chain(int i, sim::TaskId t) {
  GpuState& g = gpu_[i];
  g.mergeable = kNone;
  After(g.last, t);
  g.before_last = g.last;
  g.last = t;
  if (g.action_first == kNone) g.action_first = t;
  for (sim::TaskId w : g.waits) After(w, t);
  g.waits.clear();
  g.waits.swap(g.under_next);
  if (g.pending_layer_start) {
    g.layer_started = t;
    g.pending_layer_start = false;
  }
}

// `row_chunks` > 1: a GEMM run as that many row chunks (RowSplitCost).
const models::OpCost& Builder::CostOf(const models::Op& op, int row_chunks) {
  const auto key = std::make_pair(&op, row_chunks);
  auto it = op_costs_.find(key);
  if (it != op_costs_.end()) return it->second;
  return op_costs_
      .emplace(key, row_chunks > 1
                        ? in_.kernels->RowSplitCost(op, row_chunks, kUserbufferComputeStreams)
                        : in_.kernels->Cost(op))
      .first->second;
}

sim::Duration Builder::OnGpu(int i, sim::Duration d) const {
  const double scale = gpu_[i].time_scale;
  if (scale == 1.0) return d;
  return sim::Picoseconds(std::llround(static_cast<double>(d.picoseconds()) * scale));
}

void Builder::AddCompute(const models::Op& op, const Ctx& ctx, int layer, int row_chunks) {
  const models::OpCost& cost = CostOf(op, row_chunks);
  TaskInfo info{.op = &op, .phase = ctx.phase, .microbatch = ctx.microbatch, .layer = layer,
                .stage = ctx.stage, .chunk = ctx.chunk, .efficiency = cost.efficiency,
                .source = cost.source};
  const uint32_t tag = NewInfo(info);
  for (int i : *ctx.gpus) {
    if (CanExtendRun(i)) {
      // It would start as the run's last op ends: the run just grows.
      ExtendRun(i, kComputeLane, OnGpu(i, cost.time));
      continue;
    }
    const sim::TaskId t = plan_.graph.AddTask(gpu_[i].lane.compute, OnGpu(i, cost.time), tag);
    const bool starts_layer = gpu_[i].pending_layer_start;
    Chain(i, t);
    // ZeRO-3 prefetches the next layer's parameters once this layer's
    // first op has ended: that op stays a task of its own.
    if (merge_chains_ && !starts_layer) gpu_[i].mergeable = t;
  }
}

// Local indices of the simulated GPUs of `group`, in group order.
std::vector<int> Builder::SimulatedMembers(const std::vector<int>& group) const {
  std::vector<int> members;
  for (int g : group) {
    if (local_of_[g] >= 0) members.push_back(local_of_[g]);
  }
  return members;
}

// The data x context group of simulated GPU i, built once per GPU (ZeRO-3
// asks for it per layer and micro-batch).
const std::vector<int>& Builder::DataContextGroupOf(int i) {
  std::vector<int>& g = gpu_[i].data_context_group;
  if (g.empty()) g = placement_.DataContextGroup(plan_.simulated_gpus[i]);
  return g;
}

// The expert-data-parallel group of simulated GPU i, built once per GPU.
const std::vector<int>& Builder::ExpertDataGroupOf(int i) {
  std::vector<int>& g = gpu_[i].expert_data_group;
  if (g.empty()) g = placement_.ExpertDataGroup(plan_.simulated_gpus[i]);
  return g;
}

// Under hybrid sharding, simulated GPU i's shard group (its whole data x
// context group otherwise) and its replica group ({i} otherwise).
const std::vector<int>& Builder::DataShardGroupOf(int i) {
  if (p_.ShardedDataParallel() == p_.data_parallel) return DataContextGroupOf(i);
  std::vector<int>& g = gpu_[i].data_shard_group;
  if (g.empty()) {
    g = placement_.DataContextShardGroup(plan_.simulated_gpus[i], p_.ShardedDataParallel());
  }
  return g;
}

const std::vector<int>& Builder::DataReplicaGroupOf(int i) {
  std::vector<int>& g = gpu_[i].data_replica_group;
  if (g.empty()) {
    g = placement_.DataReplicaGroup(plan_.simulated_gpus[i], p_.ShardedDataParallel());
  }
  return g;
}

}  // namespace step_builder_internal

absl::StatusOr<StepPlan> BuildStep(const StepInputs& in) {
  SIM_CHECK(in.model && in.parallel && in.kernels && in.network) << "StepInputs incomplete";
  SIM_CHECK(in.gpu_time_scale.empty() ||
            static_cast<int>(in.gpu_time_scale.size()) ==
                in.parallel->model_parallel_size() * in.parallel->data_parallel)
      << "gpu_time_scale needs one entry per GPU";
  StepPlan plan;
  models::ShardSpec shard;
  shard.tensor_parallel = in.parallel->tensor_parallel;
  shard.sequence_parallel = in.parallel->sequence_parallel;
  shard.context_parallel = in.parallel->context_parallel;
  shard.micro_batch_size = in.parallel->micro_batch_size;
  shard.dtype = in.parallel->precision;
  shard.recompute = in.parallel->recompute;
  shard.recompute_mlp_up = in.parallel->recompute_mlp_up;
  shard.recompute_op_sac = in.parallel->recompute_op_sac;
  shard.fp8_recipe = in.parallel->fp8_recipe;
  shard.modules = in.parallel->recompute_modules;
  shard.recompute_method = in.parallel->recompute_method;
  shard.recompute_num_layers = in.parallel->recompute_num_layers;
  shard.expert_parallel = in.parallel->expert_parallel;
  shard.expert_tensor_parallel = in.parallel->expert_tp();
  shard.moe_pad_to_capacity = in.parallel->moe_pad_to_capacity;
  shard.grad_accumulate_bytes = in.grad_accumulate_bytes;
  const ParallelConfig& pc = *in.parallel;
  if (in.flat_parameter && pc.zero_stage >= 2 && pc.data_parallel * pc.context_parallel > 1) {
    shard.flat_grad_bytes = models::FlatParameterGradBytes(in.zero3_grad_reduce_bytes);
  }
  if (in.per_parameter_sharding && pc.zero_stage == 3 &&
      pc.data_parallel * pc.context_parallel > 1) {
    shard.gather_copy_bytes = models::PerParameterGatherCopyBytes(2);
    shard.copy_experts = pc.expert_data_parallel() > 1;
    if (in.finetune.method == models::FinetuneMethod::kFull) {
      shard.grad_copy_bytes = models::PerParameterGradCopyBytes(in.zero3_grad_reduce_bytes);
    }
  }
  absl::StatusOr<models::Workload> w = models::BuildWorkload(*in.model, shard);
  if (!w.ok()) return w.status();
  if (auto st = models::ApplyFinetune(*in.model, in.finetune, shard, &*w); !st.ok()) return st;
  plan.workload = *std::move(w);
  // Per-step ops (gradient buckets, optimizer, gathers, embedding tie) for
  // every simulated GPU; reserved so that TaskInfo pointers stay valid.
  plan.step_ops.reserve(static_cast<size_t>(in.parallel->model_parallel_size()) *
                            (in.mode.fold.data_parallel ? 1 : in.parallel->data_parallel) *
                            (in.model->num_layers + 8) * (in.model->num_experts > 0 ? 2 : 1) *
                            (in.parallel->overlap_param_gather ? 2 : 1) +
                        16);
  // One TaskInfo per op of each micro-batch's layers (shared by a stage's
  // GPUs), about one task each with the folds: reserved, not regrown.
  const size_t ops_per_layer = plan.workload.LargestLayerOps();
  const size_t infos = static_cast<size_t>(in.parallel->num_microbatches()) *
                       (in.model->num_layers + 2) * ops_per_layer;
  if (in.mode.record_task_infos) {
    plan.infos.reserve(infos);
  } else {
    plan.infos.emplace_back();  // tag 0 of every task
  }
  step_builder_internal::Builder b(in, &plan);
  if (auto s = b.Build(); !s.ok()) return s;
  if (plan.folded_context_parallel && !b.context_fold_exact()) {
    StepInputs unfolded = in;
    unfolded.mode.fold.context_parallel = false;
    return BuildStep(unfolded);
  }
  if (plan.folded_data_parallel && !b.data_fold_exact()) {
    StepInputs unfolded = in;
    unfolded.mode.fold.data_parallel = false;
    return BuildStep(unfolded);
  }
  return plan;
}

}  // namespace clustersim::strategies
