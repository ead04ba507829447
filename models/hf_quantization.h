// File: models/hf_quantization.h
//
// The serving weight format (models/quantization.h) a Hugging Face
// config.json's "quantization_config" states for its checkpoint, where this
// mapping knows one:
//   quant_method "fbgemm_fp8" (transformers' FbgemmFp8Config; vLLM's
//   FBGEMMFp8Config runs every Linear not named in "modules_to_not_convert"
//   as FP8 with one fp32 scale per output row, and the named ones unquantized):
//     - no layer module listed (absent, empty, or only lm_head and the like):
//       every block linear is FP8 -> "fp8" (its row scales, 32/k bits per
//       weight, are not counted);
//     - the attention (self_attn.*) of every layer and the MLP (mlp.*) of
//       layers 0 and n-1 exactly -> "fp8-mixed": Meta's own FP8 release
//       (meta-llama/Llama-3.1-405B-Instruct-FP8 and its 8B/70B siblings), whose
//       llama-models loader quantizes only the inner layers' FFNs;
//     - any other pattern -> "" (neither format describes it; set
//       inference.weight_dtype).
//   Mixture-of-experts and hybrid models -> "": Meta's Llama 4 FP8 releases
//   quantize the routed experts only, which no format here models.
// Other quant_methods -> "" (block-scaled "fp8" is read by hf_config.cc into
// model.fp8_weight_block).
//
// Serving takes this format when inference.weight_dtype is unset and the
// model comes from model.model_config_file.
//
// Example:
//   absl::StatusOr<std::string> f =
//       LoadHfCheckpointWeightDtype("Llama-3.1-405B-Instruct-FP8/config.json");  // "fp8-mixed"
#ifndef CLUSTERSIM_MODELS_HF_QUANTIZATION_H_
#define CLUSTERSIM_MODELS_HF_QUANTIZATION_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "google/protobuf/struct.pb.h"
#include "models/transformer_config.h"

namespace clustersim::models {

// `quantization_config`: the config.json's object of that name; `model`: the
// architecture read from the same file. InvalidArgument naming
// "quantization_config.modules_to_not_convert" when it is not a list of
// strings.
absl::StatusOr<std::string> CheckpointWeightDtype(
    const google::protobuf::Value& quantization_config, const TransformerConfig& model);

// The same from the text of a config.json (ParseHfConfig reads the
// architecture; its errors pass through, prefixed with `origin`), or from the
// file at `path` (NotFound when it cannot be read).
absl::StatusOr<std::string> ParseHfCheckpointWeightDtype(std::string_view json,
                                                         std::string_view origin);
absl::StatusOr<std::string> LoadHfCheckpointWeightDtype(const std::string& path);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_HF_QUANTIZATION_H_
