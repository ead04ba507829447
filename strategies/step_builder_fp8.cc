// FP8 training: the once-per-step cast of the transformer layers' weights to
// FP8 after the optimizer update, and Transformer Engine's delayed-scaling
// amax reductions after each model chunk's forward and backward.
#include <algorithm>
#include <utility>
#include <vector>

#include "strategies/step_builder_internal.h"

namespace clustersim::strategies::step_builder_internal {
namespace {

// FP8 tensors whose amax each FP8 GEMM records: input, weight and output in
// the forward, the output gradient and the input gradient in the backward
// (Transformer Engine v1.13, transformer_engine/pytorch/module/base.py: a
// Linear's fp8_meta "scaling_fwd" holds 3 entries and "scaling_bwd" 2;
// LayerNormMLP's two GEMMs hold 6 and 4). Each amax is an fp32.
constexpr int64_t kForwardAmaxesPerGemm = 3;
constexpr int64_t kBackwardAmaxesPerGemm = 2;
constexpr int64_t kAmaxBytes = 4;

}  // namespace

// Transformer Engine casts each FP8 GEMM's weight to FP8 (and its transpose,
// for the dgrad GEMM) once per step and caches it for the other
// micro-batches (Megatron-core's forward_step sets is_first_microbatch on the
// first micro-batch only; TE v2.9 module/linear.py refreshes the cached
// workspace only then, under every recipe): the recipe's cast bytes
// (models::Fp8WeightCastBytesPerElement: 4 delayed, 6 current, 4 + 2/32 MXFP8,
// 10 torchao rowwise, which recasts every micro-batch, costed once too, 5.125
// NVFP4's 2D-block quantize) per
// parameter of the transformer layers this GPU holds (the head and embedding
// stay 16-bit). The cast of the next step's first
// micro-batch is placed after this step's optimizer update on the compute
// stream and, with the distributed optimizer, after the parameter all-gather
// (`gathered`) it reads; one per step either way. (MoE: the expert parameter
// gather is not waited for.)
void Builder::AddFp8WeightCast(int gpu, sim::TaskId gathered) {
  if (p_.precision != models::Dtype::kFp8 && p_.precision != models::Dtype::kFp4) return;
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
                             pc.expert_per_layer / (p_.expert_tp() * p_.expert_parallel);
    models::Op cast;
    cast.name = "fp8_weight_cast";
    cast.kind = models::OpKind::kMemoryBound;
    cast.dtype = models::Dtype::kBf16;
    const double per_element = models::Fp8WeightCastBytesPerElement(p_.fp8_recipe);
    cast.bytes = sim::Bytes(static_cast<int64_t>(layers * per_layer * per_element));
    slot = &AddStepOp(std::move(cast));
  }
  const models::OpCost cost = in_.kernels->Cost(*slot);
  TaskInfo info{.op = slot, .phase = Phase::kOptimizer, .stage = c.pp,
                .efficiency = cost.efficiency, .source = cost.source};
  const sim::TaskId t = plan_.graph.AddTask(gpu_[gpu].lane.compute, OnGpu(gpu, cost.time), NewInfo(info));
  After(gathered, t);
  Chain(gpu, t);
}

// The all-reduce of one amax reduction on `stage`'s GPUs (AddAmaxReduction):
// Transformer Engine concatenates the amaxes of every FP8 module of the
// autocast's buffer, which holds all the GPU's transformer layers (every model
// chunk's), into one tensor (FP8GlobalStateManager.reduce_and_update_fp8_tensors),
// so its size is the GPU's FP8 GEMMs times the amaxes each records.
const models::Op& Builder::AmaxReductionOp(int stage, bool forward) {
  const models::Op*& slot = amax_ops_[{stage, forward}];
  if (slot != nullptr) return *slot;
  int64_t gemms = 0;
  for (int chunk = 0; chunk < p_.virtual_pipeline; ++chunk) {
    const auto [begin, end] = p_.LayersOf(Position(stage, chunk), in_.model->num_layers);
    for (int l = begin; l < end; ++l) {
      for (const models::Op& op : plan_.workload.LayerForwardOps(l)) {
        if (op.IsFp8Gemm()) ++gemms;
      }
    }
  }
  models::Op op;
  op.name = forward ? "fp8_amax_allreduce_fwd" : "fp8_amax_allreduce_bwd";
  op.kind = models::OpKind::kCollective;
  op.group = models::CommGroup::kData;
  op.comm = models::CommKind::kAllReduce;
  op.comm_bytes = sim::Bytes(
      std::max<int64_t>(1, gemms) * (forward ? kForwardAmaxesPerGemm : kBackwardAmaxesPerGemm) *
      kAmaxBytes);
  slot = &AddStepOp(std::move(op));
  return *slot;
}

// Transformer Engine's delayed scaling inside Megatron-Core
// (StepInputs::fp8_amax_reduction). Megatron wraps each model chunk's
// transformer block in fp8_autocast with the amax reduction group
// (megatron/core/transformer/transformer_block.py at core_v0.10.0:
// parallel_state.get_amax_reduction_group(with_context_parallel=True), the
// tensor + data + context parallel ranks of the stage). On the autocast's exit
// after the chunk's forward, and in the backward of its first FP8 module (the
// chunk's last backward op), Transformer Engine all-reduces the amaxes with
// MAX over that group, async_op=False, so the compute stream waits for every
// rank of the stage to arrive (transformer_engine/pytorch/fp8.py at v1.13,
// fp8_autocast_exit and reduce_and_update_fp8_tensors). One blocking
// all-reduce on the stage's GPUs per model chunk, micro-batch and direction;
// none over a group of one. The fused scale update that follows is one small
// kernel and is not modelled. Only delayed scaling keeps amax histories: under
// current scaling and MXFP8 the autocast's reduction is a no-op (TE v2.9
// pytorch/quantization.py autocast_exit and reduce_and_update_fp8_tensors,
// "delayed scaling only function").
absl::Status Builder::AddAmaxReduction(const Ctx& ctx, bool forward) {
  if (!in_.fp8_amax_reduction || p_.precision != models::Dtype::kFp8 ||
      p_.fp8_recipe != models::Fp8Recipe::kDelayed) {
    return absl::OkStatus();
  }
  if (p_.tensor_parallel * p_.data_parallel * p_.context_parallel == 1) return absl::OkStatus();
  const std::vector<int>& gpus = *ctx.gpus;
  if (gpus.empty()) return absl::OkStatus();
  const std::vector<int> group = placement_.StageGroup(plan_.simulated_gpus[gpus.front()]);
  const models::Op& op = AmaxReductionOp(ctx.stage, forward);
  absl::StatusOr<topology::CollectiveEstimate> est =
      Estimate(op, topology::Collective::kAllReduce, group);
  if (!est.ok()) return est.status();
  std::vector<sim::ResourceId> lanes;
  for (int i : gpus) lanes.push_back(gpu_[i].lane.compute);
  TaskInfo info{.op = &op, .phase = ctx.phase, .microbatch = ctx.microbatch,
                .stage = ctx.stage, .chunk = ctx.chunk, .is_collective = true,
                .algorithm = est->algorithm, .busbw_gbs = est->busbw_gbs,
                .group_size = static_cast<int>(group.size())};
  const sim::TaskId t = AddCollectiveTask(lanes, *est, info, topology::Collective::kAllReduce,
                                          group, op.comm_bytes);
  for (int i : gpus) Chain(i, t);
  return absl::OkStatus();
}

}  // namespace clustersim::strategies::step_builder_internal
