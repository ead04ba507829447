// The end of the step: the tied embedding's gradient all-reduce between the
// first and last stage, the data-parallel gradient reduction in buckets
// (dense over the data x context group, MoE experts over the
// expert-data-parallel group), and the optimizer step that waits for it.
#include <algorithm>
#include <utility>
#include <vector>

#include "models/finetune_ops.h"
#include "strategies/step_builder_internal.h"

namespace clustersim::strategies::step_builder_internal {
namespace {

// Bytes per gradient element in the data-parallel reduction: Megatron-LM keeps
// fp32 main gradients for mixed precision and reduces them in fp32
// (accumulate_allreduce_grads_in_fp32; 18 B/param accounting).
constexpr int64_t kGradBytes = 4;
// Fused Adam step per local parameter: read fp32 grad, master, m, v (16 B);
// write master, m, v (12 B) and the 16-bit weight (2 B); plus one fp32 read of
// the gradient for the global-norm clip (4 B). Megatron-LM's FusedAdam +
// clip_grad_norm, counted from the tensors it touches.
constexpr int64_t kOptimizerBytesPerParam = 34;

}  // namespace

// Tied input/output embeddings on different stages: Megatron all-reduces
// their gradients between the first and last stage before the optimizer.
absl::Status Builder::AddEmbeddingTie() {
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
    const sim::TaskId t = AddCollectiveTask({gpu_[i].lane.pipeline, gpu_[j].lane.pipeline},
                                            *est, info, topology::Collective::kAllReduce,
                                            group, tie.comm_bytes);
    Chain(i, t);
    Chain(j, t);
  }
  return absl::OkStatus();
}

