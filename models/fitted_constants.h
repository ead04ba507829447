// File: models/fitted_constants.h
//
// The simulator's fitted constants, read once from the embedded data file
// models/data/fitted_constants.textproto, where each row states what the
// number stands for, its training split, the rows it is judged on, the script
// that reruns the fit and its source. Scenario fields override each one
// (training.framework_gemm_factor, inference.host_overhead_us_per_iteration,
// ...); these are the defaults.
//
// Example:
//   const models::FittedConstants& f = models::Fitted();
//   double gemm = f.framework_gemm_factor;  // 0.91
//
// Thread-safety: Fitted() parses on first use (thread-safe static) and
// returns an immutable table.
#ifndef CLUSTERSIM_MODELS_FITTED_CONSTANTS_H_
#define CLUSTERSIM_MODELS_FITTED_CONSTANTS_H_

#include <string_view>

#include "absl/status/statusor.h"

namespace clustersim::models {

struct FittedConstants {
  // Fraction of the GEMM ceilings that GEMMs reach in a sustained training step.
  double framework_gemm_factor = 0;
  // Fraction of a calibrated standalone attention kernel's rate reached in a
  // training framework.
  double framework_attention_factor = 0;
  // Host (CPU) launch time per modelled op of an eager training framework, us.
  double host_overhead_us_per_op = 0;
  // Host time DeepSpeed's pipeline engine blocks for per stage-to-stage send, us.
  double deepspeed_pipeline_p2p_host_us = 0;
  // Host time of one serving iteration that the GPUs wait for, us.
  double serving_host_us_per_iteration = 0;
  // Decode attention's CUDA-core arithmetic rate, FLOPs per SM per cycle.
  double decode_attention_flops_per_sm_cycle = 0;
};

// The shipped table. A malformed embedded file is a programming error.
const FittedConstants& Fitted();

// Parses a fitted-constants file; every constant above must appear once, with
// a finite value, and no other. Errors name the file, the row and the fix.
absl::StatusOr<FittedConstants> ParseFittedConstants(std::string_view textproto,
                                                     std::string_view origin);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_FITTED_CONSTANTS_H_
