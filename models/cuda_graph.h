// File: models/cuda_graph.h
//
// CUDA graph capture in Megatron-Core training (training.cuda_graph_scope):
// which parts of a transformer layer replay from a captured graph, so that
// the host launches them as one graph instead of kernel by kernel.
//
// Scopes, as Megatron-Core names them (transformer_config.py cuda_graph_scope;
// the capture in transformer_layer.py _te_cuda_graph_capture and
// moe/moe_layer.py, Megatron-LM 0d8e0714, the pin of Megatron-Bridge v0.2.0):
//   "attn"           input norm through the attention block's residual add;
//   "mlp"            a dense layer's MLP block (norm to residual add);
//   "moe_router"     a MoE layer's pre-MLP norm and router;
//   "moe_preprocess" with moe_router, the dispatcher's preprocessing (the
//                    first permutation); the dispatch all-to-all, the
//                    experts and the combine stay eager;
//   "moe"            the whole MoE block (drop-and-pad MoE only);
//   "full"           the whole layer (Megatron-Core 0.14's enable_cuda_graph
//                    with cuda_graph_scope "full", the per-layer default);
//   "full_iteration" every forward and backward op of the step (the local
//                    implementation's whole-iteration graph).
// Forward and backward alike: Transformer Engine's make_graphed_callables and
// Megatron-Core's local CudaGraphManager capture both passes.
//
// Example:
//   absl::StatusOr<CudaGraphScopes> s = ParseCudaGraphScopes({"attn", "moe_router"});
//   if (s->Captures(op.graph_scope)) { ... }
#ifndef CLUSTERSIM_MODELS_CUDA_GRAPH_H_
#define CLUSTERSIM_MODELS_CUDA_GRAPH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/workload.h"

namespace clustersim::models {

struct CudaGraphScopes {
  bool attn = false, mlp = false, moe_router = false, moe_preprocess = false, moe = false;
  bool full_layer = false, full_iteration = false;

  bool any() const {
    return attn || mlp || moe_router || moe_preprocess || moe || full_layer || full_iteration;
  }
  // Whether an op of `scope` replays from a graph.
  bool Captures(GraphScope scope) const;
  // Whether a MoE layer's dispatch and experts are captured ("moe", "full",
  // "full_iteration"): the dispatcher may not synchronise with the host.
  bool CapturesExperts() const { return moe || full_layer || full_iteration; }
  std::vector<std::string> Names() const;  // in the order of the file comment
};

// Parses training.cuda_graph_scope. InvalidArgument naming the field on an
// unknown or repeated scope, on "full" or "full_iteration" with another scope,
// on "moe_preprocess" without "moe_router", and on "moe" with "moe_router"
// (Megatron-Core's own checks).
absl::StatusOr<CudaGraphScopes> ParseCudaGraphScopes(const std::vector<std::string>& names);

// Tags the ops of one layer list that have no scope yet: [0, mlp_begin) with
// `before`, [mlp_end, size) with `after`, and the MLP block in between as
// kMlp (dense) or, in a MoE layer, kMoeRouter (pre-MLP norm, router),
// kMoePreprocess (the first permutation) and kMoe (the rest).
void TagLayerScopes(bool moe, size_t mlp_begin, size_t mlp_end, GraphScope before,
                    GraphScope after, std::vector<Op>* ops);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_CUDA_GRAPH_H_
