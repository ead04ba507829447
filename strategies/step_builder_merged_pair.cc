// Megatron-Core's MoE expert-parallel all-to-all overlap
// (ParallelConfig::overlap_moe_expert_parallel_comm): a forward and a
// backward of different micro-batches on one stage run merged, layer by
// layer, each one's token dispatch / combine all-to-alls on the
// communication stream under the other's compute.
//
// Megatron-Core (megatron/core/models/common/model_chunk_schedule_plan.py,
// TransformerLayerSchedulePlan.run) issues one layer pair as
//   comm stream:    combine_bwd      | dispatch_fwd, dispatch_bwd | combine_fwd
//   compute stream: pre_dispatch_fwd | mlp_bwd, mlp_fwd           | pre_dispatch_bwd
// The builder keeps one chain of work per pass on each GPU of the stage
// (the dependencies of its own micro-batch) and adds the two passes' ops
// alternately: each pass up to and including its next expert all-to-all,
// then the other, starting with the backward. Lanes run their tasks in the
// order they are added (sim/task_graph.h), like CUDA streams, so the compute
// lane runs the other pass's ops while a pass waits for its all-to-all.
#include <utility>
#include <vector>

#include "strategies/step_builder_internal.h"

namespace clustersim::strategies::step_builder_internal {
namespace {

bool IsExpertComm(const models::Op& op) {
  return op.kind == models::OpKind::kCollective && op.group == models::CommGroup::kExpert;
}

}  // namespace

// Whether `a` and `b`, consecutive on one stage, run merged: one forward and
// one whole backward, not of the same micro-batch and chunk (the backward
// needs that forward). Megatron-Core merges the steady state's pairs; the
// warm-up's forwards and the cool-down's backwards have none.
bool Builder::MergesPair(const PipelineAction& a, const PipelineAction& b) const {
  if (!merge_pairs_) return false;
  const bool fb = a.pass == Pass::kForward && b.pass == Pass::kBackward;
  const bool bf = a.pass == Pass::kBackward && b.pass == Pass::kForward;
  if (!fb && !bf) return false;
  return a.microbatch != b.microbatch || a.chunk != b.chunk;
}

// The op lists of one pass of `a` on its stage, in program order, with the
// waits and marks AddAction places around them.
std::vector<Builder::PassUnit> Builder::PassUnits(int stage, const PipelineAction& a) const {
  const int pos = Position(stage, a.chunk);
  const bool first_pos = pos == 0;
  const bool last_pos = pos == NumPositions() - 1;
  const auto [first_layer, end_layer] = p_.LayersOf(pos, in_.model->num_layers);
  const int L = in_.model->num_layers;
  const models::Workload& w = plan_.workload;
  auto pointers = [](const std::vector<models::Op>& ops) {
    std::vector<const models::Op*> out;
    for (const models::Op& op : ops) out.push_back(&op);
    return out;
  };
  std::vector<PassUnit> units;
  if (a.pass == Pass::kForward) {
    // --overlap-param-gather: the first micro-batch's forward waits per layer.
    const bool gathers = overlap_param_gather_ && a.microbatch == 0;
    if (first_pos) {
      units.push_back({pointers(w.embedding_forward), -1, gathers ? 0 : -1, -1});
    }
    for (int l = first_layer; l < end_layer; ++l) {
      units.push_back({pointers(w.LayerForwardOps(l)), l, gathers ? l + 1 : -1, -1});
    }
    if (last_pos) {
      units.push_back({pointers(w.head_forward), L, gathers ? L + 1 : -1, -1});
      if (!w.mtp_forward.empty()) units.push_back({pointers(w.mtp_forward), L, -1, -1});
    }
    return units;
  }
  const bool final_mb = a.microbatch == p_.num_microbatches() - 1;
  if (last_pos) {
    units.push_back({pointers(w.head_backward), L, -1, -1});
    if (!w.mtp_backward.empty()) units.push_back({pointers(w.mtp_backward), L, -1, -1});
    units.back().grad_done = final_mb ? L + 1 : -1;
  }
  for (int l = end_layer - 1; l >= first_layer; --l) {
    // No full recompute here (ValidateParallelConfig): the whole backward.
    units.push_back({pointers(w.LayerBackwardOps(l)), l, -1, final_mb ? l + 1 : -1});
  }
  if (first_pos) {
    units.push_back({pointers(w.embedding_backward), -1, -1, final_mb ? 0 : -1});
  }
  return units;
}

// Swaps GPU i's chain of work with `other`.
void Builder::SwapChain(int i, ChainState& other) {
  std::swap(static_cast<ChainState&>(gpu_[i]), other);
}

// Emits actions `a` and `b` of `stage` merged (MergesPair).
absl::Status Builder::AddMergedPair(int stage, const PipelineAction& a, const PipelineAction& b,
                                    const std::vector<std::vector<int>>& tp_groups) {
  const std::vector<int>& gpus = stage_gpus_[stage];
  // Index 0 the backward, 1 the forward: Megatron-Core issues the backward's
  // combine first.
  const PipelineAction* act[2] = {a.pass == Pass::kBackward ? &a : &b,
                                  a.pass == Pass::kBackward ? &b : &a};
  const std::vector<PassUnit> units[2] = {PassUnits(stage, *act[0]), PassUnits(stage, *act[1])};
  std::vector<Ctx> ctx;
  for (const PipelineAction* x : act) {
    ctx.push_back(Ctx{stage, x->chunk, x->microbatch, &gpus, &tp_groups,
                      x->pass == Pass::kForward ? Phase::kForward : Phase::kBackward});
  }
  // Both chains start where the GPU's chain stands; the backward's is active.
  std::vector<ChainState> idle(gpus.size());
  for (size_t x = 0; x < gpus.size(); ++x) {
    GpuState& g = gpu_[gpus[x]];
    g.action_first = kNone;
    idle[x] = static_cast<const ChainState&>(g);
  }
  size_t unit[2] = {0, 0}, op[2] = {0, 0};
  int active = 0;
  auto switch_chains = [&] {
    for (size_t x = 0; x < gpus.size(); ++x) SwapChain(gpus[x], idle[x]);
    active = 1 - active;
  };
  // Adds pass k's ops up to and including its next expert all-to-all.
  auto advance = [&](int k) -> absl::Status {
    while (unit[k] < units[k].size()) {
      const PassUnit& u = units[k][unit[k]];
      if (op[k] == 0 && u.wait_params >= 0) WaitForParameters(gpus, u.wait_params);
      size_t end = op[k];
      while (end < u.ops.size() && !IsExpertComm(*u.ops[end])) ++end;
      const bool comm = end < u.ops.size();
      if (comm) ++end;
      CLUSTERSIM_RETURN_IF_ERROR(AddOps(u.ops, ctx[k], u.layer, op[k], end));
      op[k] = end;
      if (op[k] == u.ops.size()) {
        if (u.grad_done >= 0) MarkGradDone(gpus, u.grad_done);
        ++unit[k];
        op[k] = 0;
      }
      if (comm) return absl::OkStatus();
    }
    return absl::OkStatus();
  };
  auto done = [&](int k) { return unit[k] == units[k].size(); };
  while (!done(0) || !done(1)) {
    if (!done(active)) CLUSTERSIM_RETURN_IF_ERROR(advance(active));
    if (!done(1 - active)) switch_chains();
  }
  // Each pass's amax reduction and stage-to-stage traffic on its own chain.
  for (int k : {active, 1 - active}) {
    if (k != active) switch_chains();
    CLUSTERSIM_RETURN_IF_ERROR(FinishAction(stage, *act[k], ctx[k]));
  }
  // The next action waits for both chains.
  for (size_t x = 0; x < gpus.size(); ++x) {
    GpuState& g = gpu_[gpus[x]];
    const ChainState& o = idle[x];
    if (o.last != kNone) g.waits.push_back(o.last);
    g.waits.insert(g.waits.end(), o.waits.begin(), o.waits.end());
    g.waits.insert(g.waits.end(), o.under_next.begin(), o.under_next.end());
    g.mergeable = kNone;
  }
  return absl::OkStatus();
}

}  // namespace clustersim::strategies::step_builder_internal
