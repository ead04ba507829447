#include "models/dtype.h"


#include <string>

#include "absl/strings/str_cat.h"

namespace clustersim::models {

std::string_view DtypeName(Dtype d) {
  switch (d) {
    case Dtype::kFp32: return "fp32";
    case Dtype::kTf32: return "tf32";
    case Dtype::kBf16: return "bf16";
    case Dtype::kFp16: return "fp16";
    case Dtype::kFp8: return "fp8";
    case Dtype::kInt8: return "int8";
    case Dtype::kFp4: return "fp4";
  }
  return "unknown";
}

absl::StatusOr<Dtype> ParseDtype(std::string_view name) {
  for (Dtype d : kAllDtypes) {
    if (DtypeName(d) == name) return d;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", std::string(name),
                   "'; valid dtypes: fp32, tf32, bf16, fp16, fp8, int8, fp4"));
}

int BytesPerElement(Dtype d) {
  switch (d) {
    case Dtype::kFp32:
    case Dtype::kTf32: return 4;
    case Dtype::kBf16:
    case Dtype::kFp16: return 2;
    case Dtype::kFp8:
    case Dtype::kInt8:
    case Dtype::kFp4: return 1;
  }
  return 0;
}

}  // namespace clustersim::models
