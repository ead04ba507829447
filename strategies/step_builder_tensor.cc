// Collectives inside a layer's ops: tensor- and sequence-parallel collectives
// (in program order, or under a GEMM with tp_comm_overlap) and the MoE token
// dispatch and combine all-to-alls over the expert-parallel group.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "strategies/step_builder_internal.h"

namespace clustersim::strategies::step_builder_internal {

// Which GEMM a tensor-parallel collective of a transformer layer runs under
// with parallelism.tp_comm_overlap (strategies/parallel_config.h): an
// all-gather under the GEMM after it; a reduce-scatter under the GEMM after
// it (backward: dgrad's reduce-scatter under wgrad) or else the one before
// it (forward: out_proj, fc2). Dense GEMMs only: the MoE token dispatch is
// not a userbuffers overlap.
Builder::Overlap Builder::TensorOverlap(const models::Op& op, int layer, const models::Op* prev,
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

absl::Status Builder::AddTensorCollective(const models::Op& op, const Ctx& ctx, int layer,
                                          Overlap overlap) {
  if (op.group != models::CommGroup::kTensor) {
    return absl::UnimplementedError(
        absl::StrCat("collective op ", op.name, " over a non-tensor group is not supported yet"));
  }
  for (const std::vector<int>& group : *ctx.tp_groups) {
    CLUSTERSIM_RETURN_IF_ERROR(
        AddChainedCollective(op, ctx, layer, group, &GpuLanes::tensor, overlap));
  }
  return absl::OkStatus();
}

// MoE token dispatch / combine: one all-to-all per expert-parallel group
// (strategies/placement.h), on the expert lane, in program order like
// Megatron-core's all-to-all token dispatcher (no overlap with compute).
// The first simulated member of each group creates its task. DeepEP and
// HybridEP: AddHierarchicalDispatch.
absl::Status Builder::AddExpertCollective(const models::Op& op, const Ctx& ctx, int layer) {
  if (p_.moe_dispatcher != MoeDispatcher::kAllToAll && op.comm == models::CommKind::kAllToAll) {
    return AddHierarchicalDispatch(op, ctx, layer);
  }
  for (int i : *ctx.gpus) {
    const std::vector<int> group = placement_.ExpertGroup(plan_.simulated_gpus[i]);
    if (SimulatedMembers(group).front() != i) continue;
    CLUSTERSIM_RETURN_IF_ERROR(AddChainedCollective(op, ctx, layer, group, &GpuLanes::expert));
  }
  return absl::OkStatus();
}

// The parts of an expert group on the nodes of StepInputs::cluster: per
// node, its members in group order. Empty when the nodes hold different
// numbers of members (or there is no cluster: then one part).
std::vector<std::vector<int>> Builder::NodeParts(const std::vector<int>& group) const {
  std::vector<std::vector<int>> parts;
  std::vector<int> node_of_part;
  for (int g : group) {
    const int node = in_.cluster == nullptr ? 0 : in_.cluster->NodeOf(g);
    size_t k = 0;
    while (k < node_of_part.size() && node_of_part[k] != node) ++k;
    if (k == node_of_part.size()) {
      node_of_part.push_back(node);
      parts.emplace_back();
    }
    parts[k].push_back(g);
  }
  for (const std::vector<int>& part : parts) {
    if (part.size() != parts.front().size()) return {};
  }
  return parts;
}

// DeepEP / HybridEP (strategies/expert_dispatch.h): the all-to-all `op` (k
// copies of every token, op.comm_bytes per rank) becomes an all-to-all over
// each rail of the expert group (the members at the same index on each of
// its N nodes) carrying one copy per other node the token's experts are on,
// then one over the group's G members on each node carrying one copy per
// rank holding its experts (the NVLink fan-out), both on the expert lane;
// the distinct nodes and ranks follow parallelism.moe_routing.
// Nodes holding unequal shares of the group, or experts that do not split
// evenly over the nodes: the plain all-to-all.
absl::Status Builder::AddHierarchicalDispatch(const models::Op& op, const Ctx& ctx, int layer) {
  // Each GPU's expert group split by node; one shape for the whole stage.
  std::vector<std::vector<std::vector<int>>> parts_of;
  bool even = true;
  for (int i : *ctx.gpus) {
    parts_of.push_back(NodeParts(placement_.ExpertGroup(plan_.simulated_gpus[i])));
    even = even && !parts_of.back().empty() && parts_of.back().size() == parts_of[0].size() &&
           parts_of.back()[0].size() == parts_of[0][0].size();
  }
  const int experts = in_.model->num_experts, k = in_.model->moe_top_k;
  const int nodes = even ? static_cast<int>(parts_of[0].size()) : 0;
  if (nodes == 0 || experts % nodes != 0) {
    for (int i : *ctx.gpus) {
      const std::vector<int> g = placement_.ExpertGroup(plan_.simulated_gpus[i]);
      if (SimulatedMembers(g).front() != i) continue;
      CLUSTERSIM_RETURN_IF_ERROR(AddChainedCollective(op, ctx, layer, g, &GpuLanes::expert));
    }
    return absl::OkStatus();
  }
  const int per_node = static_cast<int>(parts_of[0][0].size());
  DispatchOps& ops = dispatch_ops_[&op];
  if (ops.rail == nullptr && ops.node == nullptr) {
    const double copy_bytes = static_cast<double>(op.comm_bytes.count()) / k;
    auto part_op = [&](const char* suffix, double bytes) {
      models::Op o = op;
      o.name = absl::StrCat(op.name, suffix);
      o.comm_bytes = sim::Bytes(static_cast<int64_t>(bytes));
      return &AddStepOp(std::move(o));
    };
    if (nodes > 1) {
      // A token reaches E[distinct nodes] of the N nodes, itself included:
      // the (N - 1) / N the rail all-to-all sends off the rank is the
      // expected copies to other nodes.
      ops.rail =
          part_op("_internode", copy_bytes * DistinctBins(p_.moe_routing, experts, nodes, k));
    }
    if (per_node > 1) {
      // One copy per rank holding one of its experts.
      ops.node = part_op("_nvlink",
                         copy_bytes * DistinctBins(p_.moe_routing, experts, nodes * per_node, k));
    }
  }
  // On every GPU of the stage the rail part, then the node part, each added
  // by the first simulated member of its subgroup.
  for (const bool rail : {true, false}) {
    const models::Op* part = rail ? ops.rail : ops.node;
    if (part == nullptr) continue;
    for (size_t x = 0; x < ctx.gpus->size(); ++x) {
      const int i = (*ctx.gpus)[x];
      const int gpu = plan_.simulated_gpus[i];
      std::vector<int> sub;
      for (const std::vector<int>& node : parts_of[x]) {
        const auto at = std::find(node.begin(), node.end(), gpu);
        if (at == node.end()) continue;
        if (!rail) sub = node;
        for (const std::vector<int>& n : parts_of[x]) {
          if (rail) sub.push_back(n[at - node.begin()]);
        }
        break;
      }
      if (SimulatedMembers(sub).front() != i) continue;
      CLUSTERSIM_RETURN_IF_ERROR(AddChainedCollective(*part, ctx, layer, sub, &GpuLanes::expert));
    }
  }
  return absl::OkStatus();
}

// One collective over `group` on lane `lane` of each simulated member, in
// each member's program order.
absl::Status Builder::AddChainedCollective(const models::Op& op, const Ctx& ctx, int layer,
                                           const std::vector<int>& group,
                                           sim::ResourceId GpuLanes::*lane, Overlap overlap) {
  absl::StatusOr<topology::CollectiveEstimate> est = Estimate(op, ToCollective(op.comm), group);
  if (!est.ok()) return est.status();
  const std::vector<int> members = SimulatedMembers(group);
  if (merge_collectives_ && lane == &GpuLanes::tensor && overlap == Overlap::kNone &&
      members.size() == 1 && CanExtendRun(members[0])) {
    // The GPU's only tensor-parallel member here (the others are folded):
    // the collective would start as the run ends, on a lane nothing else
    // uses, and the next op would start as it ends.
    ExtendRun(members[0], kTensorCommLane, est->time);
    return absl::OkStatus();
  }
  std::vector<sim::ResourceId> lanes;
  for (int j : members) lanes.push_back(gpu_[j].lane.*lane);
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
        After(gpu_[j].last, t);
        gpu_[j].under_next.push_back(t);
        break;
      case Overlap::kUnderPrevious:  // started with the last op; the next op waits
        After(gpu_[j].before_last, t);
        gpu_[j].waits.push_back(t);
        break;
    }
  }
  return absl::OkStatus();
}

}  // namespace clustersim::strategies::step_builder_internal
