// Pipeline passes: each action of a stage's schedule (a micro-batch's forward,
// backward, or its input / weight halves) as the ops of its layers on every
// GPU of the stage, the host launches they wait for, and the activations and
// gradients sent between stages.
#include <algorithm>
#include <utility>
#include <vector>

#include "sim/check.h"
#include "strategies/step_builder_internal.h"

namespace clustersim::strategies::step_builder_internal {
namespace {

const models::Op& Deref(const models::Op& op) { return op; }
const models::Op& Deref(const models::Op* op) { return *op; }

}  // namespace

// Emits one pipeline action on every GPU of `stage`.
absl::Status Builder::AddAction(int stage, const PipelineAction& a,
                                const std::vector<std::vector<int>>& tp_groups) {
  const int pos = Position(stage, a.chunk);
  const bool first_pos = pos == 0;
  const bool last_pos = pos == NumPositions() - 1;
  const auto [first_layer, end_layer] = p_.LayersOf(pos, in_.model->num_layers);
  const std::vector<int>& gpus = stage_gpus_[stage];
  for (int i : gpus) gpu_[i].action_first = kNone;
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
        CLUSTERSIM_RETURN_IF_ERROR(AddOps(w.embedding_forward, ctx, -1));
      }
      for (int l = first_layer; l < end_layer; ++l) {
        if (gathers) WaitForParameters(gpus, l + 1);
        CLUSTERSIM_RETURN_IF_ERROR(AddOps(w.LayerForwardOps(l), ctx, l));
        OffloadAfterForward(ctx, l);
      }
      if (last_pos) {
        if (gathers) WaitForParameters(gpus, L + 1);
        CLUSTERSIM_RETURN_IF_ERROR(AddOps(w.head_forward, ctx, L));
        if (!w.mtp_forward.empty()) CLUSTERSIM_RETURN_IF_ERROR(AddOps(w.mtp_forward, ctx, L));
      }
      break;
    }
    case Pass::kBackward:
    case Pass::kBackwardInput: {
      ctx.phase = Phase::kBackward;
      const bool whole = a.pass == Pass::kBackward;
      const int L = in_.model->num_layers;
      if (last_pos) {
        CLUSTERSIM_RETURN_IF_ERROR(whole ? AddOps(w.head_backward, ctx, L)
                                           : AddOps(head_input_grad_, ctx, L));
        // Multi-token prediction: its whole backward, weight gradients too.
        if (!w.mtp_backward.empty()) CLUSTERSIM_RETURN_IF_ERROR(AddOps(w.mtp_backward, ctx, L));
        if (whole && final_mb) MarkGradDone(gpus, L + 1);
        if (zero3_ && whole) CLUSTERSIM_RETURN_IF_ERROR(ReduceGradients(ctx, L));
      }
      for (int l = end_layer - 1; l >= first_layer; --l) {
        ReloadBeforeBackward(ctx, l);
        CLUSTERSIM_RETURN_IF_ERROR(
            whole
                ? AddLayerBackward(l, l - first_layer, ctx)
                : AddOps(layer_input_grad_[w.OpListIndex(l)], ctx, l));
        if (whole && final_mb) MarkGradDone(gpus, l + 1);
        if (zero3_ && whole) CLUSTERSIM_RETURN_IF_ERROR(ReduceGradients(ctx, l));
      }
      if (first_pos) {
        CLUSTERSIM_RETURN_IF_ERROR(AddOps(w.embedding_backward, ctx, -1));
        if (final_mb) MarkGradDone(gpus, 0);
        if (zero3_) CLUSTERSIM_RETURN_IF_ERROR(ReduceGradients(ctx, -1));
      }
      break;
    }
    case Pass::kBackwardWeight: {
      ctx.phase = Phase::kBackwardWeight;
      const int L = in_.model->num_layers;
      if (last_pos) {
        CLUSTERSIM_RETURN_IF_ERROR(AddOps(head_weight_grad_, ctx, L));
        if (final_mb) MarkGradDone(gpus, L + 1);
        if (zero3_) CLUSTERSIM_RETURN_IF_ERROR(ReduceGradients(ctx, L));
      }
      for (int l = end_layer - 1; l >= first_layer; --l) {
        CLUSTERSIM_RETURN_IF_ERROR(
            AddOps(layer_weight_grad_[w.OpListIndex(l)], ctx, l));
        if (final_mb) MarkGradDone(gpus, l + 1);
        if (zero3_) CLUSTERSIM_RETURN_IF_ERROR(ReduceGradients(ctx, l));
      }
      break;
    }
  }
  return FinishAction(stage, a, ctx);
}

