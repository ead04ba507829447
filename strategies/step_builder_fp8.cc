// FP8 training: the once-per-step cast of the transformer layers' weights to
// FP8 after the optimizer update.
#include <utility>

#include "strategies/step_builder_internal.h"

namespace clustersim::strategies::step_builder_internal {
namespace {

// FP8 weight cast per parameter: read 16-bit (2 B), write FP8 and its
// transpose (1 B each); Transformer Engine's fp8_cast_transpose_fused.
constexpr int64_t kFp8WeightCastBytes = 4;

}  // namespace

// Transformer Engine casts each FP8 GEMM's weight to FP8 (and its transpose,
// for the dgrad GEMM) once per step and caches it for the other
// micro-batches (Megatron-core's forward_step sets is_first_microbatch on the
// first micro-batch only): read the 16-bit weight, write the FP8 copy and its
// transpose, 4 B per parameter of the transformer layers this GPU holds (the
// head and embedding stay 16-bit). The cast of the next step's first
// micro-batch is placed after this step's optimizer update on the compute
// stream and, with the distributed optimizer, after the parameter all-gather
// (`gathered`) it reads; one per step either way. (MoE: the expert parameter
// gather is not waited for.)
void Builder::AddFp8WeightCast(int gpu, sim::TaskId gathered) {
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
                             pc.expert_per_layer / (p_.expert_tp() * p_.expert_parallel);
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
  const sim::TaskId t = plan_.graph.AddTask(gpu_[gpu].lane.compute, OnGpu(gpu, cost.time), NewInfo(info));
  After(gathered, t);
  Chain(gpu, t);
}

}  // namespace clustersim::strategies::step_builder_internal
