// File: models/cuda_graph.cc
#include "models/cuda_graph.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace clustersim::models {

namespace {

absl::Status Bad(const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("training.cuda_graph_scope: ", why));
}

// A MoE block's op (forward or backward) by its name: the pre-MLP norm and the
// router, the dispatcher's first permutation, or the rest.
GraphScope MoeScopeOf(const Op& op) {
  if (absl::StartsWith(op.name, "layernorm2") || absl::StartsWith(op.name, "router_")) {
    return GraphScope::kMoeRouter;
  }
  if (absl::StartsWith(op.name, "moe_permute")) return GraphScope::kMoePreprocess;
  return GraphScope::kMoe;
}

}  // namespace

bool CudaGraphScopes::Captures(GraphScope scope) const {
  switch (scope) {
    case GraphScope::kNone:
      return full_iteration;
    case GraphScope::kLayer:
      return full_layer || full_iteration;
    case GraphScope::kAttn:
      return attn || full_layer || full_iteration;
    case GraphScope::kMlp:
      return mlp || full_layer || full_iteration;
    case GraphScope::kMoeRouter:
      return moe_router || moe || full_layer || full_iteration;
    case GraphScope::kMoePreprocess:
      return moe_preprocess || moe || full_layer || full_iteration;
    case GraphScope::kMoe:
      return CapturesExperts();
  }
  return false;
}

std::vector<std::string> CudaGraphScopes::Names() const {
  std::vector<std::string> out;
  if (attn) out.push_back("attn");
  if (mlp) out.push_back("mlp");
  if (moe_router) out.push_back("moe_router");
  if (moe_preprocess) out.push_back("moe_preprocess");
  if (moe) out.push_back("moe");
  if (full_layer) out.push_back("full");
  if (full_iteration) out.push_back("full_iteration");
  return out;
}

absl::StatusOr<CudaGraphScopes> ParseCudaGraphScopes(const std::vector<std::string>& names) {
  CudaGraphScopes s;
  for (const std::string& name : names) {
    bool* slot = name == "attn"             ? &s.attn
                 : name == "mlp"            ? &s.mlp
                 : name == "moe_router"     ? &s.moe_router
                 : name == "moe_preprocess" ? &s.moe_preprocess
                 : name == "moe"            ? &s.moe
                 : name == "full"           ? &s.full_layer
                 : name == "full_iteration" ? &s.full_iteration
                                            : nullptr;
    if (slot == nullptr) {
      return Bad(absl::StrCat("\"", name,
                              "\" is not a scope; use attn, mlp, moe_router, moe_preprocess, "
                              "moe, full or full_iteration"));
    }
    if (*slot) return Bad(absl::StrCat("\"", name, "\" is listed twice"));
    *slot = true;
  }
  if ((s.full_layer || s.full_iteration) && names.size() > 1) {
    return Bad("\"full\" and \"full_iteration\" capture everything and take no other scope");
  }
  if (s.moe_preprocess && !s.moe_router) {
    return Bad("\"moe_preprocess\" needs \"moe_router\" (Megatron-Core captures them together)");
  }
  if (s.moe && s.moe_router) return Bad("\"moe\" already holds \"moe_router\"; list one");
  return s;
}

void TagLayerScopes(bool moe, size_t mlp_begin, size_t mlp_end, GraphScope before,
                    GraphScope after, std::vector<Op>* ops) {
  for (size_t i = 0; i < ops->size(); ++i) {
    Op& op = (*ops)[i];
    if (op.graph_scope != GraphScope::kNone) continue;  // a replayed forward op keeps its own
    if (i < mlp_begin) {
      op.graph_scope = before;
    } else if (i >= mlp_end) {
      op.graph_scope = after;
    } else {
      op.graph_scope = moe ? MoeScopeOf(op) : GraphScope::kMlp;
    }
  }
}

}  // namespace clustersim::models
