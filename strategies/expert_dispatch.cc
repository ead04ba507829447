#include "strategies/expert_dispatch.h"

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

}  // namespace clustersim::strategies
