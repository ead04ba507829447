// File: strategies/serving_decode_attention.h
//
// How fast decode attention runs when its arithmetic, not its KV reads, is
// the limit. A decode step has one query token per sequence, so the paged
// decode kernels of the serving frameworks (TensorRT-LLM's masked multi-head
// attention, vLLM's paged_attention v1/v2) compute q·k and p·v on the CUDA
// cores, not the tensor cores: per query head and cached token they convert
// the cached K and V to 32-bit floats and do 2·head_dim multiply-adds, plus
// the softmax. At large batch this work — 4·heads·head_dim FLOPs per cached
// token per layer — competes with the KV bytes: on Hopper, whose HBM streams
// fast but whose CUDA-core FP32 peak (67 TFLOP/s) is one fifteenth of its
// dense BF16 peak, it is the slower of the two.
//
// Evidence (TensorRT-LLM v0.8 performance tables, FP8 weights and KV cache,
// static batches): Mistral 7B at batch 120, 128 in / 2,048 out, runs at 8,619
// output tok/s/GPU on an H100 and 8,968 on an H200 (+4%, for 43% more HBM
// bandwidth), and no faster than Llama 2 7B (6,922 / 8,343) although its GQA
// cache is 4x smaller; bound by KV bytes the simulator had Mistral 60-105% too
// fast on both GPUs, bound by this arithmetic (the same query heads as Llama)
// −4..−11%. It does not explain the batch-896, 128/128 rows (H200 = H100
// there too): at the fitted rate that step's arithmetic only reaches the
// H200's KV time (README, "Serving (inference)", accuracy).
//
// Decode attention time = max(KV and query bytes / (bandwidth x memory
// fraction), FLOPs / (SMs x clock x kDefaultDecodeAttentionFlopsPerSmCycle))
// + kernel overhead. The rate is per SM and clock rather than a fraction of
// the FP32 peak because these kernels are bound by instruction issue
// (conversions, FMAs, shuffles, exponentials), which Ampere, Ada and Hopper
// SMs share, while their FP32 peaks per SM differ 2x.
//
// Which models it binds: MHA always (one query per KV head leaves nothing for
// the tensor cores); GQA only with a per-query-head kernel
// (inference.decode_attention_grouped_gqa = false), since GQA kernels that
// pack a group's heads (TensorRT-LLM XQA, FlashInfer, FlashAttention) run the
// arithmetic on the tensor cores and stay bound by the KV bytes.
//
// The constant is fitted by tests/validation/fit_serving_decode_attention.sh
// to tests/validation/trtllm-v08-fit-runs.csv: the 40 rows of the same
// TensorRT-LLM v0.8 tables that are NOT in the validation table (Llama 2 7B
// and 70B, Mistral 7B on H200, H100, L40S and A100); the validation table
// (tests/validation/inference-runs.csv) is held out whole. Overridable per
// scenario (inference.decode_attention_flops_per_sm_cycle; 0 turns the bound
// off).
#ifndef CLUSTERSIM_STRATEGIES_SERVING_DECODE_ATTENTION_H_
#define CLUSTERSIM_STRATEGIES_SERVING_DECODE_ATTENTION_H_

namespace clustersim::strategies {

inline constexpr double kDefaultDecodeAttentionFlopsPerSmCycle = 32.0;

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SERVING_DECODE_ATTENTION_H_
