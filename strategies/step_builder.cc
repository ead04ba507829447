#include "strategies/step_builder.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/transformer_config.h"
#include "sim/check.h"
#include "strategies/placement.h"

namespace clustersim::strategies {
namespace {

// Bytes per gradient element in the data-parallel reduction: Megatron-LM keeps
// fp32 main gradients for mixed precision and reduces them in fp32
// (accumulate_allreduce_grads_in_fp32; see shared formulas §5.3, 18 B/param).
constexpr int64_t kGradBytes = 4;
// Parameter all-gather after a distributed-optimizer step moves 16-bit weights.
constexpr int64_t kParamGatherBytes = 2;
// Fused Adam step per local parameter: read fp32 grad, master, m, v (16 B);
// write master, m, v (12 B) and the 16-bit weight (2 B); plus one fp32 read of
// the gradient for the global-norm clip (4 B). Megatron-LM's FusedAdam +
// clip_grad_norm, counted from the tensors it touches.
constexpr int64_t kOptimizerBytesPerParam = 34;

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

// One gradient bucket: the parameters of a run of layers, in backward order.
struct Bucket {
  double params = 0;
  int ready_layer = 0;  // the layer whose backward completes the bucket
};

class Builder {
 public:
  Builder(const StepInputs& in, StepPlan* plan)
      : in_(in), p_(*in.parallel), placement_(p_), plan_(*plan) {}

  absl::Status Build() {
    const int L = in_.model->num_layers;
    plan_.world_size = placement_.world_size();
    plan_.folded_data_parallel = in_.fold_data_parallel && p_.data_parallel > 1;
    for (int g = 0; g < plan_.world_size; ++g) {
      if (!plan_.folded_data_parallel || placement_.CoordsOf(g).dp == 0) {
        plan_.simulated_gpus.push_back(g);
      }
    }
    const int n = static_cast<int>(plan_.simulated_gpus.size());
    local_of_.assign(plan_.world_size, -1);
    for (int i = 0; i < n; ++i) {
      const int g = plan_.simulated_gpus[i];
      local_of_[g] = i;
      const std::string gpu = absl::StrCat("gpu", g);
      compute_.push_back(plan_.graph.AddResource(gpu + "/compute", g, kComputeLane));
      tp_lane_.push_back(plan_.graph.AddResource(gpu + "/comm:tp", g, kTensorCommLane));
      dp_lane_.push_back(plan_.graph.AddResource(gpu + "/comm:dp", g, kDataCommLane));
    }
    last_.assign(n, kNone);
    for (int i = 0; i < n; ++i) {
      std::vector<int> group = placement_.TensorGroup(plan_.simulated_gpus[i]);
      if (group.front() == plan_.simulated_gpus[i]) tp_groups_.push_back(std::move(group));
    }

    const models::Workload& w = plan_.workload;
    const int m = p_.num_microbatches();
    layer_done_.assign(n, std::vector<sim::TaskId>(L + 2, kNone));
    for (int mb = 0; mb < m; ++mb) {
      const bool last_mb = mb == m - 1;
      if (auto s = AddOps(w.embedding_forward, Phase::kForward, mb, -1); !s.ok()) return s;
      for (int l = 0; l < L; ++l) {
        if (auto s = AddOps(w.layer_forward, Phase::kForward, mb, l); !s.ok()) return s;
      }
      if (auto s = AddOps(w.head_forward, Phase::kForward, mb, L); !s.ok()) return s;
      if (auto s = AddOps(w.head_backward, Phase::kBackward, mb, L); !s.ok()) return s;
      if (last_mb) MarkLayerDone(L + 1);
      for (int l = L - 1; l >= 0; --l) {
        if (auto s = AddOps(w.layer_backward, Phase::kBackward, mb, l); !s.ok()) return s;
        if (last_mb) MarkLayerDone(l + 1);
      }
      if (auto s = AddOps(w.embedding_backward, Phase::kBackward, mb, -1); !s.ok()) return s;
      if (last_mb) MarkLayerDone(0);
    }
    return AddGradientSyncAndOptimizer();
  }

 private:
  static constexpr sim::TaskId kNone = ~sim::TaskId{0};

  // layer_done_ index: 0 = embedding, 1..L = layers, L+1 = head.
  void MarkLayerDone(int index) {
    for (size_t i = 0; i < last_.size(); ++i) layer_done_[i][index] = last_[i];
  }

  void After(sim::TaskId before, sim::TaskId t) {
    if (before != kNone) plan_.graph.AddDependency(before, t);
  }

  uint32_t NewInfo(TaskInfo info) {
    plan_.infos.push_back(info);
    return static_cast<uint32_t>(plan_.infos.size() - 1);
  }

  absl::Status AddOps(const std::vector<models::Op>& ops, Phase phase, int mb, int layer) {
    for (const models::Op& op : ops) {
      if (op.kind == models::OpKind::kCollective) {
        if (auto s = AddTensorCollective(op, phase, mb, layer); !s.ok()) return s;
      } else {
        AddCompute(op, phase, mb, layer);
      }
    }
    return absl::OkStatus();
  }

