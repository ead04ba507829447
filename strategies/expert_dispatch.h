// File: strategies/expert_dispatch.h
//
// How a mixture-of-experts layer moves its tokens to the expert-parallel
// ranks and back (parallelism.moe_token_dispatcher):
//   - alltoall: Megatron-Core's all-to-all token dispatcher
//     (MoEAlltoAllTokenDispatcher): each token is permuted into one copy per
//     selected expert and the copies are all-to-all'ed over the expert group,
//     so a token crosses the network once per expert it picked.
//   - deepep / hybridep: Megatron-Core's flex dispatcher
//     (--moe-token-dispatcher-type flex, --moe-flex-dispatcher-backend) with
//     DeepEP's normal kernels or HybridEP. A token is sent once to every
//     other node (NVLink domain) holding one of its experts, over the
//     scale-out network to the rank of the same local index there, and that
//     rank forwards it over NVLink to the ranks of the node holding its
//     experts, once per rank.
// The step builder (step_builder_tensor.cc) costs deepep and hybridep alike,
// as an all-to-all over each rail of the expert group (one rank per node)
// followed by one over the group's ranks on a node, with the bytes the
// routing implies (DistinctBins: by default experts picked uniformly,
// balanced routing; parallelism.moe_routing "round-robin" for a gate that
// hands each token k neighbouring experts). DeepEP pipelines the two;
// costing them one after the other counts the shorter (usually the NVLink
// part) twice.
//
// Example:
//   absl::StatusOr<MoeDispatcher> d = ParseMoeDispatcher("deepep");
//   double nodes = ExpectedDistinct(/*experts=*/256, /*bins=*/8, /*top_k=*/8);  // 5.29
#ifndef CLUSTERSIM_STRATEGIES_EXPERT_DISPATCH_H_
#define CLUSTERSIM_STRATEGIES_EXPERT_DISPATCH_H_

#include <string_view>

#include "absl/status/statusor.h"

namespace clustersim::strategies {

enum class MoeDispatcher { kAllToAll, kDeepEp, kHybridEp };

// Which experts a token picks (parallelism.moe_routing): kUniform, k distinct
// experts drawn uniformly; kRoundRobin, token t picks experts (t·k + j) mod E
// for j < k (NeMo AutoModel's FakeBalancedGate: torch.arange(tokens·k) % E,
// nemo_automodel/components/moe/layers.py at 89e3a9fdd and e458120124).
enum class MoeRouting { kUniform, kRoundRobin };

std::string_view MoeRoutingName(MoeRouting r);

// InvalidArgument naming the valid values for an unknown name.
absl::StatusOr<MoeRouting> ParseMoeRouting(std::string_view name);

std::string_view MoeDispatcherName(MoeDispatcher d);

// InvalidArgument naming the valid values for an unknown name.
absl::StatusOr<MoeDispatcher> ParseMoeDispatcher(std::string_view name);

// Expected number of distinct bins (ranks, nodes) that `top_k` distinct
// experts, drawn uniformly from `experts` spread evenly over `bins` bins,
// fall into: bins x (1 - C(experts - experts/bins, top_k) / C(experts, top_k)).
// REQUIRES: bins divides experts, 1 <= top_k <= experts.
double ExpectedDistinct(int experts, int bins, int top_k);

// Mean number of distinct bins that round-robin routing's k neighbouring
// experts (t·k + j) mod E, j < k, fall into, over the tokens t of one period
// of E / gcd(E, k) tokens (every later token repeats one of them). With
// Qwen3-30B-A3B's 128 experts, top-8, on 8 ranks: 1 (a token's 8 experts are
// inside one rank's 16).
// REQUIRES: bins divides experts, 1 <= top_k <= experts.
double RoundRobinDistinct(int experts, int bins, int top_k);

// The distinct bins a token's experts fall into under `routing`.
double DistinctBins(MoeRouting routing, int experts, int bins, int top_k);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_EXPERT_DISPATCH_H_
