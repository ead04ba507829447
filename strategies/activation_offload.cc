#include "strategies/activation_offload.h"

#include "absl/strings/str_cat.h"
#include "sim/check.h"

namespace clustersim::strategies {

// TE v2.7 AsyncDoubleBufferGroupOffloadHandler.__init__: layer_window_map.
std::vector<int> OffloadWindowEnds(int num_layers, int offload_layers) {
  SIM_CHECK(offload_layers > 0 && offload_layers < num_layers)
      << offload_layers << " offloaded of " << num_layers << " layers";
  const int per = num_layers / offload_layers, rem = num_layers % offload_layers;
  std::vector<int> ends(offload_layers);
  int constant = 0;
  for (int i = 0; i < offload_layers; ++i) {
    ends[i] = per * (i + 1) - 1;
    if (i < rem) {
      ends[i] += i + 1;
      constant = i + 1;
    } else {
      ends[i] += constant;
    }
  }
  return ends;
}

absl::Status ValidateCpuOffload(const models::TransformerConfig& model, const ParallelConfig& p) {
  const int n = p.cpu_offload_layers;
  if (n == 0) return absl::OkStatus();
  if (n < 0 || n >= model.num_layers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.cpu_offload_layers=", n, " must be in [0, model.num_layers=", model.num_layers,
        ") (Megatron-Core offloads fewer layers than the model has); use 0 to ",
        model.num_layers - 1));
  }
  if (p.pipeline_parallel > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.cpu_offload_layers=", n, " needs parallelism.pipeline_model_parallel_size=1 "
        "(Megatron-Core has no activation offload with pipeline parallelism); drop one of them"));
  }
  if (p.recompute != models::Recompute::kNone) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.cpu_offload_layers=", n, " needs training.recompute_granularity=\"none\" "
        "(Megatron-Core refuses activation offload with recompute); drop one of them"));
  }
  if (p.overlap_moe_expert_parallel_comm) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.cpu_offload_layers=", n, " with parallelism.overlap_moe_expert_parallel_comm "
        "is not modelled (the merged forward and backward pairs carry no offload copies); drop "
        "one of them"));
  }
  return absl::OkStatus();
}

}  // namespace clustersim::strategies
