// File: models/quantization.h
//
// How serving stores a model's weights and its KV cache: the weight formats
// users pick in vLLM / TensorRT-LLM (`inference.weight_dtype`), the bits each
// weight takes in memory including quantisation scales and zero points, the
// dtype the GEMMs compute in, and whether a device can run the format.
//
//   format      stored bits per weight            GEMM computes in
//   bf16/fp16   16                                bf16/fp16
//   fp8         8 (one scale per tensor: ~0)      fp8 (W8A8, needs FP8 tensor cores)
//   int8        8 + 16/k (one fp16 scale per      int8 (W8A8 SmoothQuant-style,
//               output channel of k inputs)       needs INT8 tensor cores)
//   int4-gptq   4 + (16 + 4)/g                    fp16 (weight-only: the kernel
//   int4-awq    4 + (16 + 4)/g                    dequantises, e.g. Marlin/AWQ)
//   nvfp4       4 + 8/16 = 4.5 (one FP8 E4M3      fp4 (W4A4: activations quantised to
//               scale per 16 values)              NVFP4 too; needs FP4 tensor cores)
//   fp8-mixed   FFN of layers 1..n-2: 8 + 32/k    those FFN GEMMs fp8 (W8A8, needs FP8
//               (one fp32 scale per output row);  tensor cores); attention projections
//               everything else 16                and the first/last FFN bf16
//
// 4-bit formats keep one fp16 scale and one 4-bit zero point (packed eight per
// int32, GPTQ's `qzeros`, AutoAWQ's `qzeros`) per group of g consecutive input
// weights (quant_group_size, default 128): 4 + 20/128 = 4.156 bits. Sources:
// the GPTQ paper (Frantar et al. 2022, arXiv 2210.17323) and AWQ (Lin et al.
// 2023, arXiv 2306.00978) for the grouping; the packed layouts of AutoGPTQ's
// QuantLinear and AutoAWQ's WQLinear_GEMM. GPTQ's act-order index (one int32
// per input row) adds 32/n bits per weight (< 0.01 for n >= 4096): ignored.
// Embeddings, norms and the LM head stay 16-bit in every format (vLLM and
// AutoGPTQ/AutoAWQ checkpoints quantise the linear layers of the blocks only).
// NVFP4 (NVIDIA's Blackwell format, as TensorRT Model Optimizer writes
// nvidia/*-FP4 checkpoints and TensorRT-LLM runs them): E2M1 values in
// blocks of 16 sharing one E4M3 scale, plus one FP32 scale per tensor
// (ignored): 72 bits per 16 values; the block GEMMs run on FP4 tensor cores
// with activations quantised the same way (NVIDIA technical blog
// "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference",
// June 2025). MXFP4 (one E8M0 scale per 32) is not modelled.
// fp8-mixed is Meta's own FP8 release of its dense Llama 3.x models
// (meta-llama/*-FP8, e.g. Llama-3.1-405B-Instruct-FP8): its `fp8_mixed`
// quantization mode converts only the feed_forward w1, w3 and w2 weights of
// every TransformerBlock except layer 0 and layer n_layers - 1, FBGEMM
// row-wise (one fp32 scale per output row, activations quantised per row at
// run time with an upper bound of 1200); attention, the first and last
// layers' FFN, embeddings, norms and the output layer stay BF16
// (meta-llama/llama-models models/llama3/quantization/loader.py @ dfbccc93,
// convert_to_fp8_quantized_model). The Hugging Face checkpoint states it as
// quantization_config {"quant_method": "fbgemm_fp8", "modules_to_not_convert":
// [...]}, which vLLM loads with FBGEMMFp8Config: the listed modules run
// UnquantizedLinearMethod, the others FP8 weights with per-channel scales and
// per-token dynamic activation scales (vllm-project/vllm
// vllm/model_executor/layers/quantization/fbgemm_fp8.py @ 04843c7c). Meta's
// Llama 4 MoE releases quantize the routed experts only (llama-models
// models/llama4/quantization/loader.py): not this format.
//
// Example:
//   absl::StatusOr<models::WeightFormat> f = models::ParseWeightFormat("int4-awq",
//                                                                       "inference.weight_dtype");
//   double bits = models::BitsPerWeight(*f, 128, 4096);   // 4.15625
#ifndef CLUSTERSIM_MODELS_QUANTIZATION_H_
#define CLUSTERSIM_MODELS_QUANTIZATION_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/dtype.h"
#include "models/gpu_catalog.h"

namespace clustersim::models {

enum class WeightFormat { kBf16, kFp16, kFp8, kInt8, kInt4Gptq, kInt4Awq, kNvfp4, kFp8Mixed };

// "bf16", "fp16", "fp8", "int8", "int4-gptq", "int4-awq", "nvfp4", "fp8-mixed". An
// unknown name is InvalidArgument naming `field` and the valid names.
absl::StatusOr<WeightFormat> ParseWeightFormat(std::string_view name, std::string_view field);
std::string_view WeightFormatName(WeightFormat f);
// The group-quantised 4-bit integer formats (int4-gptq, int4-awq), whose
// group size quant_group_size sets.
bool IsFourBit(WeightFormat f);

// Bits one quantised linear-layer weight takes in memory, scales and zero
// points included (for fp8-mixed: an inner layer's FFN weight; its 16-bit
// weights are FfnKeeps16Bit / AttentionKeeps16Bit). `group_size` matters for
// 4-bit formats, `input_features` (k of the k x n weight) for int8's and
// fp8-mixed's per-channel scales. REQUIRES: both > 0.
double BitsPerWeight(WeightFormat f, int group_size, int64_t input_features);

// fp8-mixed keeps the attention projections (QKV and output) 16-bit.
bool AttentionKeeps16Bit(WeightFormat f);
// fp8-mixed keeps the FFN of layer 0 and layer num_layers - 1 16-bit; every
// other format quantises every layer's FFN. `layer` is 0-based.
bool FfnKeeps16Bit(WeightFormat f, int layer, int num_layers);
// How many of the `layers` consecutive layers starting at `first` keep a
// 16-bit FFN (FfnKeeps16Bit).
int Ffn16BitLayers(WeightFormat f, int first, int layers, int num_layers);

// The dtype the format's quantised GEMMs run in (table above).
Dtype ComputeDtype(WeightFormat f);

// InvalidArgument naming `field` when `gpu` cannot run `f` (FP8 or INT8
// or FP4 tensor cores missing), e.g. "inference.weight_dtype=fp8: dtype fp8 is not
// supported by a100-sxm4-80gb ...; use bf16, int8 or int4-awq".
absl::Status CheckWeightFormatSupported(const GpuSpec& gpu, WeightFormat f, std::string_view field);

// KV-cache element types: bf16, fp16, fp8 (E4M3/E5M2 storage, dequantised in
// the attention kernel, so it needs no FP8 tensor cores: vLLM's
// kv_cache_dtype=fp8 runs on Ampere), int8. InvalidArgument naming `field`.
absl::StatusOr<Dtype> ParseKvCacheDtype(std::string_view name, std::string_view field);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_QUANTIZATION_H_
