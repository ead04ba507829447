// File: models/fp8_recipe.h
//
// Transformer Engine's FP8 scaling recipes and what each costs outside the
// GEMM: the bytes its cast kernels move per element and whether it runs the
// delayed-scaling amax all-reduce. Read from Transformer Engine's code at the
// versions the validation rows pin (v1.13 for NeMo 24.12, v2.9 for
// Megatron-Bridge 25.11).
//
// Example:
//   absl::StatusOr<Fp8Recipe> r = ParseFp8Recipe("current");
//   double bytes = elements * Fp8CastBytesPerElement(*r);
#ifndef CLUSTERSIM_MODELS_FP8_RECIPE_H_
#define CLUSTERSIM_MODELS_FP8_RECIPE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace clustersim::models {

// Megatron-Core's --fp8-recipe (default "delayed"; megatron/training/arguments.py
// at core_v0.14.0) as Transformer Engine runs it.
enum class Fp8Recipe {
  // DelayedScaling: scales from an amax history; casts read the 16-bit tensor
  // once and write the FP8 copy and its transpose; the amaxes are all-reduced
  // at each fp8_autocast exit and in the backward.
  kDelayed,
  // Float8CurrentScaling ("tensorwise", Megatron-Bridge's FP8-CS): each
  // quantize first reads the tensor for its amax (nvte_compute_amax), then
  // casts it (nvte_quantize_v2); no amax history, no autocast all-reduce.
  kCurrent,
  // MXFP8BlockScaling (Blackwell): one quantize kernel writes rowwise and
  // columnwise FP8 copies with an E8M0 scale per 32 elements of each.
  kMxfp8,
};

inline constexpr std::string_view Fp8RecipeName(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::kCurrent: return "current";
    case Fp8Recipe::kMxfp8: return "mxfp8";
    case Fp8Recipe::kDelayed: break;
  }
  return "delayed";
}

inline absl::StatusOr<Fp8Recipe> ParseFp8Recipe(std::string_view s) {
  for (Fp8Recipe r : {Fp8Recipe::kDelayed, Fp8Recipe::kCurrent, Fp8Recipe::kMxfp8}) {
    if (s == Fp8RecipeName(r)) return r;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("\"", std::string(s), "\" is not an FP8 recipe; use delayed, current or mxfp8"));
}

// Bytes one cast of a 16-bit tensor moves per element under `r`, for an FP8
// GEMM operand needed in both layouts (the activations and gradients of
// training, the weights once per step):
//   delayed: read 2 B, write the FP8 copy and its transpose, 1 B each
//     (cast_transpose; TE v1.13 fp8_cast_transpose_fused) = 4;
//   current: an amax pass reading 2 B, then the same cast, 4 B
//     (TE v2.9 pytorch/csrc/quantizer.cpp Float8CurrentScalingQuantizer::
//     quantize_impl: nvte_compute_amax_with_config, nvte_quantize_v2) = 6;
//   mxfp8: read 2 B, write rowwise and columnwise FP8 (1 B each) and one
//     E8M0 scale byte per 32 elements of each (TE v2.9 MXFP8Quantizer::
//     quantize, one nvte_quantize_v2; MXFP8_BLOCK_SCALING_SIZE 32) = 4 + 2/32.
inline constexpr double Fp8CastBytesPerElement(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::kCurrent: return 6;
    case Fp8Recipe::kMxfp8: return 4 + 2.0 / 32;
    case Fp8Recipe::kDelayed: break;
  }
  return 4;
}

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_FP8_RECIPE_H_
