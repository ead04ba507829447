// The memory passes a sharded optimizer or FSDP adds around the workload's
// forward and backward lists: DeepSpeed's fp32 gradient accumulation,
// FSDP1's FlatParameter gradient handling, FSDP2's per-parameter copies.
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "models/workload.h"
#include "models/workload_ops.h"

namespace clustersim::models {
namespace workload_internal {
namespace {

// The weights whose gradients a backward list's weight-gradient GEMMs
// produce, plus `extra_weights` (the embedding table's scatter-add); the
// routed experts' only with `experts`.
int64_t ListWeights(const std::vector<Op>& backward, int64_t extra_weights, bool experts = true) {
  int64_t weights = extra_weights;
  for (const Op& op : backward) {
    if (!experts && absl::StartsWith(op.name, "expert_")) continue;
    if (absl::EndsWith(op.name, "_wgrad")) weights += op.batch * op.m * op.n;
  }
  return weights;
}

// A memory pass over the gradients after every micro-batch's backward, as
// `name`: DeepSpeed's BF16_Optimizer (runtime/bf16_optimizer.py), whose
// pipeline engine calls update_hp_grads to convert each bf16 gradient to fp32
// and add it into the fp32 gradient buffer ("grad_accumulate_fp32"), or
// FSDP1's FlatParameter handling (FlatParameterGradBytes, "fsdp_flat_grad").
// Appended to a backward list with the weights that list's gradients cover:
// the weight-gradient GEMMs' outputs, and the embedding table (its
// scatter-add). Norm weights and biases are left out (O(h) against O(h^2)).
void AppendGradPass(const Dims& d, const char* name, double bytes_per_weight,
                    int64_t extra_weights, std::vector<Op>* backward) {
  const int64_t weights = ListWeights(*backward, extra_weights);
  if (weights == 0) return;
  backward->push_back(MemoryBound(d, name, static_cast<int64_t>(bytes_per_weight * weights)));
}

// FSDP2's copy passes (ShardSpec::gather_copy_bytes, grad_copy_bytes) around
// one FSDP unit's forward and backward lists: each pass gathers the unit's
// parameters and copies them out before its first op; the backward then
// copies its gradients into the reduce-scatter input after its last.
void AddPerParameterPasses(const Dims& d, const ShardSpec& s, int64_t extra_weights,
                           std::vector<Op>* forward, std::vector<Op>* backward) {
  const int64_t weights = ListWeights(*backward, extra_weights, s.copy_experts);
  if (weights == 0) return;
  if (s.gather_copy_bytes > 0) {
    const Op copy_out = MemoryBound(d, "fsdp_gather_copy_out",
                                    static_cast<int64_t>(s.gather_copy_bytes * weights));
    forward->insert(forward->begin(), copy_out);
    backward->insert(backward->begin(), copy_out);
  }
  if (s.grad_copy_bytes > 0) {
    backward->push_back(MemoryBound(d, "fsdp_grad_copy_in",
                                    static_cast<int64_t>(s.grad_copy_bytes * weights)));
  }
}

}  // namespace

void AddGradientPasses(const Dims& d, const ShardSpec& s, Workload* w) {
  const std::pair<const char*, double> passes[] = {
      {"grad_accumulate_fp32", s.grad_accumulate_bytes}, {"fsdp_flat_grad", s.flat_grad_bytes}};
  for (const auto& [name, b] : passes) {
    if (b <= 0) continue;
    AppendGradPass(d, name, b, d.v_local * d.h, &w->embedding_backward);
    for (std::vector<Op>* list :
         {&w->layer_backward, &w->dense_layer_backward, &w->head_backward, &w->mtp_backward}) {
      AppendGradPass(d, name, b, 0, list);
    }
    for (std::vector<Op>& list : w->hybrid_backward) {
      if (!list.empty()) AppendGradPass(d, name, b, 0, &list);
    }
  }
  if (s.gather_copy_bytes > 0 || s.grad_copy_bytes > 0) {
    AddPerParameterPasses(d, s, d.v_local * d.h, &w->embedding_forward, &w->embedding_backward);
    AddPerParameterPasses(d, s, 0, &w->layer_forward, &w->layer_backward);
    AddPerParameterPasses(d, s, 0, &w->dense_layer_forward, &w->dense_layer_backward);
    for (int k = 0; k < kHybridKinds; ++k) {
      if (w->hybrid_forward[k].empty()) continue;
      AddPerParameterPasses(d, s, 0, &w->hybrid_forward[k], &w->hybrid_backward[k]);
    }
    AddPerParameterPasses(d, s, 0, &w->head_forward, &w->head_backward);
    AddPerParameterPasses(d, s, 0, &w->mtp_forward, &w->mtp_backward);
  }
}

}  // namespace workload_internal

double PerParameterGatherCopyBytes(int param_bytes) { return 2.0 * param_bytes; }

double PerParameterGradCopyBytes(int reduce_bytes) { return 2.0 + reduce_bytes; }

double FlatParameterGradBytes(int reduce_bytes) {
  const double concat = 2 + 2;
  const double cast = reduce_bytes != 2 ? 2 + reduce_bytes : 0;
  const double predivide = 2.0 * reduce_bytes;
  return concat + cast + predivide;
}

}  // namespace clustersim::models