  const models::OpCost& CostOf(const models::Op& op) {
    auto it = std::find_if(op_costs_.begin(), op_costs_.end(),
                           [&](const auto& e) { return e.first == &op; });
    if (it != op_costs_.end()) return it->second;
    op_costs_.emplace_back(&op, in_.kernels->Cost(op));
    return op_costs_.back().second;
  }

  void AddCompute(const models::Op& op, Phase phase, int mb, int layer) {
    const models::OpCost& cost = CostOf(op);
    TaskInfo info{.op = &op, .phase = phase, .microbatch = mb, .layer = layer,
                  .efficiency = cost.efficiency, .source = cost.source};
    for (size_t i = 0; i < compute_.size(); ++i) {
      const sim::TaskId t = plan_.graph.AddTask(compute_[i], cost.time, NewInfo(info));
      After(last_[i], t);
      last_[i] = t;
    }
  }

  absl::StatusOr<topology::CollectiveEstimate> Estimate(topology::Collective kind,
                                                        std::vector<int> gpus, sim::Bytes bytes) {
    topology::CollectiveRequest req{kind, std::move(gpus), bytes, in_.algorithm};
    return in_.network->Estimate(req);
  }

  absl::Status AddTensorCollective(const models::Op& op, Phase phase, int mb, int layer) {
    if (op.group != models::CommGroup::kTensor) {
      return absl::UnimplementedError(
          absl::StrCat("collective op ", op.name, " over a non-tensor group is not supported yet"));
    }
    for (size_t gi = 0; gi < tp_groups_.size(); ++gi) {
      const std::vector<int>& group = tp_groups_[gi];
      const topology::CollectiveEstimate* est = nullptr;
      const auto key = std::make_pair(&op, gi);
      auto it = std::find_if(comm_costs_.begin(), comm_costs_.end(),
                             [&](const auto& e) { return e.first == key; });
      if (it == comm_costs_.end()) {
        absl::StatusOr<topology::CollectiveEstimate> e =
            Estimate(ToCollective(op.comm), group, op.comm_bytes);
        if (!e.ok()) return e.status();
        comm_costs_.emplace_back(key, *e);
        est = &comm_costs_.back().second;
      } else {
        est = &it->second;
      }
      std::vector<sim::ResourceId> lanes;
      for (int g : group) lanes.push_back(tp_lane_[local_of_[g]]);
      TaskInfo info{.op = &op, .phase = phase, .microbatch = mb, .layer = layer,
                    .is_collective = true, .algorithm = est->algorithm,
                    .busbw_gbs = est->busbw_gbs, .group_size = static_cast<int>(group.size())};
      const sim::TaskId t = plan_.graph.AddTask(lanes, est->time, NewInfo(info));
      for (int g : group) After(last_[local_of_[g]], t);
      for (int g : group) last_[local_of_[g]] = t;
    }
    return absl::OkStatus();
  }

  // Gradient buckets in backward order (head, last layer ... first layer,
  // embedding), each closed once it holds `bucket_params` parameters.
  std::vector<Bucket> MakeBuckets() const {
    const models::ParameterCounts pc = models::CountParameters(*in_.model);
    const double tp = p_.tensor_parallel;
    const int L = in_.model->num_layers;
    const double limit = std::max(in_.bucket_params, 1e6 * p_.data_parallel);
    std::vector<std::pair<double, int>> pieces;  // (params on this GPU, layer_done index)
    pieces.emplace_back((pc.final_norm + pc.lm_head) / tp, L + 1);
    for (int l = L - 1; l >= 0; --l) pieces.emplace_back(pc.per_layer / tp, l + 1);
    pieces.emplace_back(pc.embedding / tp, 0);
    std::vector<Bucket> buckets;
    Bucket cur;
    for (const auto& [params, index] : pieces) {
      cur.params += params;
      cur.ready_layer = index;
      if (cur.params >= limit) {
        buckets.push_back(cur);
        cur = Bucket{};
      }
    }
    if (cur.params > 0) buckets.push_back(cur);
    return buckets;
  }