// The end of action `a` on every GPU of `stage`: its FP8 amax reduction, the
// wait of its first task for the neighbouring stage's send, and its own send.
absl::Status Builder::FinishAction(int stage, const PipelineAction& a, const Ctx& ctx) {
  const int pos = Position(stage, a.chunk);
  const bool first_pos = pos == 0;
  const bool last_pos = pos == NumPositions() - 1;
  const auto [first_layer, end_layer] = p_.LayersOf(pos, in_.model->num_layers);
  const std::vector<int>& gpus = stage_gpus_[stage];
  if (a.pass != Pass::kBackwardWeight && first_layer < end_layer) {
    CLUSTERSIM_RETURN_IF_ERROR(AddAmaxReduction(ctx, a.pass == Pass::kForward));
  }
  // The first task of this action on each GPU waits for the activation (or
  // gradient) from the neighbouring stage; the last one sends its own on.
  if (a.pass == Pass::kForward) {
    if (!first_pos) {
      for (int i : gpus) {
        pending_inputs_.push_back({{i, pos, true, a.microbatch}, gpu_[i].action_first});
      }
    }
    if (!last_pos) {
      CLUSTERSIM_RETURN_IF_ERROR(Send(stage, pos + 1, /*forward=*/true, a.microbatch));
    }
  } else if (a.pass != Pass::kBackwardWeight) {
    if (!last_pos) {
      for (int i : gpus) {
        pending_inputs_.push_back({{i, pos, false, a.microbatch}, gpu_[i].action_first});
      }
    }
    if (!first_pos) {
      CLUSTERSIM_RETURN_IF_ERROR(Send(stage, pos - 1, /*forward=*/false, a.microbatch));
    }
  }
  return absl::OkStatus();
}

// The whole backward of `layer`, the `in_chunk`-th (from 0) of its model
// chunk: block recompute replays the forward of only the first
// recompute_num_layers layers of each chunk; the others run their backward
// without the ops marked recompute.
absl::Status Builder::AddLayerBackward(int layer, int in_chunk, const Ctx& ctx) {
  const models::Workload& w = plan_.workload;
  if (p_.recompute != models::Recompute::kFull || p_.ReplaysInChunk(in_chunk)) {
    return AddOps(w.LayerBackwardOps(layer), ctx, layer);
  }
  return AddOps(layer_kept_backward_[w.OpListIndex(layer)], ctx, layer);
}

// A CUDA graph cannot hold an op that runs after a host synchronisation of
// its op list: the host reads something (the dropless MoE dispatcher's token
// counts, an eager host copy) before it can launch that op. Checked once per
// op list of the workload before any pass is added; only forward lists hold
// such points, and the backward halves and recompute lists are their subsets.
absl::Status Builder::CheckGraphCaptures() const {
  const models::CudaGraphScopes& graphs = in_.cuda_graphs;
  if (!graphs.any()) return absl::OkStatus();
  const models::Workload& w = plan_.workload;
  auto check = [&](const std::vector<models::Op>& ops) -> absl::Status {
    bool synced = false;
    for (const models::Op& op : ops) {
      synced = synced || op.host_sync_before;
      if (synced && graphs.Captures(op.graph_scope)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "training.cuda_graph_scope captures \"", op.name,
            "\", which runs after a host synchronisation (the dropless MoE dispatcher's token "
            "counts, or an eager host copy); leave its scope out, or pad the experts' input "
            "(parallelism.moe_pad_expert_input_to_capacity)"));
      }
    }
    return absl::OkStatus();
  };
  for (const std::vector<models::Op>* ops :
       {&w.embedding_forward, &w.embedding_backward, &w.head_forward, &w.head_backward,
        &w.mtp_forward, &w.mtp_backward}) {
    CLUSTERSIM_RETURN_IF_ERROR(check(*ops));
  }
  for (int i = 0; i < models::Workload::kOpLists; ++i) {
    CLUSTERSIM_RETURN_IF_ERROR(check(w.ForwardList(i)));
    CLUSTERSIM_RETURN_IF_ERROR(check(w.BackwardList(i)));
  }
  return absl::OkStatus();
}

