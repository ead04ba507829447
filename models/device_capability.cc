#include "models/device_capability.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace clustersim::models {
namespace {

// Upper-case name for messages ("FP8").
std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return out;
}

absl::Status Unsupported(const GpuSpec& gpu, std::string_view field, std::string_view dtype,
                         std::string_view reason, std::string_view remedy) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(field), ": ", std::string(dtype),
                                                 " is not supported on ", gpu.name, " (",
                                                 std::string(reason), "); use ",
                                                 std::string(remedy)));
}

// "no FP8 tensor cores" on GPUs, "no FP8 matrix or vector unit" on CPUs.
std::string Lacks(const GpuSpec& gpu, Dtype d) {
  return absl::StrCat("no ", Upper(DtypeName(d)),
                      gpu.kind == DeviceKind::kCpu ? " matrix or vector unit" : " tensor cores");
}

}  // namespace

Dtype DequantComputeDtype(const GpuSpec& gpu) {
  return gpu.PeakFlops(Dtype::kBf16) > gpu.PeakFlops(Dtype::kFp16) ? Dtype::kBf16
                                                                    : Dtype::kFp16;
}

absl::StatusOr<DtypeExecution> DeviceSupports(const GpuSpec& gpu, std::string_view dtype,
                                              ServingTensor tensor, std::string_view field) {
  const bool kv = tensor == ServingTensor::kKvCache;
  const Dtype wide = DequantComputeDtype(gpu);
  const std::string wide_name(DtypeName(wide));
  if (dtype == "int4-gptq" || dtype == "int4-awq") {
    if (kv) {
      return absl::InvalidArgumentError(absl::StrCat(
          std::string(field), ": ", std::string(dtype),
          " is a weight format, not a KV-cache dtype; use int8, fp8 or ", wide_name));
    }
    return DtypeExecution{wide, 4, true};
  }
  if (dtype == "nvfp4") {
    if (kv) {
      return absl::InvalidArgumentError(absl::StrCat(
          std::string(field), ": nvfp4 is a weight format, not a KV-cache dtype; use fp8 or ",
          wide_name));
    }
    if (gpu.Supports(Dtype::kFp4)) return DtypeExecution{Dtype::kFp4, 4, false};
    return Unsupported(gpu, field, dtype, Lacks(gpu, Dtype::kFp4),
                       gpu.Supports(Dtype::kFp8) ? "fp8 or int4-awq" : "int8 or int4-awq");
  }
  if (dtype == "fp8-mixed") {
    if (kv) {
      return absl::InvalidArgumentError(absl::StrCat(
          std::string(field), ": fp8-mixed is a weight format, not a KV-cache dtype; use fp8 or ",
          wide_name));
    }
    if (gpu.Supports(Dtype::kFp8)) return DtypeExecution{Dtype::kFp8, 8, false};
    return Unsupported(gpu, field, dtype, Lacks(gpu, Dtype::kFp8),
                       absl::StrCat("int8 or ", gpu.Supports(Dtype::kBf16) ? "bf16" : "fp16"));
  }
  if (dtype == "int8") {
    // W8A8 where the device has INT8 matrix units; weight-only (and KV) otherwise.
    if (!kv && gpu.Supports(Dtype::kInt8)) return DtypeExecution{Dtype::kInt8, 8, false};
    return DtypeExecution{wide, 8, true};
  }
  for (Dtype d : {Dtype::kBf16, Dtype::kFp16, Dtype::kFp8}) {
    if (dtype != DtypeName(d)) continue;
    if (gpu.Supports(d)) return DtypeExecution{d, BytesPerElement(d) * 8, false};
    // Suggest BF16 where the device has it (the usual serving default), else FP16.
    const std::string sixteen(gpu.Supports(Dtype::kBf16) && d != Dtype::kBf16 ? "bf16" : "fp16");
    const std::string remedy = d == Dtype::kFp8 ? absl::StrCat("int8 or ", sixteen) : sixteen;
    return Unsupported(gpu, field, dtype, Lacks(gpu, d), remedy);
  }
  std::vector<std::string> names;
  if (kv) {
    names.assign(kServingKvDtypes.begin(), kServingKvDtypes.end());
  } else {
    names.assign(kServingWeightDtypes.begin(), kServingWeightDtypes.end());
  }
  return absl::InvalidArgumentError(absl::StrCat(std::string(field), ": unknown dtype '",
                                                 std::string(dtype), "'; use one of ",
                                                 absl::StrJoin(names, ", ")));
}

}  // namespace clustersim::models
