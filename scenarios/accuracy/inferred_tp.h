// File: scenarios/accuracy/inferred_tp.h
//
// The tensor-parallel size a serving validation row runs at when its source
// states the GPU count but not the split (MLPerf results tables and logs
// give the system, not the engine's parallelism). The rule is the sizing a
// user applies when deploying a model: the smallest power-of-two tp, dividing
// the row's GPU count, at which one GPU's share of the weights takes at most
// half of its memory, leaving the other half for the KV cache, activations
// and the runtime (kInferredTpWeightShare). The remaining GPUs serve more
// replicas of that size.
//
// The share was set from this rule of thumb, not from the rows it is used
// on. Where NVIDIA's own harness configurations state the tp
// (serving-deployed/SOURCES.md), the rule gives the same size for Llama 2 70B
// in FP8 on H100 (2) and H200 (1), in FP4 on B200 (1), and Mixtral 8x7B in
// FP8 on H200 (1), and twice it for Mixtral 8x7B in FP8 on H100 (2 against
// 1): a row's tp chosen this way is a stand-in, and the validation report
// counts such rows apart from those with a stated tp.
//
// Example:
//   absl::StatusOr<InferredTp> tp =
//       InferServingTp({.params = 405e9, .weight_bytes = 0.5625,
//                       .device_memory_gib = 180, .num_devices = 8});
//   // tp->tp == 4 (tp 2 would hold 106 GiB of weights per GPU, over half)
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_INFERRED_TP_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_INFERRED_TP_H_

#include <string>

#include "absl/status/statusor.h"

namespace clustersim::scenarios {

// Largest fraction of a GPU's memory the weights may take at the inferred tp.
inline constexpr double kInferredTpWeightShare = 0.5;

struct InferredTpInput {
  double params = 0;             // model parameters
  double weight_bytes = 0;       // bytes per parameter in the served format
  double device_memory_gib = 0;  // one GPU's memory
  int num_devices = 0;           // GPUs of the run
};

struct InferredTp {
  int tp = 0;
  double weights_gib_per_gpu = 0;  // at tp
  std::string text;                // the assumption, for the row's report
};

// InvalidArgument naming the input when one is not positive, or when the
// weights take more than the share even at the largest power of two
// dividing num_devices.
absl::StatusOr<InferredTp> InferServingTp(const InferredTpInput& in);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_INFERRED_TP_H_
