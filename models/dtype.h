// File: models/dtype.h
//
// The numeric formats a training step computes in, with their canonical
// lower-case names ("bf16", "fp8", ...) as users type them in scenarios.
//
// Example:
//   absl::StatusOr<models::Dtype> d = models::ParseDtype("bf16");
//   if (!d.ok()) return d.status();
//   int bytes = models::BytesPerElement(*d);   // 2
#ifndef CLUSTERSIM_MODELS_DTYPE_H_
#define CLUSTERSIM_MODELS_DTYPE_H_

#include <array>
#include <string_view>

#include "absl/status/statusor.h"

namespace clustersim::models {

// kFp4 is Blackwell's FP4 (E2M1) tensor-core input, as NVFP4 weights use it
// (models/quantization.h) and NVFP4 training's linear layers compute in it.
enum class Dtype { kFp32, kTf32, kBf16, kFp16, kFp8, kInt8, kFp4 };

// Every dtype, in declaration order (for tables indexed by dtype).
inline constexpr std::array<Dtype, 7> kAllDtypes = {Dtype::kFp32, Dtype::kTf32, Dtype::kBf16,
                                                    Dtype::kFp16, Dtype::kFp8,  Dtype::kInt8,
                                                    Dtype::kFp4};

// Parses "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4" (exact, lower case).
// An unknown name is InvalidArgument listing the valid ones.
absl::StatusOr<Dtype> ParseDtype(std::string_view name);

// The canonical name accepted by ParseDtype.
std::string_view DtypeName(Dtype d);

// Storage bytes per element: tf32 is stored as fp32 (4); fp8 and int8 are 1;
// fp4 packs two values per byte and is rounded up to 1 here (what the kernel
// model's alignment check reads); FP4 tensor sizes come from
// quantization.h's BitsPerWeight.
int BytesPerElement(Dtype d);

// Index of `d` in kAllDtypes.
constexpr int DtypeIndex(Dtype d) { return static_cast<int>(d); }

// A training precision whose linear-layer GEMMs Transformer Engine quantizes
// (training.precision "fp8", or "nvfp4" as kFp4): attention, the output layer
// and adapters stay BF16, and the weights keep quantized copies.
constexpr bool IsQuantizedGemmDtype(Dtype d) { return d == Dtype::kFp8 || d == Dtype::kFp4; }

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_DTYPE_H_
