#include "scenarios/accuracy/inferred_tp.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace clustersim::scenarios {

absl::StatusOr<InferredTp> InferServingTp(const InferredTpInput& in) {
  if (!(in.params > 0) || !(in.weight_bytes > 0) || !(in.device_memory_gib > 0) ||
      in.num_devices < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("inferring the tp needs positive params (", in.params, "), weight bytes (",
                     in.weight_bytes, "), GPU memory (", in.device_memory_gib,
                     " GiB) and num_devices (", in.num_devices, "); state the row's tp instead"));
  }
  const double weights_gib = in.params * in.weight_bytes / (1024.0 * 1024.0 * 1024.0);
  const double budget_gib = kInferredTpWeightShare * in.device_memory_gib;
  for (int tp = 1; in.num_devices % tp == 0; tp *= 2) {
    if (weights_gib / tp <= budget_gib) {
      InferredTp out;
      out.tp = tp;
      out.weights_gib_per_gpu = weights_gib / tp;
      out.text = absl::StrFormat(
          "tp %d inferred (the source states none): the smallest power of two dividing the %d "
          "GPUs whose weight shard (%.1f GiB) takes at most half of the GPU's %.0f GiB; %d "
          "replica(s)",
          tp, in.num_devices, out.weights_gib_per_gpu, in.device_memory_gib, in.num_devices / tp);
      return out;
    }
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "inferring the tp: %.1f GiB of weights take more than half of the GPU's %.0f GiB at every "
      "power-of-two split of the %d GPUs; state the row's tp",
      weights_gib, in.device_memory_gib, in.num_devices));
}

}  // namespace clustersim::scenarios
