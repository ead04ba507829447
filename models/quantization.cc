#include "models/quantization.h"

#include <array>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace clustersim::models {
namespace {

constexpr std::array<std::pair<WeightFormat, std::string_view>, 8> kFormats = {{
    {WeightFormat::kBf16, "bf16"},
    {WeightFormat::kFp16, "fp16"},
    {WeightFormat::kFp8, "fp8"},
    {WeightFormat::kInt8, "int8"},
    {WeightFormat::kInt4Gptq, "int4-gptq"},
    {WeightFormat::kInt4Awq, "int4-awq"},
    {WeightFormat::kNvfp4, "nvfp4"},
    {WeightFormat::kFp8Mixed, "fp8-mixed"},
}};

// fp16 scale + packed 4-bit zero point per group (see the header).
constexpr double kGroupOverheadBits = 16.0 + 4.0;

// fp8-mixed: one fp32 scale per output row of k inputs (FBGEMM row-wise).
constexpr double kRowScaleBits = 32.0;

// NVFP4: one 8-bit E4M3 scale per block of 16 values (see the header).
constexpr double kNvfp4BlockSize = 16.0;
constexpr double kNvfp4ScaleBits = 8.0;

}  // namespace

absl::StatusOr<WeightFormat> ParseWeightFormat(std::string_view name, std::string_view field) {
  for (const auto& [format, text] : kFormats) {
    if (text == name) return format;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      std::string(field), "=\"", std::string(name),
      "\" is not a known weight format; use bf16, fp16, fp8, int8, int4-gptq, int4-awq, nvfp4 "
      "or fp8-mixed"));
}

std::string_view WeightFormatName(WeightFormat f) {
  for (const auto& [format, text] : kFormats) {
    if (format == f) return text;
  }
  return "?";
}

bool IsFourBit(WeightFormat f) {
  return f == WeightFormat::kInt4Gptq || f == WeightFormat::kInt4Awq;
}

double BitsPerWeight(WeightFormat f, int group_size, int64_t input_features) {
  switch (f) {
    case WeightFormat::kBf16:
    case WeightFormat::kFp16:
      return 16.0;
    case WeightFormat::kFp8:
      return 8.0;
    case WeightFormat::kInt8:
      return 8.0 + 16.0 / static_cast<double>(input_features);
    case WeightFormat::kInt4Gptq:
    case WeightFormat::kInt4Awq:
      return 4.0 + kGroupOverheadBits / static_cast<double>(group_size);
    case WeightFormat::kNvfp4:
      return 4.0 + kNvfp4ScaleBits / kNvfp4BlockSize;
    case WeightFormat::kFp8Mixed:
      return 8.0 + kRowScaleBits / static_cast<double>(input_features);
  }
  return 16.0;
}

bool AttentionKeeps16Bit(WeightFormat f) { return f == WeightFormat::kFp8Mixed; }

bool FfnKeeps16Bit(WeightFormat f, int layer, int num_layers) {
  return f == WeightFormat::kFp8Mixed && (layer == 0 || layer == num_layers - 1);
}

int Ffn16BitLayers(WeightFormat f, int first, int layers, int num_layers) {
  int n = 0;
  for (int l = first; l < first + layers; ++l) n += FfnKeeps16Bit(f, l, num_layers) ? 1 : 0;
  return n;
}

Dtype ComputeDtype(WeightFormat f) {
  switch (f) {
    case WeightFormat::kBf16:
      return Dtype::kBf16;
    case WeightFormat::kFp8:
    case WeightFormat::kFp8Mixed:
      return Dtype::kFp8;
    case WeightFormat::kInt8:
      return Dtype::kInt8;
    case WeightFormat::kNvfp4:
      return Dtype::kFp4;
    case WeightFormat::kFp16:
    case WeightFormat::kInt4Gptq:
    case WeightFormat::kInt4Awq:
      return Dtype::kFp16;
  }
  return Dtype::kBf16;
}

absl::Status CheckWeightFormatSupported(const GpuSpec& gpu, WeightFormat f,
                                        std::string_view field) {
  const absl::Status s = CheckDtypeSupported(gpu, ComputeDtype(f));
  if (s.ok()) return s;
  std::string alternatives;
  for (const auto& [format, text] : kFormats) {
    if (CheckDtypeSupported(gpu, ComputeDtype(format)).ok()) {
      absl::StrAppend(&alternatives, alternatives.empty() ? "" : ", ", std::string(text));
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(std::string(field), "=",
                                                 std::string(WeightFormatName(f)), ": ",
                                                 s.message(), "; use ", alternatives));
}

absl::StatusOr<Dtype> ParseKvCacheDtype(std::string_view name, std::string_view field) {
  if (name == "bf16") return Dtype::kBf16;
  if (name == "fp16") return Dtype::kFp16;
  if (name == "fp8") return Dtype::kFp8;
  if (name == "int8") return Dtype::kInt8;
  return absl::InvalidArgumentError(absl::StrCat(std::string(field), "=\"", std::string(name),
                                                 "\" is not a KV-cache dtype; use bf16, fp16, "
                                                 "fp8 or int8"));
}

}  // namespace clustersim::models
