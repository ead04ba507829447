// Parameter sharding: ZeRO-3 / FSDP's per-layer parameter all-gathers and
// gradient reduce-scatters, and the distributed optimizer's (ZeRO-1/2)
// parameter all-gathers after the optimizer step or, with
// --overlap-param-gather, at the start of the step.
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "strategies/step_builder_internal.h"

namespace clustersim::strategies::step_builder_internal {
namespace {

// Parameter all-gather after a distributed-optimizer step moves 16-bit weights.
constexpr int64_t kParamGatherBytes = 2;

// The slot of `ops` for one kind of shard of `layer` (-1 embedding,
// `num_layers` head; `experts`: a layer's routed experts).
const models::Op** SlotOf(ZeroShardOps& ops, int layer, int num_layers, bool experts) {
  if (experts) return &ops.experts;
  if (layer < 0) return &ops.embedding;
  if (layer >= num_layers) return &ops.head;
  return &ops.layer;
}

}  // namespace

// ZeRO-3 shards of `layer` (-1 embedding, L head) on one GPU, in
// parameters: dense (divided by tp) or, for a mixture-of-experts layer, its
// routed experts (divided by expert TP x ep). The head and embedding have no experts.
double Builder::LayerParams(int layer, bool experts) const {
  const models::ParameterCounts pc = models::CountParameters(*in_.model);
  const double tp = p_.tensor_parallel;
  if (layer < 0) return experts ? 0 : pc.embedding / tp;
  if (layer >= in_.model->num_layers) return experts ? 0 : (pc.final_norm + pc.lm_head) / tp;
  return experts ? pc.expert_per_layer / (p_.expert_tp() * p_.expert_parallel)
                 : (pc.per_layer - pc.expert_per_layer) / tp;
}

// The ZeRO-3 gather (or reduce-scatter) of one kind of shard, made on first use.
const models::Op& Builder::ZeroOp(bool gather, int layer, bool experts) {
  const models::Op** slot = SlotOf(gather ? zero_gather_ops_ : zero_reduce_ops_, layer,
                                   in_.model->num_layers, experts);
  if (*slot == nullptr) {
    models::Op op;
    op.name = absl::StrCat("zero3_", experts ? "expert_" : "",
                           gather ? "param_allgather" : "grad_reduce_scatter");
    op.kind = models::OpKind::kCollective;
    op.group = models::CommGroup::kData;
    op.comm = gather ? models::CommKind::kAllGather : models::CommKind::kReduceScatter;
    // 16-bit parameters gathered; gradients reduced in the 16-bit parameter
    // dtype or in fp32 (the stack's FSDP MixedPrecision reduce_dtype).
    const int64_t bytes = gather ? 2 : in_.zero3_grad_reduce_bytes;
    op.comm_bytes = sim::Bytes(static_cast<int64_t>(LayerParams(layer, experts)) * bytes);
    *slot = &AddStepOp(std::move(op));
  }
  return **slot;
}

// Hybrid sharding: the all-reduce of `layer`'s dense gradient shard (its
// share of the shard group's reduce-scatter) over the replicas.
const models::Op& Builder::ZeroReplicaOp(int layer) {
  const models::Op** slot = SlotOf(zero_replica_ops_, layer, in_.model->num_layers, false);
  if (*slot == nullptr) {
    models::Op op;
    op.name = "zero3_grad_replica_allreduce";
    op.kind = models::OpKind::kCollective;
    op.group = models::CommGroup::kData;
    op.comm = models::CommKind::kAllReduce;
    const double shard_ranks = p_.ShardedDataParallel() * p_.context_parallel;
    op.comm_bytes = sim::Bytes(
        static_cast<int64_t>(LayerParams(layer, false) / shard_ranks * in_.zero3_grad_reduce_bytes));
    *slot = &AddStepOp(std::move(op));
  }
  return **slot;
}

// The ZeRO-3 shards of `layer`: its dense parameters over the data x context
// group (under hybrid sharding, the GPU's shard group) and, on an MoE layer,
// its experts over the expert-data-parallel group (placement.h); a group of
// one rank holds its shard whole.
std::vector<Builder::ZeroShard> Builder::ZeroShards(int i, int layer) {
  std::vector<ZeroShard> out = {{false, &DataShardGroupOf(i)}};
  if (in_.model->num_experts > 0 && layer >= 0 && layer < in_.model->num_layers) {
    out.push_back({true, &ExpertDataGroupOf(i)});
  }
  std::erase_if(out, [](const ZeroShard& z) { return z.group->size() == 1; });
  return out;
}

// ZeRO-3 / FSDP: before a layer's forward or backward, all-gather its
// parameters (ZeroShards). The gathers for a layer are issued when the
// previous layer starts (one layer of prefetch, as FSDP's
// limit_all_gathers), and the layer's first op waits for them. Under
// StepInputs::megatron_fsdp the embedding and output layer are gathered only
// at the first micro-batch's forward (KeepsGathered), and in the backward a
// layer prefetched by the piece before it waits for that gather, while this
// piece gathers the next layer of the pass (BackwardPrefetch).
absl::Status Builder::GatherParameters(const Ctx& ctx, int layer) {
  const bool kept = KeepsGathered(ctx, layer);
  for (int i : *ctx.gpus) {
    GpuState& g = gpu_[i];
    if (g.prefetched_layer == layer && ctx.phase == Phase::kBackward) {
      for (sim::TaskId t : g.prefetched) g.waits.push_back(t);
    } else if (!kept) {
      CLUSTERSIM_RETURN_IF_ERROR(AddShardGathers(i, layer, ctx, g.layer_started, &g.waits));
    }
    g.prefetched.clear();
    g.prefetched_layer = kNoPrefetch;
  }
  CLUSTERSIM_RETURN_IF_ERROR(BackwardPrefetch(ctx, layer));
  for (int i : *ctx.gpus) {
    gpu_[i].layer_started = kNone;  // set by the layer's first op below
    gpu_[i].pending_layer_start = true;
  }
  return absl::OkStatus();
}

// Megatron-FSDP's backward: the pre-backward hook of a piece (a layer or the
// output layer) gathers its parameters and prefetches the next transformer
// layer in backward order, within the double buffer's two FSDP units
// (param_and_grad_buffer.py AllGatherPipeline.all_gather_params with
// PrefetchOrder.BACKWARD_PASS_ORDER; megatron_fsdp.py
// _pre_backward_param_unshard, Megatron-LM d98e8a64dd). That gather is issued
// before this piece's gradient reduce-scatter, so it runs under this
// piece's backward (docs/runtime_schedule.md: "AG_{i-1} needs to be
// prefetched before DO_i and RS_i"); it waits for the previous piece's
// backward, whose buffer it reuses. Only within the action's layers.
absl::Status Builder::BackwardPrefetch(const Ctx& ctx, int layer) {
  if (!in_.megatron_fsdp || !zero3_ || ctx.phase != Phase::kBackward) return absl::OkStatus();
  const int first_layer =
      p_.LayersOf(Position(ctx.stage, ctx.chunk), in_.model->num_layers).first;
  const int next = layer - 1;
  if (next < first_layer || next >= in_.model->num_layers) return absl::OkStatus();
  for (int i : *ctx.gpus) {
    GpuState& g = gpu_[i];
    CLUSTERSIM_RETURN_IF_ERROR(AddShardGathers(i, next, ctx, g.last, &g.prefetched));
    g.prefetched_layer = next;
  }
  return absl::OkStatus();
}

// The all-gathers of `layer`'s ZeRO-3 shards (ZeroShards) on simulated GPU
// i, each issued after `after`, appended to `done`.
absl::Status Builder::AddShardGathers(int i, int layer, const Ctx& ctx, sim::TaskId after,
                                      std::vector<sim::TaskId>* done) {
  for (const ZeroShard& z : ZeroShards(i, layer)) {
    absl::StatusOr<sim::TaskId> t =
        AddDataCollective(ZeroOp(true, layer, z.experts), i, *z.group, ctx, layer);
    if (!t.ok()) return t.status();
    After(after, *t);
    done->push_back(*t);
  }
  return absl::OkStatus();
}

// Megatron-FSDP frees gathered parameters only for its FSDP unit modules,
// the transformer layers (mcore_fsdp_adapter.py: fsdp_unit_modules
// TransformerLayer, MoETransformerLayer, MambaLayer); other modules' buckets
// are never released within a step (param_and_grad_buffer.py
// AllGatherPipeline.release_bucket and reset, Megatron-LM d98e8a64dd). So
// the embedding and output layer (`layer` -1 and L) hold the parameters of
// their first gather, in the first micro-batch's forward, until the step ends.
bool Builder::KeepsGathered(const Ctx& ctx, int layer) const {
  if (!in_.megatron_fsdp) return false;
  if (layer >= 0 && layer < in_.model->num_layers) return false;
  return !(ctx.phase == Phase::kForward && ctx.microbatch == 0);
}

// After a layer's backward: reduce-scatter its gradients over the same
// groups (not blocking compute). Under hybrid sharding the dense shard is
// then all-reduced over the replicas, as PyTorch HSDP does per FSDP unit
// (reduce-scatter, then all-reduce of the shard).
absl::Status Builder::ReduceGradients(const Ctx& ctx, int layer) {
  const bool replicated = p_.ShardedDataParallel() < p_.data_parallel;
  for (int i : *ctx.gpus) {
    sim::TaskId dense = gpu_[i].last;
    for (const ZeroShard& z : ZeroShards(i, layer)) {
      absl::StatusOr<sim::TaskId> t =
          AddDataCollective(ZeroOp(false, layer, z.experts), i, *z.group, ctx, layer);
      if (!t.ok()) return t.status();
      After(gpu_[i].last, *t);
      (z.experts ? gpu_[i].last_expert_reduce : gpu_[i].last_reduce) = *t;
      if (!z.experts) dense = *t;
    }
    if (replicated) {
      absl::StatusOr<sim::TaskId> t =
          AddDataCollective(ZeroReplicaOp(layer), i, DataReplicaGroupOf(i), ctx, layer);
      if (!t.ok()) return t.status();
      After(dense, *t);
      gpu_[i].last_reduce = *t;
    }
  }
  return absl::OkStatus();
}

// A collective of simulated GPU i over its `group` on its data-parallel
// lane. With fixed-duration (analytic) collectives every member adds its own
// task. With external (flow) timing the group's simulated members share the
// first member's task, so the network carries the collective once, not once
// per member; each caller adds its member's dependencies to it. It occupies
// the first member's lane only: a shared task on every member's lane would
// sit there in the first member's issue order, and a member whose hybrid
// shard and replica groups were first built by different GPUs would wait on
// itself.
absl::StatusOr<sim::TaskId> Builder::AddDataCollective(const models::Op& op, int i,
                                                       const std::vector<int>& group,
                                                       const Ctx& ctx, int layer) {
  const bool shared = in_.mode.collectives != CollectiveTiming::kAnalytic;
  const SharedCollectiveKey key{&op, group.front(), group.back(), static_cast<int>(ctx.phase),
                                ctx.microbatch, layer};
  if (shared) {
    auto it = shared_data_collectives_.find(key);
    if (it != shared_data_collectives_.end()) {
      std::vector<int>& took = it->second.second;
      if (std::find(took.begin(), took.end(), i) == took.end()) {
        took.push_back(i);
        return it->second.first;
      }
    }
  }
  absl::StatusOr<topology::CollectiveEstimate> est = Estimate(op, ToCollective(op.comm), group);
  if (!est.ok()) return est.status();
  TaskInfo info{.op = &op, .phase = ctx.phase, .microbatch = ctx.microbatch, .layer = layer,
                .stage = ctx.stage, .is_collective = true, .algorithm = est->algorithm,
                .busbw_gbs = est->busbw_gbs, .group_size = static_cast<int>(group.size())};
  const sim::TaskId t = AddCollectiveTask({gpu_[i].lane.data}, *est, info,
                                          ToCollective(op.comm), group, op.comm_bytes);
  if (shared) shared_data_collectives_[key] = {t, {i}};
  return t;
}

// Distributed optimizer: all-gather the updated 16-bit parameters (`params`
// on each rank) over `group` once every member's optimizer step `after` ran.
absl::Status Builder::AddParamGather(const char* name, double params, int stage,
                                     const std::vector<int>& group,
                                     const std::vector<int>& members,
                                     const std::vector<sim::TaskId>& after, sim::TaskId* done) {
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
  for (int j : members) lanes.push_back(gpu_[j].lane.data);
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
// (MoE) expert buckets over the expert-data-parallel group. Fills each GPU's
// dense_param_gather and expert_param_gather, which WaitForParameters reads.
absl::Status Builder::StartParamGathers() {
  const int n = static_cast<int>(gpu_.size());
  for (GpuState& g : gpu_) {
    g.dense_param_gather.assign(in_.model->num_layers + 2, kNone);
    g.expert_param_gather.assign(in_.model->num_layers + 2, kNone);
  }
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
        CLUSTERSIM_RETURN_IF_ERROR(AddParamGather(
            experts ? "expert_dp_param_allgather" : "dp_param_allgather", b.params, stage,
            group, members, {previous}, &previous));
        for (int j : members) {
          std::vector<sim::TaskId>& gather_of =
              experts ? gpu_[j].expert_param_gather : gpu_[j].dense_param_gather;
          for (int index = b.ready_index; index <= b.first_index; ++index) {
            gather_of[index] = previous;
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

// The next op of each of `gpus` waits for the gathers (dense and expert) of
// the parameter bucket holding gradient index `index`.
void Builder::WaitForParameters(const std::vector<int>& gpus, int index) {
  for (int i : gpus) {
    GpuState& g = gpu_[i];
    if (g.dense_param_gather[index] != kNone) g.waits.push_back(g.dense_param_gather[index]);
    if (g.expert_param_gather[index] != kNone) g.waits.push_back(g.expert_param_gather[index]);
  }
}

// MoE with the distributed optimizer: each expert-data-parallel group
// gathers its updated expert parameters after its members' optimizer steps.
absl::Status Builder::AddExpertParamGather(bool dist_opt) {
  const int n = static_cast<int>(gpu_.size());
  const int group_size = p_.expert_data_parallel();
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
    for (int j : members) after.push_back(gpu_[j].optimizer_step);
    CLUSTERSIM_RETURN_IF_ERROR(AddParamGather("expert_dp_param_allgather",
                                                gpu_[i].expert_params,
                                                placement_.CoordsOf(gpu).pp, group, members,
                                                after));
  }
  return absl::OkStatus();
}

}  // namespace clustersim::strategies::step_builder_internal
