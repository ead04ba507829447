// File: scenarios/accuracy/trtllm_bench_settings.h
//
// The scheduler limits `trtllm-bench throughput` picks for itself when a run
// does not pass --max_batch_size / --max_num_tokens: TensorRT-LLM's
// tensorrt_llm/bench/build/tuning.py (calc_engine_setting and
// finetune_setting, Apache-2.0; the same formula in the v0.17 engine flow
// and the v1.0 PyTorch flow). A validation row measured with trtllm-bench is
// simulated under the limits the tool would have used, not under vLLM's.
//
//   bytes/token   = 2 x layers x max(tp, kv_heads) x head_size x kv_bytes
//   free          = device_memory x tp x pp - params x weight_bytes
//   max_requests  = free x kv_fraction / (bytes/token x (ISL + OSL))
//   raw_bs        = min(max_requests, 4096) / pp
//   raw_tokens    = min(raw_bs x (1 + ISL / OSL), 32768)
//   max_batch     = raw_bs < 256:  max(64, 32 x ceil(raw_bs / 32))
//                   raw_bs < 1024: 128 x ceil(raw_bs / 128)
//                   else           256 x ceil(raw_bs / 256)
//   max_tokens    = raw_tokens < 4096: max(2048, 256 x ceil(raw_tokens / 256))
//                   raw_tokens < 8192: 512 x ceil(raw_tokens / 512)
//                   else               1024 x ceil(raw_tokens / 1024)
//
// Memory is in GiB (1024^3 bytes) as in tuning.py; the device memory is the
// GPU's total (the catalog's), kv_fraction defaults to the tool's 0.95
// (kv_cache_free_gpu_mem_fraction). weight_bytes and kv_bytes are 1 for FP8,
// 0.5 for NVFP4 weights, 2 otherwise (the tool's BYTES_PER_ELEM).
//
// Chunked prefill is off unless the run asks for it (throughput's
// --enable_chunked_context, default false; the PyTorch flow's
// enable_chunked_prefill, default false): each prompt runs whole in one
// iteration. The PyTorch flow then raises the token limit to the longest
// prompt plus a full batch of decode steps (bench/benchmark/utils/general.py,
// get_settings: max(max_num_tokens, max_isl + max_batch_size)); the engine
// flow keeps the engine's limit.
//
// The PyTorch runtime captures only the CUDA graph batch sizes a decode-only
// iteration can reach (_torch/pyexecutor/model_engine.py,
// _filter_cuda_graph_batch_sizes): those up to min(max_batch_size,
// max_num_tokens), and with padding that bound itself in place of the first
// larger size.
//
// Example:
//   absl::StatusOr<TrtllmBenchLimits> l = TrtllmBenchSettings(
//       {.params = 8.03e9, .layers = 32, .kv_heads = 8, .head_size = 128, .tp = 1, .pp = 1,
//        .input_len = 1000, .output_len = 1000, .weight_bytes = 1, .kv_bytes = 2,
//        .device_memory_gib = 131.0});
//   // l->max_batch_size == 512, l->max_num_tokens == 2048
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_TRTLLM_BENCH_SETTINGS_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_TRTLLM_BENCH_SETTINGS_H_

#include <vector>

#include "absl/status/statusor.h"

namespace clustersim::scenarios {

struct TrtllmBenchModel {
  double params = 0;  // parameter count
  int layers = 0;
  int kv_heads = 0;
  int head_size = 0;
  int tp = 1;
  int pp = 1;
  int input_len = 0;
  int output_len = 0;
  double weight_bytes = 2;  // per parameter
  double kv_bytes = 2;      // per KV element
  double device_memory_gib = 0;
  double kv_fraction = 0.95;
};

struct TrtllmBenchLimits {
  double kv_cache_max_requests = 0;
  int max_batch_size = 0;
  int max_num_tokens = 0;
};

// The limits, or InvalidArgument when the weights do not fit or the KV cache
// holds less than one request (the tool's own errors).
absl::StatusOr<TrtllmBenchLimits> TrtllmBenchSettings(const TrtllmBenchModel& m);

// The PyTorch flow's token limit without chunked prefill: the tuned limit, or
// the longest prompt plus a full batch of decode steps when that is larger.
int TrtllmBenchUnchunkedMaxTokens(const TrtllmBenchLimits& limits, int max_input_len);

// The CUDA graph batch sizes (ascending) the PyTorch runtime keeps under a
// batch limit of max_batch_size sequences and max_num_tokens tokens.
std::vector<int> CapturedCudaGraphBatchSizes(const std::vector<int>& sizes, int max_batch_size,
                                             int max_num_tokens, bool padding);

}  // namespace clustersim::scenarios

// The PyTorch runtime's host work per scheduled sequence and iteration, beside
// the per-iteration part (models/data/fitted_constants.textproto,
// serving_host_us_per_iteration): its Python executor schedules, samples and
// answers every request each step. Its overlap scheduler, on by default
// (tensorrt_llm/llmapi/llm_args.py, disable_overlap_scheduler = False), runs
// that work while the GPUs run the previous step. Measured:
// github.com/NVIDIA/TensorRT-LLM PR #10273 (2025-12-24), GPT-OSS-120B on
// GB200 with attention DP 2, max_batch_size 1536 per rank and 3,072 clients,
// an average host_step_time of 45.11 ms per iteration: (45.11 ms - the 1.25 ms
// per-iteration part) / 1,536 sequences. Inferred for the v1.0 runtime and
// for x86 hosts (the measurement is a later runtime on a Grace CPU).
inline constexpr double kTrtllmPytorchHostUsPerSequence = (45110.0 - 1250.0) / 1536.0;

// Host time per kernel when TensorRT-LLM's PyTorch runtime runs an iteration
// eagerly (inference.eager_dispatch_us_per_kernel): a prompt on any attention
// rank, or a batch above the largest captured CUDA graph. Measured:
// github.com/NVIDIA/TensorRT-LLM PR #12653 (2026-04-01, CUDA graphs for the
// LTX-2 transformer on 8 GPUs), "CPU dispatch interval (~35us)" between eager
// kernels of the PyTorch flow. Taken for every model and GPU (the measurement
// is one model's kernels on one host).
inline constexpr double kTrtllmPytorchEagerUsPerKernel = 35.0;

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_TRTLLM_BENCH_SETTINGS_H_