// The ops of one op list (a layer's, the head's or the embedding's pass) on
// every GPU of `ctx`, each by kind: collectives over their group, context
// ring attention, compute.
// [begin, end): a slice of the list (AddMergedPair), whose ops the host
// launches when the slice is added, as Megatron-Core issues a merged pair's
// parts in program order; the sync points stay those of the whole list.
template <typename OpList>
absl::Status Builder::AddOps(const OpList& ops, const Ctx& ctx, int layer, size_t begin,
                             size_t end) {
  end = std::min(end, ops.size());
  for (int i : *ctx.gpus) gpu_[i].mergeable = kNone;  // runs stay inside one op list
  // The host stops at every op marked host_sync_before (a mixture-of-experts
  // dispatcher's device-to-host copy, and the like): the ops before the first
  // such point launch as one batch, the ones after it one by one, each sync
  // point once the GPU has reached it.
  auto syncs_before = [&](size_t k) { return Deref(ops[k]).host_sync_before; };
  size_t sync = ops.size();
  for (size_t k = 0; k < ops.size(); ++k) {
    if (syncs_before(k)) {
      sync = k;
      break;
    }
  }
  // Host launches of op k: its own (Op::HostLaunches), or under a CUDA graph one launch for
  // each run of captured ops (the graph's replay) and none for the others.
  const models::CudaGraphScopes& graphs = in_.cuda_graphs;
  auto captured = [&](size_t k) { return graphs.Captures(Deref(ops[k]).graph_scope); };
  auto launches = [&](size_t k) -> int {
    if (!captured(k)) return Deref(ops[k]).HostLaunches();
    return k > begin && captured(k - 1) ? 0 : 1;
  };
  size_t kernels = 0;  // an eager composite op launches several
  for (size_t k = begin; k < std::min(sync, end); ++k) kernels += launches(k);
  Launch(kernels, ctx, layer);
  if (begin == 0) {
    // A deferred weight gradient (zero-bubble W pass) needs activations and
    // output gradients, not the weights: no gather.
    if (zero3_ && ctx.phase != Phase::kBackwardWeight) {
      CLUSTERSIM_RETURN_IF_ERROR(GatherParameters(ctx, layer));
    }
  }
  for (size_t k = begin; k < end; ++k) {
    const models::Op& op = Deref(ops[k]);
    if (k >= sync) LaunchAfterSync(ctx, layer, /*at_sync=*/syncs_before(k), launches(k));
    if (op.kind == models::OpKind::kCollective && op.group == models::CommGroup::kExpert) {
      CLUSTERSIM_RETURN_IF_ERROR(AddExpertCollective(op, ctx, layer));
    } else if (op.kind == models::OpKind::kCollective) {
      const models::Op* prev = k > 0 ? &Deref(ops[k - 1]) : nullptr;
      const models::Op* next = k + 1 < ops.size() ? &Deref(ops[k + 1]) : nullptr;
      const Overlap overlap = TensorOverlap(op, layer, prev, next);
      CLUSTERSIM_RETURN_IF_ERROR(AddTensorCollective(op, ctx, layer, overlap));
      // Transformer Engine's ring-exchange overlap (initialize_ub default
      // for qkv/fc1 fprop and proj/fc2 dgrad: num_splits = tp size) runs
      // the GEMM that consumes the gathered input as tp row chunks, one
      // per rank's slice as it arrives, on kUserbufferComputeStreams.
      if (overlap == Overlap::kUnderNext && op.gathers_next_input) {
        AddCompute(*next, ctx, layer, p_.tensor_parallel);
        ++k;
      }
    } else if (op.kind == models::OpKind::kAttention && plan_.workload.context_ring) {
      CLUSTERSIM_RETURN_IF_ERROR(AddRingAttention(op, ctx, layer));
    } else {
      AddCompute(op, ctx, layer);
    }
  }
  return absl::OkStatus();
}

// The host launches a layer's kernels (one pass, one micro-batch) as one
// task; the first of those ops on the GPU waits for it.
void Builder::Launch(size_t num_ops, const Ctx& ctx, int layer) {
  if (in_.host_overhead_per_op <= sim::Duration::Zero()) return;
  if (launch_op_ == nullptr) {
    models::Op op;
    op.name = "host_launch";
    op.kind = models::OpKind::kMemoryBound;
    launch_op_ = &AddStepOp(std::move(op));
  }
  if (num_ops == 0) return;
  TaskInfo info{.op = launch_op_, .phase = ctx.phase, .microbatch = ctx.microbatch,
                .layer = layer, .stage = ctx.stage, .chunk = ctx.chunk};
  const uint32_t tag = NewInfo(info);
  const sim::Duration d = in_.host_overhead_per_op * static_cast<int64_t>(num_ops);
  for (int i : *ctx.gpus) {
    gpu_[i].waits.push_back(plan_.graph.AddTask(gpu_[i].lane.host, d, tag));
  }
}

