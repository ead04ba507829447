// File: models/fp8_recipe.h
//
// The FP8 scaling recipes and what each costs outside the GEMM: the bytes its
// cast kernels move per element and whether it runs the delayed-scaling amax
// all-reduce. Transformer Engine's three are read from its code at the
// versions the validation rows pin (v1.13 for NeMo 24.12, v2.9 for
// Megatron-Bridge 25.11); torchao's rowwise recipe from torchao at 6243040
// (the torchtitan rows' pin).
//
// Example:
//   absl::StatusOr<Fp8Recipe> r = ParseFp8Recipe("current");
//   double bytes = elements * Fp8CastBytesPerElement(*r);
#ifndef CLUSTERSIM_MODELS_FP8_RECIPE_H_
#define CLUSTERSIM_MODELS_FP8_RECIPE_H_

#include <cstdint>
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
  // torchao's Float8LinearRecipeName.ROWWISE (torchao/float8/config.py at
  // 6243040): every operand scaled per row along its reduction axis, so each
  // activation and gradient is cast once per GEMM layout from 16 bits, and
  // the two backward GEMMs (use_fast_accum off) run cuBLAS's tensorwise kernel
  // with unit scales followed by an elementwise rescale of their outputs
  // (float8_ops.py addmm_float8_unwrapped: the rowwise CUTLASS kernel is too
  // slow without fast accumulation).
  kRowwise,
  // NVFP4BlockScaling (Transformer Engine v2.8, Blackwell), set by
  // training.precision "nvfp4" (not a training.fp8_recipe value): E2M1 values
  // with an E4M3 scale per 16 elements and an FP32 per-tensor scale; the
  // wgrad GEMM's inputs pass a 16x16 random Hadamard transform, the weights
  // are scaled in 16x16 blocks.
  kNvfp4,
};

inline constexpr std::string_view Fp8RecipeName(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::kCurrent: return "current";
    case Fp8Recipe::kMxfp8: return "mxfp8";
    case Fp8Recipe::kRowwise: return "rowwise";
    case Fp8Recipe::kNvfp4: return "nvfp4";
    case Fp8Recipe::kDelayed: break;
  }
  return "delayed";
}

inline absl::StatusOr<Fp8Recipe> ParseFp8Recipe(std::string_view s) {
  for (Fp8Recipe r :
       {Fp8Recipe::kDelayed, Fp8Recipe::kCurrent, Fp8Recipe::kMxfp8, Fp8Recipe::kRowwise}) {
    if (s == Fp8RecipeName(r)) return r;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("\"", std::string(s),
                   "\" is not an FP8 recipe; use delayed, current, mxfp8 or rowwise"));
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
//     quantize, one nvte_quantize_v2; MXFP8_BLOCK_SCALING_SIZE 32) = 4 + 2/32;
//   rowwise: one kernel reads 2 B, writes the row-scaled FP8 copy (1 B) and
//     the 16-bit transpose (2 B), a second reads that transpose and writes the
//     column-scaled copy (3 B) = 8 (torchao 6243040
//     torchao/testing/float8/roofline_utils.py, get_tensor_memory_traffic_ovhd_s,
//     input and grad_output: the two cannot fuse, each scale spanning a whole
//     row of the other layout);
//   nvfp4: three 2 B reads (nvte_hadamard_transform_amax for the rowwise
//     amax and the post-RHT columnwise amax, the rowwise nvte_quantize_v2,
//     the fused nvte_hadamard_transform_cast_fusion_columnwise) and two
//     writes of 4-bit values plus an E4M3 scale per 16 (0.5 + 1/16 B each)
//     = 6 + 2 x 0.5625 = 7.125 (TE v2.8 pytorch/csrc/quantizer.cpp
//     NVFP4Quantizer::quantize_impl; the forward input's rowwise copy skips
//     the RHT but shares the amax pass, costed the same).
inline constexpr double kNvfp4BytesPerElement = 0.5 + 1.0 / 16;
inline constexpr double Fp8CastBytesPerElement(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::kCurrent: return 6;
    case Fp8Recipe::kMxfp8: return 4 + 2.0 / 32;
    case Fp8Recipe::kRowwise: return 8;
    case Fp8Recipe::kNvfp4: return 3 * 2 + 2 * kNvfp4BytesPerElement;
    case Fp8Recipe::kDelayed: break;
  }
  return 4;
}

