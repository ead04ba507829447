// File: models/device_capability.h
//
// Which serving dtypes a catalog device can run, and how. The
// answer comes from the device's peak table (models/data/gpus.textproto):
//   - bf16, fp16, fp8: native when the device has a peak for that dtype;
//     otherwise not supported (FP8 needs Ada, Hopper or Blackwell tensor cores).
//   - fp8-mixed weights (Meta's Llama 3 FP8 checkpoints: inner layers' FFN
//     FP8, the rest BF16): as fp8 (its FP8 GEMMs need FP8 tensor cores). Not
//     a KV-cache dtype.
//   - nvfp4 weights: native W4A4 where the device has an FP4 peak (Blackwell);
//     otherwise not supported. Not a KV-cache dtype.
//   - int8 weights: native W8A8 (SmoothQuant-style) where the device has an INT8
//     peak; elsewhere weight-only, dequantised to the 16-bit compute dtype in the
//     kernel (llama.cpp Q8_0 on Apple GPUs).
//   - int4-gptq, int4-awq weights: always weight-only, dequantised to the 16-bit
//     compute dtype (W4A16: Marlin/AWQ kernels on CUDA, llama.cpp Q4 on Metal and
//     CPUs). Not allowed for the KV cache.
//   - int8 KV cache: stored as int8, widened in the attention kernel.
// The 16-bit compute dtype of a dequantised format is the faster of BF16 and
// FP16 on the device (FP16 on a tie: the W4A16 kernels are FP16 ones).
// Not modelled: weight-only FP8 on Ampere (vLLM's Marlin FP8 path) and vLLM's
// storage-only fp8_e5m2 KV cache on pre-Ada GPUs; both are reported unsupported.
//
// Example:
//   const models::GpuSpec& a100 = **models::GpuCatalog::Default().Find("a100-sxm4-80gb");
//   absl::StatusOr<models::DtypeExecution> e = models::DeviceSupports(
//       a100, "fp8", models::ServingTensor::kWeights, "inference.weight_dtype");
//   // e.status(): "inference.weight_dtype: fp8 is not supported on a100-sxm4-80gb
//   //              (no FP8 tensor cores); use int8 or bf16"
#ifndef CLUSTERSIM_MODELS_DEVICE_CAPABILITY_H_
#define CLUSTERSIM_MODELS_DEVICE_CAPABILITY_H_

#include <array>
#include <string_view>

#include "absl/status/statusor.h"
#include "models/dtype.h"
#include "models/gpu_catalog.h"

namespace clustersim::models {

// The serving dtype names accepted in scenarios (inference.proto).
inline constexpr std::array<std::string_view, 8> kServingWeightDtypes = {
    "bf16", "fp16", "fp8", "int8", "int4-gptq", "int4-awq", "nvfp4", "fp8-mixed"};
inline constexpr std::array<std::string_view, 4> kServingKvDtypes = {"bf16", "fp16", "fp8",
                                                                     "int8"};

enum class ServingTensor { kWeights, kKvCache };

// How a device executes a stored dtype.
struct DtypeExecution {
  Dtype compute = Dtype::kBf16;  // what the matmuls (attention for KV) run in
  int storage_bits = 16;         // bits per stored element, quantisation scales excluded
  bool dequantised = false;      // stored narrower than `compute`, widened in the kernel
};

// How `gpu` runs `dtype` (a name of kServingWeightDtypes / kServingKvDtypes)
// for `tensor`; InvalidArgument prefixed with `field` when the name is unknown
// or the device lacks it, with the reason and what to use instead.
absl::StatusOr<DtypeExecution> DeviceSupports(const GpuSpec& gpu, std::string_view dtype,
                                              ServingTensor tensor, std::string_view field);

// The 16-bit dtype a dequantised format computes in on `gpu` (see above).
Dtype DequantComputeDtype(const GpuSpec& gpu);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_DEVICE_CAPABILITY_H_