// Gradient buckets of GPU i in backward order, each closed once it holds
// `bucket_params` parameters (Megatron: max(40M, 1M x dp)). MoE: the routed
// experts' parameters (÷ expert TP·ep) go to separate buckets (`experts`), reduced
// over the expert-data-parallel group, as Megatron-core's expert buffers.
std::vector<Bucket> Builder::MakeBuckets(int i, bool experts) const {
  const models::ParameterCounts pc = models::CountParameters(*in_.model);
  const double tp = p_.tensor_parallel;
  const int L = in_.model->num_layers;
  const double limit = std::max(in_.bucket_params, 1e6 * GradientRanks());
  const RankCoords c = placement_.CoordsOf(plan_.simulated_gpus[i]);
  std::vector<std::pair<double, int>> pieces;  // (params on this GPU, gradient index)
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
  double per_layer = experts ? pc.expert_per_layer / (p_.expert_tp() * p_.expert_parallel)
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

models::Op Builder::GradOp(const Bucket& b, bool dist_opt) {
  models::Op op;
  op.name = dist_opt ? "dp_grad_reduce_scatter" : "dp_grad_allreduce";
  op.kind = models::OpKind::kCollective;
  op.group = models::CommGroup::kData;
  op.comm = dist_opt ? models::CommKind::kReduceScatter : models::CommKind::kAllReduce;
  op.comm_bytes = sim::Bytes(static_cast<int64_t>(
      b.params * (Adapters() ? models::kAdapterGradientBytes : kGradBytes)));
  return op;
}

// One gradient bucket's reduction over `group` on the data lanes of the
// simulated `members`, after their backward (or, overlapped, after the
// bucket's last gradient).
absl::StatusOr<sim::TaskId> Builder::AddBucketCollective(const models::Op& op, const Bucket& b,
                                                         int bucket_index, int stage,
                                                         const std::vector<int>& group,
                                                         const std::vector<int>& members) {
  absl::StatusOr<topology::CollectiveEstimate> est = Estimate(op, ToCollective(op.comm), group);
  if (!est.ok()) return est.status();
  std::vector<sim::ResourceId> lanes;
  for (int j : members) lanes.push_back(gpu_[j].lane.data);
  TaskInfo info{.op = &op, .phase = Phase::kOptimizer, .bucket = bucket_index, .stage = stage,
                .is_collective = true, .algorithm = est->algorithm,
                .busbw_gbs = est->busbw_gbs, .group_size = static_cast<int>(group.size())};
  const sim::TaskId t =
      AddCollectiveTask(lanes, *est, info, ToCollective(op.comm), group, op.comm_bytes);
  for (int j : members) {
    After(p_.overlap_grad_reduce ? gpu_[j].grad_done[b.ready_index] : gpu_[j].last, t);
  }
  return t;
}

// MoE: the routed experts' gradients, reduced in their own buckets over the
// expert-data-parallel group (dp·cp/ep ranks; placement.h). Fills each GPU's
// expert_synced (what its optimizer step waits for) and expert_params. In
// unfolded runs the member with expert-data rank 0 creates its group's
// collectives.
absl::Status Builder::AddExpertGradientSync(bool dist_opt) {
  const int n = static_cast<int>(gpu_.size());
  if (in_.model->num_experts == 0) return absl::OkStatus();
  for (int i = 0; i < n; ++i) {
    const int gpu = plan_.simulated_gpus[i];
    const std::vector<int>& group = ExpertDataGroupOf(i);
    const std::vector<int> members = SimulatedMembers(group);
    if (members.front() != i) continue;
    const std::vector<Bucket> buckets = MakeBuckets(i, /*experts=*/true);
    for (int j : members) {
      for (const Bucket& b : buckets) gpu_[j].expert_params += b.params;
      // ZeRO-3 reduced them layer by layer (ReduceGradients).
      if (zero3_ && gpu_[j].last_expert_reduce != kNone) {
        gpu_[j].expert_synced.push_back(gpu_[j].last_expert_reduce);
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
      for (int j : members) gpu_[j].expert_synced.push_back(*t);
    }
  }
  return absl::OkStatus();
}

absl::Status Builder::AddGradientSyncAndOptimizer() {
  const int n = static_cast<int>(gpu_.size());
  const bool dist_opt = p_.distributed_optimizer || p_.zero_stage >= 1;
  CLUSTERSIM_RETURN_IF_ERROR(AddExpertGradientSync(dist_opt));
  const double expert_shards =
      dist_opt ? p_.expert_data_parallel() : 1;
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
    // DeepSpeed's BF16_Optimizer keeps whole fp32 gradient buffers (the ones
    // grad_accumulate_bytes fills) and all-reduces them in full before its
    // sharded step (runtime/pipe/engine.py _bf16_reduce_grads:
    // buffered_allreduce_fallback over get_grads_for_reduction), where a
    // distributed optimizer reduce-scatters them.
    const bool reduce_scatter = dist_opt && in_.grad_accumulate_bytes <= 0;
    if (zero3_) {
      for (int j : members) synced.push_back(gpu_[j].last_reduce);
    } else if (GradientRanks() > 1) {
      for (size_t bi = 0; bi < buckets.size(); ++bi) {
        absl::StatusOr<sim::TaskId> t =
            AddBucketCollective(AddStepOp(GradOp(buckets[bi], reduce_scatter)), buckets[bi],
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
                              gpu_[i].expert_params / expert_shards;
    adam.bytes = sim::Bytes(static_cast<int64_t>(
        opt_params * (Adapters() ? models::kAdapterOptimizerStepBytes : kOptimizerBytesPerParam)));
    const models::Op& adam_op = AddStepOp(std::move(adam));
    const models::OpCost cost = in_.kernels->Cost(adam_op);
    std::vector<sim::TaskId> opt;
    for (int j : members) {
      TaskInfo info{.op = &adam_op, .phase = Phase::kOptimizer,
                    .stage = placement_.CoordsOf(plan_.simulated_gpus[j]).pp,
                    .efficiency = cost.efficiency, .source = cost.source};
      const sim::TaskId t = plan_.graph.AddTask(gpu_[j].lane.compute, OnGpu(j, cost.time), NewInfo(info));
      for (sim::TaskId s : synced) After(s, t);
      for (sim::TaskId s : gpu_[j].expert_synced) After(s, t);
      Chain(j, t);
      opt.push_back(t);
      gpu_[j].optimizer_step = t;
    }
    sim::TaskId gathered = kNone;
    if (dist_opt && GradientRanks() > 1 && !zero3_ && !overlap_param_gather_) {
      CLUSTERSIM_RETURN_IF_ERROR(AddParamGather("dp_param_allgather", local_params, stage,
                                                  group, members, opt, &gathered));
    }
    for (int j : members) AddFp8WeightCast(j, gathered);
  }
  return AddExpertParamGather(dist_opt);
}

}  // namespace clustersim::strategies::step_builder_internal
