// File: models/fitted_constants.h
//
// The serving simulator's fitted constants, read once from the embedded data
// file models/data/fitted_constants.textproto, where each row states what the
// number stands for, its training split, the rows it is judged on, the script
// that reruns the fit and its source. Scenario fields override each one
// (inference.host_overhead_us_per_iteration, ...); these are the defaults.
// Training's fitted numbers belong to the stack profiles
// (models/framework_profile.h).
//
// Example:
//   const models::FittedConstants& f = models::Fitted();
//   double host_us = f.serving_host_us_per_iteration;  // 1250
//
// Thread-safety: Fitted() parses on first use (thread-safe static) and
// returns an immutable table.
#ifndef CLUSTERSIM_MODELS_FITTED_CONSTANTS_H_
#define CLUSTERSIM_MODELS_FITTED_CONSTANTS_H_

#include <string_view>

#include "absl/status/statusor.h"

namespace clustersim::models {

struct FittedConstants {
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