  absl::Status AddGradientSyncAndOptimizer() {
    const int n = static_cast<int>(compute_.size());
    std::vector<std::vector<sim::TaskId>> synced(n);
    const std::vector<Bucket> buckets = MakeBuckets();
    double local_params = 0;
    for (const Bucket& b : buckets) local_params += b.params;
    const bool dist_opt = p_.distributed_optimizer || p_.zero_stage >= 1;
    if (p_.data_parallel > 1) {
      for (size_t bi = 0; bi < buckets.size(); ++bi) {
        models::Op op;
        op.name = dist_opt ? "dp_grad_reduce_scatter" : "dp_grad_allreduce";
        op.kind = models::OpKind::kCollective;
        op.group = models::CommGroup::kData;
        op.comm = dist_opt ? models::CommKind::kReduceScatter : models::CommKind::kAllReduce;
        op.comm_bytes = sim::Bytes(static_cast<int64_t>(buckets[bi].params) * kGradBytes);
        plan_.step_ops.push_back(op);
      }
    }
    if (p_.data_parallel > 1) {
      for (size_t bi = 0; bi < buckets.size(); ++bi) {
        const models::Op& op = plan_.step_ops[bi];
        if (auto s = AddDataCollective(op, static_cast<int>(bi), buckets[bi].ready_layer, &synced);
            !s.ok()) {
          return s;
        }
      }
    }
    // Optimizer step on each GPU's compute stream once its gradients are synced.
    models::Op adam;
    adam.name = "optimizer_step";
    adam.kind = models::OpKind::kMemoryBound;
    adam.dtype = models::Dtype::kFp32;
    const double opt_params = dist_opt ? local_params / p_.data_parallel : local_params;
    adam.bytes = sim::Bytes(static_cast<int64_t>(opt_params) * kOptimizerBytesPerParam);
    plan_.step_ops.push_back(adam);
    const models::Op& adam_op = plan_.step_ops.back();
    const models::OpCost cost = in_.kernels->Cost(adam_op);
    std::vector<sim::TaskId> opt_task(n);
    for (int i = 0; i < n; ++i) {
      TaskInfo info{.op = &adam_op, .phase = Phase::kOptimizer, .efficiency = cost.efficiency,
                    .source = cost.source};
      const sim::TaskId t = plan_.graph.AddTask(compute_[i], cost.time, NewInfo(info));
      After(last_[i], t);
      for (sim::TaskId s : synced[i]) After(s, t);
      last_[i] = t;
      opt_task[i] = t;
    }
    if (dist_opt && p_.data_parallel > 1) {
      models::Op gather;
      gather.name = "dp_param_allgather";
      gather.kind = models::OpKind::kCollective;
      gather.group = models::CommGroup::kData;
      gather.comm = models::CommKind::kAllGather;
      gather.comm_bytes = sim::Bytes(static_cast<int64_t>(local_params) * kParamGatherBytes);
      plan_.step_ops.push_back(gather);
      std::vector<std::vector<sim::TaskId>> unused(n);
      if (auto s = AddDataCollective(plan_.step_ops.back(), -1, 0, &unused); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // One collective per data-parallel group. Folded: each simulated GPU stands
  // for its group and occupies only its own lane; the cost is the full group's.
  absl::Status AddDataCollective(const models::Op& op, int bucket, int ready_index,
                                 std::vector<std::vector<sim::TaskId>>* synced) {
    const int n = static_cast<int>(compute_.size());
    std::vector<bool> done(n, false);
    for (int i = 0; i < n; ++i) {
      if (done[i]) continue;
      const std::vector<int> group = placement_.DataGroup(plan_.simulated_gpus[i]);
      absl::StatusOr<topology::CollectiveEstimate> est =
          Estimate(ToCollective(op.comm), group, op.comm_bytes);
      if (!est.ok()) return est.status();
      std::vector<int> members;
      if (plan_.folded_data_parallel) {
        members.push_back(i);
      } else {
        for (int g : group) members.push_back(local_of_[g]);
      }
      std::vector<sim::ResourceId> lanes;
      for (int j : members) lanes.push_back(dp_lane_[j]);
      TaskInfo info{.op = &op, .phase = Phase::kOptimizer, .bucket = bucket,
                    .is_collective = true, .algorithm = est->algorithm,
                    .busbw_gbs = est->busbw_gbs, .group_size = static_cast<int>(group.size())};
      const sim::TaskId t = plan_.graph.AddTask(lanes, est->time, NewInfo(info));
      for (int j : members) {
        const sim::TaskId trigger = p_.overlap_grad_reduce && bucket >= 0
                                        ? layer_done_[j][ready_index]
                                        : last_[j];
        After(trigger, t);
        (*synced)[j].push_back(t);
        done[j] = true;
      }
    }
    return absl::OkStatus();
  }

  const StepInputs& in_;
  const ParallelConfig& p_;
  Placement placement_;
  StepPlan& plan_;
  std::vector<int> local_of_;
  std::vector<sim::ResourceId> compute_, tp_lane_, dp_lane_;
  std::vector<sim::TaskId> last_;
  std::vector<std::vector<int>> tp_groups_;
  std::vector<std::vector<sim::TaskId>> layer_done_;
  std::vector<std::pair<const models::Op*, models::OpCost>> op_costs_;
  std::vector<std::pair<std::pair<const models::Op*, size_t>, topology::CollectiveEstimate>>
      comm_costs_;
};

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
  absl::StatusOr<models::Workload> w = models::BuildWorkload(*in.model, shard);
  if (!w.ok()) return w.status();
  plan.workload = *std::move(w);
  // Data-parallel buckets + optimizer + gather; reserved up front so TaskInfo
  // pointers into step_ops stay valid.
  plan.step_ops.reserve(in.model->num_layers + 8);
  Builder b(in, &plan);
  if (auto s = b.Build(); !s.ok()) return s;
  return plan;
}

}  // namespace clustersim::strategies