// Megatron-Core's MoEAlltoAllTokenDispatcher, dropless, copies the token
// counts per expert to the host and synchronises before the expert-parallel
// all-to-all ("before_ep_alltoall"; "before_finish" without ep), since the
// all-to-all splits and the grouped GEMM's group sizes are host arguments.
// The host cannot run ahead past that point: it launches the next op only once
// the GPU has reached it (`at_sync`), and each later op of the pass waits for
// its own launch (`kernels` host launches: a grouped expert GEMM launches one
// per local expert), so the GPU idles where its kernels are shorter than a
// launch.
void Builder::LaunchAfterSync(const Ctx& ctx, int layer, bool at_sync, int kernels) {
  if (in_.host_overhead_per_op <= sim::Duration::Zero()) return;
  Launch(0, ctx, layer);  // creates launch_op_
  TaskInfo info{.op = launch_op_, .phase = ctx.phase, .microbatch = ctx.microbatch,
                .layer = layer, .stage = ctx.stage, .chunk = ctx.chunk};
  const uint32_t tag = NewInfo(info);
  for (int i : *ctx.gpus) {
    const sim::TaskId t = plan_.graph.AddTask(
        gpu_[i].lane.host, in_.host_overhead_per_op * static_cast<int64_t>(kernels), tag);
    if (at_sync) After(gpu_[i].last, t);
    gpu_[i].waits.push_back(t);
  }
}

// Activations (forward) or their gradients (backward) crossing a stage
// boundary: b·s·h values, sharded over tp when sequence parallel (Megatron
// sends each rank's sequence shard). One send per GPU to its peer (same
// tp/cp/dp coordinates) on the neighbouring stage; Megatron's 1F1B waits for
// its p2p ops, so the sender's next compute waits too.
// The values are in the activation dtype, 16-bit under FP8 training: FP8
// exists only inside Transformer Engine's GEMMs, a layer's output is in the
// parameter dtype, and Megatron-Core's p2p buffers take
// TransformerConfig::pipeline_dtype (pipeline_parallel/p2p_communication.py;
// Megatron-Bridge's recipes set torch.bfloat16), as the workload's
// activations do (models/workload_ops.cc, Dims::act).
absl::Status Builder::Send(int stage, int to_pos, bool forward, int mb) {
  const int to_stage = StageChunkOf(to_pos).first;
  int64_t bytes = int64_t{p_.micro_batch_size} * in_.model->seq_length /
                  p_.context_parallel * in_.model->hidden_size *
                  std::max(2, models::BytesPerElement(p_.precision));
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
      Chain(i, plan_.graph.AddTask(gpu_[i].lane.host, in_.pipeline_p2p_host, NewInfo(engine)));
    }
    const sim::TaskId t = AddCollectiveTask({gpu_[i].lane.pipeline}, *est, info,
                                            topology::Collective::kSendRecv,
                                            {from_gpu, to_gpu}, op.comm_bytes);
    Chain(i, t);
    sends_[{local_of_[to_gpu], to_pos, forward, mb}] = t;
  }
  return absl::OkStatus();
}

// The host work of one blocking pipeline send instruction
// (StepInputs::pipeline_p2p_host), owned by step_ops.
const models::Op& Builder::PipelineEngineOp() {
  if (pipeline_engine_op_ == nullptr) {
    models::Op op;
    op.name = "pp_engine_p2p";
    op.kind = models::OpKind::kMemoryBound;
    pipeline_engine_op_ = &AddStepOp(std::move(op));
  }
  return *pipeline_engine_op_;
}

void Builder::MarkGradDone(const std::vector<int>& gpus, int index) {
  for (int i : gpus) gpu_[i].grad_done[index] = gpu_[i].last;
}

// Each action's first task waits for the send that feeds it; every pair is a
// transfer (flow arrows in traces).
void Builder::ResolvePendingInputs() {
  for (const PendingInput& p : pending_inputs_) {
    auto it = sends_.find(p.at);
    SIM_CHECK(it != sends_.end()) << "no send for pipeline position " << p.at.to_pos << " mb "
                                  << p.at.mb;
    After(it->second, p.first);
    plan_.transfers.push_back({it->second, p.first, plan_.simulated_gpus[p.at.gpu],
                               p.at.forward});
  }
}

// AddMergedPair adds slices of op lists as pointers.
template absl::Status Builder::AddOps(const std::vector<const models::Op*>& ops, const Ctx& ctx,
                                      int layer, size_t begin, size_t end);

}  // namespace clustersim::strategies::step_builder_internal
