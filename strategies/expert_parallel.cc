#include "strategies/expert_parallel.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace clustersim::strategies {
namespace {

constexpr const char* kEp = "parallelism.expert_model_parallel_size";

std::string DivisorsOf(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n && d.size() < 12; ++i) {
    if (n % i == 0) d.push_back(i);
  }
  return absl::StrJoin(d, ", ");
}

}  // namespace

absl::Status ValidateExpertParallel(const models::TransformerConfig& model,
                                    const ParallelConfig& p) {
  const int ep = p.expert_parallel;
  const int experts = model.num_experts;
  if (experts == 0) {
    if (ep == 1) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        kEp, "=", ep, " needs a mixture-of-experts model, but model.num_experts is 0; set ",
        kEp, " to 1"));
  }
  if (model.moe_top_k < 1 || model.moe_top_k > experts) {
    return absl::InvalidArgumentError(absl::StrCat("model.moe_top_k=", model.moe_top_k,
                                                   " must be in [1, model.num_experts=", experts,
                                                   "]"));
  }
  if (experts % ep != 0) {
    return absl::InvalidArgumentError(absl::StrCat(kEp, "=", ep, " does not divide model.num_experts=",
                                                   experts, "; try ", DivisorsOf(experts)));
  }
  const int etp = p.expert_tp();
  if (etp != p.tensor_parallel && etp != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "parallelism.expert_tensor_parallel_size=", etp, " must be 1 or ",
        "tensor_model_parallel_size=", p.tensor_parallel,
        " (other expert tensor-parallel sizes are not modelled)"));
  }
  const bool folded = etp == 1 && p.tensor_parallel > 1;
  if (folded) {
    // MoE parallel folding: expert parallelism spans the stage's tp x dp x cp ranks.
    const int ranks = p.tensor_parallel * p.data_parallel * p.context_parallel;
    if (ranks % ep != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          kEp, "=", ep, " does not divide tensor x data x context parallel = ", p.tensor_parallel,
          " x ", p.data_parallel, " x ", p.context_parallel, " = ", ranks,
          " (with expert_tensor_parallel_size=1 experts spread over a stage's ranks); try ",
          DivisorsOf(ranks)));
    }
  }
  const int replicas = p.data_parallel * p.context_parallel;
  if (!folded && replicas % ep != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        kEp, "=", ep, " does not divide data_parallel x context_parallel = ", p.data_parallel,
        " x ", p.context_parallel, " = ", replicas,
        " (expert parallelism is carved out of the data-parallel ranks); try ",
        DivisorsOf(replicas), " or use more GPUs"));
  }
  if (p.tensor_parallel > 1 && !p.sequence_parallel) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a mixture-of-experts model with parallelism.tensor_model_parallel_size=",
        p.tensor_parallel,
        " needs parallelism.sequence_parallel=true (Megatron-core's MoE layer refuses to train "
        "without it); turn sequence parallelism on, or use tp 1"));
  }
  return absl::OkStatus();
}

}  // namespace clustersim::strategies