// Kernels that quantize the `entries` inputs of one grouped GEMM (Transformer
// Engine's GroupedLinear, one entry per local expert), which it splits and
// quantizes with one quantizer per entry (TE v2.7 and v2.9,
// pytorch/module/grouped_linear.py tex.split_quantize; pytorch/csrc/
// extensions/cast.cpp multi_tensor_quantize_impl, "only have fused kernel for
// FP8 delayed scaling"):
//   delayed: one nvte_multi_cast_transpose over all entries = 1;
//   current: per entry quantize_impl's nvte_compute_amax,
//     nvte_compute_scale_from_amax and nvte_quantize_v2 (pytorch/csrc/
//     quantizer.cpp Float8CurrentScalingQuantizer) = 3 x entries;
//   mxfp8: per entry one nvte_quantize_v2 (MXFP8Quantizer::quantize) = entries;
//   rowwise: torchao's two cast kernels over the whole tensor (no per-entry
//     path is modelled for it) = 2;
//   nvfp4: per entry the amax, rowwise and columnwise kernels
//     (NVFP4Quantizer::quantize_impl) = 3 x entries.
inline constexpr int64_t Fp8GroupedCastKernels(Fp8Recipe r, int64_t entries) {
  switch (r) {
    case Fp8Recipe::kCurrent:
    case Fp8Recipe::kNvfp4: return 3 * entries;
    case Fp8Recipe::kMxfp8: return entries;
    case Fp8Recipe::kRowwise: return 2;
    case Fp8Recipe::kDelayed: break;
  }
  return 1;
}

// Bytes one cast of a 16-bit weight to both FP8 layouts moves per element:
// the activations' count, except under rowwise scaling, where the weight's
// second layout is a 16-bit transpose (read 2 B, write 2 B) and then its
// cast (3 B) after the first layout's cast (3 B) = 10 (roofline_utils.py
// above, weight), and under NVFP4, whose weights take no RHT and one 2D
// 16x16-block quantize: an amax pass (2 B) and the quantize reading 2 B and
// writing the rowwise and columnwise copies (2 x 0.5625 B) = 5.125 (TE v2.8
// recipe NVFP4BlockScaling fp4_quant_fwd_weight: fp4_2d_quantization, no RHT).
inline constexpr double Fp8WeightCastBytesPerElement(Fp8Recipe r) {
  if (r == Fp8Recipe::kNvfp4) return 2 + 2 + 2 * kNvfp4BytesPerElement;
  return r == Fp8Recipe::kRowwise ? 10 : Fp8CastBytesPerElement(r);
}

// Bytes per element of a backward GEMM's 16-bit output that the recipe's
// rescale reads and writes after the GEMM: 4 under rowwise scaling
// (addmm_float8_unwrapped multiplies the output by the outer product of the
// two operands' inverse scales; costed as its own pass, not fused into the
// next kernel), 0 otherwise (the scales ride in the GEMM's epilogue).
inline constexpr double Fp8BackwardRescaleBytesPerElement(Fp8Recipe r) {
  return r == Fp8Recipe::kRowwise ? 4 : 0;
}

// The rate of the recipe's FP8 GEMM kernels against per-tensor-scaled FP8
// GEMMs of the same shapes. MXFP8's block-scaled GEMMs (an E8M0 scale per 32
// elements of each operand, applied in the tensor-core pipeline) run 0.951 as
// fast: Transformer Engine's GEMM profiling guide, on pre-quantized operands
// (kernel time only), per-layer total of a 5B model's 12 GEMM shapes on a B300,
// FP8 current scaling 6.812 ms against MXFP8 7.161 ms (NVIDIA/TransformerEngine
// docs/examples/gemm_profiling/gemm_profiling.rst at d0067d0; B300's FP8 dense
// rate equals B200's, carried over to B200 and GB200: inferred). Delayed,
// current and rowwise scaling run per-tensor or unit-scale kernels: 1.
// NVFP4's block-scaled FP4 GEMMs take MXFP8's fraction of the FP4 peak
// (KernelModelParams::fp4_gemm_as_mxfp8, models/kernel_model.h), not here: 1.
inline constexpr double Fp8GemmRateFactor(Fp8Recipe r) {
  return r == Fp8Recipe::kMxfp8 ? 6.812 / 7.161 : 1.0;
}

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_FP8_RECIPE_H_
