// File: models/engine_memory.h
//
// How a serving engine sizes its KV cache out of a GPU's memory. Three
// accountings (inference.kv_cache_accounting):
//
//   budget   (absent) memory x memory_utilization, less the weights, an
//            estimate of one step's activations and fixed overheads
//            (models/inference_memory.h). The simulator's generic rule.
//   vllm-v1  vLLM's V1 engine as of v0.9-v0.10 (vllm/v1/worker/gpu_worker.py,
//            Worker.determine_available_memory): KV = total x
//            gpu_memory_utilization - (weights + torch peak increase of a
//            profile run + non-torch increase since the worker's first memory
//            snapshot). The snapshot is taken after the CUDA context exists,
//            so the context is not counted; the cuBLAS workspace is. The
//            profile run (gpu_model_runner.py profile_run) is one forward pass
//            of max_num_batched_tokens tokens split over
//            min(max_num_seqs, tokens) requests, then _dummy_sampler_run on
//            one row per request with top-k and top-p set, so the sampler
//            sorts the logits. VllmV1ProfilePeakBytes is that run's peak.
//   sglang   SGLang's ModelRunner.profile_max_num_token
//            (python/sglang/srt/model_executor/model_runner.py): KV = the free
//            memory after loading the weights - the free memory before them x
//            (1 - mem_fraction_static), i.e. f x (memory - CUDA context) -
//            weights; activations, CUDA graphs and other buffers live in the
//            (1 - f) reserve. memory_utilization is mem_fraction_static.
//
// Every accounting starts from the memory the CUDA runtime reports
// (GpuSpec::cuda_total_memory, cudaMemGetInfo's total), not the marketed
// capacity: vLLM (V0's Worker.determine_num_available_blocks, which the budget
// follows, and V1's) takes torch.cuda.mem_get_info's total, and SGLang
// (get_available_gpu_memory) its free memory, which is that total less what
// is in use (the CUDA context before the weights load). It is below the
// marketed capacity by the driver's reservation (H100 SXM: 79.20 of 80 GiB).
//
// What vLLM's non-torch increase holds at tp > 1 (NCCL and custom all-reduce
// buffers, the kernel images of the compiled model) is not modelled: no
// public source sizes it, so the vllm-v1 estimate overstates the cache by it.
//
// Example:
//   absl::StatusOr<KvCacheAccounting> a = ParseKvCacheAccounting("vllm-v1");
//   VllmBatchDefaults d = VllmServeDefaults(gpu);  // H100: 1024 seqs, 8192 tokens
//   int64_t peak = VllmV1ProfilePeakBytes(model, /*tp=*/4, d.max_num_batched_tokens,
//                                         d.max_num_seqs);
#ifndef CLUSTERSIM_MODELS_ENGINE_MEMORY_H_
#define CLUSTERSIM_MODELS_ENGINE_MEMORY_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "models/gpu_catalog.h"
#include "models/transformer_config.h"

namespace clustersim::models {

enum class KvCacheAccounting { kBudget, kVllmV1, kSglang };

// "" -> kBudget, "vllm-v1", "sglang"; anything else is InvalidArgument naming
// inference.kv_cache_accounting.
absl::StatusOr<KvCacheAccounting> ParseKvCacheAccounting(std::string_view name);
std::string_view KvCacheAccountingName(KvCacheAccounting accounting);

// `vllm serve`'s scheduler limits when none are given
// (vllm/engine/arg_utils.py, EngineArgs._set_default_args_v1, v0.9-v0.10):
// 1024 sequences and 8192 tokens per step on GPUs of at least 70 GiB other
// than the A100, else 256 and 2048. The memory compared is the CUDA total
// (current_platform.get_device_total_memory, torch's total_memory).
struct VllmBatchDefaults {
  int max_num_seqs = 256;
  int max_num_batched_tokens = 2048;
};
VllmBatchDefaults VllmServeDefaults(const GpuSpec& gpu);

// SGLang's mem_fraction_static when none is given
// (python/sglang/srt/server_args.py, ServerArgs.__post_init__, v0.4): 0.79 at
// tp >= 16, 0.81 at >= 8, 0.85 at >= 4, 0.87 at >= 2, else 0.88.
double SglangDefaultMemFractionStatic(int tensor_parallel);

// Peak bytes of vLLM V1's dummy sampler run on `rows` rows of a `vocab`-wide
// vocabulary, per element of the rows x vocab logits: the gathered 16-bit
// logits (2 B) stay referenced while the sampler casts them to fp32 (4 B);
// top-p makes the PyTorch-native sampler sort them (apply_top_k_top_p:
// logits.sort), which returns fp32 values and int64 indices (12 B). For at
// least 128 rows, PyTorch's sort (aten/src/ATen/native/cuda/SortStable.cu,
// segmented_sort_pairs) fills an int64 index array (8 B) and calls cub's
// segmented radix sort without a double buffer, which keeps an alternate copy
// of the keys and values in its temporary storage (12 B): 38 B per element.
int64_t VllmSamplerPeakBytes(int64_t rows, int64_t vocab);

// Peak torch memory of vLLM V1's profile run on one GPU: the larger of the
// forward pass's largest layer at `tokens` tokens and the sampler on
// min(max_num_seqs, tokens) rows beside the forward's output hidden states
// (every TP rank gathers the whole vocabulary's logits and samples; under
// pipeline parallelism only the last stage samples, and the estimate, for the
// most loaded GPU, counts it on every stage).
// The forward's layers, in 16-bit values per token: attention 2h + (a + 2g)d
// / tp, a dense MLP 2h + 3f / tp (gated; 2f otherwise), a MoE layer
// (vllm/model_executor/layers/fused_moe/fused_moe.py, fused_experts_impl)
// 2h + k x (max(N, h) + N / 2) with N = 2 x expert ffn / tp (cache1 and cache3
// share one buffer; cache2 holds the activated half).
int64_t VllmV1ProfilePeakBytes(const TransformerConfig& model, int tensor_parallel,
                               int64_t tokens, int64_t max_num_seqs);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_ENGINE_MEMORY_H_
