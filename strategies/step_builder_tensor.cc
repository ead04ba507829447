// Collectives inside a layer's ops: tensor- and sequence-parallel collectives
// (in program order, or under a GEMM with tp_comm_overlap) and the MoE token
// dispatch and combine all-to-alls over the expert-parallel group.
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
// The first simulated member of each group creates its task.
absl::Status Builder::AddExpertCollective(const models::Op& op, const Ctx& ctx, int layer) {
  for (int i : *ctx.gpus) {
    const std::vector<int> group = placement_.ExpertGroup(plan_.simulated_gpus[i]);
    if (SimulatedMembers(group).front() != i) continue;
    CLUSTERSIM_RETURN_IF_ERROR(AddChainedCollective(op, ctx, layer, group, &GpuLanes::expert));
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
