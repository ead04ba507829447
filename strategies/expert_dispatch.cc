#include "strategies/expert_dispatch.h"

#include <cstdint>
#include <numeric>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "sim/check.h"

namespace clustersim::strategies {

std::string_view MoeDispatcherName(MoeDispatcher d) {
  switch (d) {
    case MoeDispatcher::kAllToAll:
      return "alltoall";
    case MoeDispatcher::kDeepEp:
      return "deepep";
    case MoeDispatcher::kHybridEp:
      return "hybridep";
  }
  return "?";
}

absl::StatusOr<MoeDispatcher> ParseMoeDispatcher(std::string_view name) {
  for (MoeDispatcher d :
       {MoeDispatcher::kAllToAll, MoeDispatcher::kDeepEp, MoeDispatcher::kHybridEp}) {
    if (MoeDispatcherName(d) == name) return d;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown MoE token dispatcher \"",
                                                 std::string(name),
                                                 "\"; use alltoall, deepep or hybridep"));
}

std::string_view MoeRoutingName(MoeRouting r) {
  switch (r) {
    case MoeRouting::kUniform:
      return "uniform";
    case MoeRouting::kRoundRobin:
      return "round-robin";
  }
  return "?";
}

absl::StatusOr<MoeRouting> ParseMoeRouting(std::string_view name) {
  for (MoeRouting r : {MoeRouting::kUniform, MoeRouting::kRoundRobin}) {
    if (MoeRoutingName(r) == name) return r;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown MoE routing \"", std::string(name),
                                                 "\"; use uniform or round-robin"));
}

double ExpectedDistinct(int experts, int bins, int top_k) {
  SIM_CHECK(bins >= 1 && experts % bins == 0 && top_k >= 1 && top_k <= experts)
      << "ExpectedDistinct(" << experts << ", " << bins << ", " << top_k << ")";
  // P(a bin gets none of the picks) = C(E - E/bins, k) / C(E, k), as a product.
  const int outside = experts - experts / bins;
  double miss = 1;
  for (int j = 0; j < top_k; ++j) {
    miss *= outside - j <= 0 ? 0.0 : static_cast<double>(outside - j) / (experts - j);
  }
  return bins * (1 - miss);
}

double RoundRobinDistinct(int experts, int bins, int top_k) {
  SIM_CHECK(bins >= 1 && experts % bins == 0 && top_k >= 1 && top_k <= experts)
      << "RoundRobinDistinct(" << experts << ", " << bins << ", " << top_k << ")";
  const int per_bin = experts / bins;
  const int period = experts / std::gcd(experts, top_k);
  int64_t total = 0;
  for (int t = 0; t < period; ++t) {
    std::set<int> hit;
    for (int j = 0; j < top_k; ++j) {
      hit.insert(static_cast<int>((static_cast<int64_t>(t) * top_k + j) % experts) / per_bin);
    }
    total += static_cast<int64_t>(hit.size());
  }
  return static_cast<double>(total) / period;
}

double DistinctBins(MoeRouting routing, int experts, int bins, int top_k) {
  return routing == MoeRouting::kRoundRobin ? RoundRobinDistinct(experts, bins, top_k)
                                            : ExpectedDistinct(experts, bins, top_k);
}

}  // namespace clustersim::strategies
