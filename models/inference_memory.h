// File: models/inference_memory.h
//
// Memory of one GPU of a serving replica (vLLM's accounting): the budget is
// memory x memory_utilization (vLLM's gpu_memory_utilization, default 0.9),
// where memory is the total the CUDA runtime reports (GpuSpec::
// cuda_total_memory, read through torch.cuda.mem_get_info), not the marketed
// capacity; from it go the weights, the peak activations of one step and
// fixed overheads; what remains is the paged KV cache, cut into blocks of
// kv_block_size tokens. The number of blocks decides how many sequences of a
// given length run at once.
//
//   weights      per linear weight BitsPerWeight(format) (models/quantization.h),
//                layers / pp and linear weights / tp; embeddings, LM head and
//                norms 16-bit, vocabulary-parallel / tp; the most loaded stage
//                (the first holds the embedding, the last the LM head).
//                fp8-mixed: attention projections 16-bit, the FFN at
//                BitsPerWeight except in layers 0 and n-1 (16-bit), which the
//                first and last stages hold.
//   KV per token layers_per_stage x 2 (K and V) x kv_heads_per_gpu x head_dim x
//                bytes(kv dtype); kv_heads_per_gpu = max(1, g / tp): GQA-aware,
//                and a KV head is replicated when tp exceeds the query groups,
//                as vLLM does. Llama 3 8B in BF16: 32 x 2 x 8 x 128 x 2 = 128 KiB.
//                Latent attention (MLA) caches kv_lora_rank + qk_rope_head_dim
//                values per token and layer, shared by all heads and held
//                whole on every TP rank (vLLM's MLA backend): DeepSeek-V3 in
//                FP8, 61 x 576 x 1 B = 34.3 KiB. Under expert parallelism
//                (data-parallel attention over ep GPUs) each GPU caches its
//                own sequences: / ep per replica token. A hybrid model
//                caches K and V in its attention layers only.
//   Mamba state  a hybrid model's Mamba layers keep a fixed-size state per
//                sequence instead: layers_per_stage x (heads/tp x head_dim x
//                state + (conv_kernel - 1) x conv channels/tp) x bytes(kv
//                dtype) (vLLM's MambaSpec: the SSM and conv states, in the
//                cache dtype). Each running sequence holds one beside its
//                blocks, so sequences = kv_cache / (blocks x block + state).
//   EP weights   expert parallelism: attention, dense MLPs, shared experts,
//                embedding and LM head whole on every GPU; routed experts / ep.
//   activations  the peak of one step of max_tokens_per_step tokens T, which is
//                what vLLM's profile run measures: the larger of the attention
//                block (2 x h + (a + 2g) x d / tp) and the MLP block
//                (2 x h + 3 x f / tp gated, 2 x h + 2 x f / tp otherwise)
//                or a Mamba layer's (2 x h + (in_proj width + d_inner) / tp)
//                16-bit values per token, plus fp32 logits over the full
//                vocabulary for min(T, max_batch_size) sampled rows.
//   drafter      a speculative drafter's weights and KV per token, when set
//                (drafter_weights, drafter_kv_bytes_per_token).
//   overheads    MemoryOverheads (CUDA context, cuBLAS workspace; assumptions
//                stated in models/memory_model.h).
//   engines      kv_cache_accounting "vllm-v1" replaces the activations by
//                vLLM V1's profile-run peak (the sampler's sort of the logits
//                included) and drops the CUDA context, which vLLM measures
//                before its baseline; "sglang" makes the KV cache
//                memory_utilization x (memory - CUDA context) - weights, with
//                activations and overheads inside SGLang's reserve
//                (models/engine_memory.h).
//   blocks       floor(kv_cache / (kv_block_size x KV per token));
//                a sequence of n tokens holds ceil(n / kv_block_size) blocks.
//
// Example:
//   models::InferenceMemoryInputs in{.replica = {.model = llama3_8b}};
//   in.sequence_length = 2048;
//   models::InferenceMemory m = models::EstimateInferenceMemory(in, gpu.cuda_total_memory);
//   // m.weights ~ 14.96 GiB, m.kv_bytes_per_token = 131072, m.max_concurrent_sequences
#ifndef CLUSTERSIM_MODELS_INFERENCE_MEMORY_H_
#define CLUSTERSIM_MODELS_INFERENCE_MEMORY_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

#include "models/dtype.h"
#include "models/engine_memory.h"
#include "models/gpu_catalog.h"
#include "models/kv_footprint.h"
#include "models/memory_model.h"
#include "models/quantization.h"
#include "models/transformer_config.h"
#include "sim/units.h"

namespace clustersim::models {

// What one serving replica runs: the model, how it is split over GPUs and the
// formats of its weights and KV cache.
struct ReplicaModel {
  TransformerConfig model;
  int tensor_parallel = 1, pipeline_parallel = 1;
  WeightFormat weight_format = WeightFormat::kBf16;
  int quant_group_size = 128;
  Dtype kv_cache_dtype = Dtype::kBf16;
  // inference.expert_parallel_size: 1, or = tensor_parallel with data-parallel
  // attention (strategies/serving_moe.h).
  int expert_parallel = 1;
};

// InvalidArgument naming inference.weight_dtype when the replica's format does
// not apply to its model: fp8-mixed (Meta's dense Llama 3 FP8 recipe,
// models/quantization.h) on a mixture-of-experts or hybrid model, whose
// Meta FP8 release quantizes the routed experts only, which is not modelled.
absl::Status CheckWeightFormatFitsModel(const ReplicaModel& replica);

struct InferenceMemoryInputs {
  ReplicaModel replica;
  // Whose rule sizes the KV cache (models/engine_memory.h). Under kSglang,
  // memory_utilization is SGLang's mem_fraction_static.
  KvCacheAccounting accounting = KvCacheAccounting::kBudget;
  double memory_utilization = 0.9;
  // > 0: TensorRT-LLM's accounting instead (KvCacheConfig
  // free_gpu_memory_fraction, trtllm-bench's --kv_cache_free_gpu_mem_fraction):
  // the KV cache is this fraction of the memory left once the weights, the
  // step's activations and the overheads are placed, and memory_utilization
  // is unused.
  double kv_free_memory_fraction = 0;
  int kv_block_size = 16;
  int max_batch_size = 256;
  int max_tokens_per_step = 2048;
  int64_t sequence_length = 2048;  // prompt + output of the longest request
  MemoryOverheads overheads;
  // A speculative drafter's weights and KV bytes per token on each GPU
  // (strategies/serving_speculative.h), added to the weights and to every
  // token's KV; 0 without speculative decoding.
  sim::Bytes drafter_weights;
  sim::Bytes drafter_kv_bytes_per_token;
};

struct InferenceMemory {
  sim::Bytes capacity, budget;  // device memory; x memory_utilization (all of it under
                                // kv_free_memory_fraction; less the CUDA context
                                // under SGLang's accounting)
  sim::Bytes weights, activations, overheads;
  sim::Bytes kv_cache;  // budget minus the above; 0 when nothing is left
  sim::Bytes kv_bytes_per_token;
  sim::Bytes kv_block_bytes;
  sim::Bytes state_bytes_per_sequence;  // Mamba layers' state; 0 without them
  int64_t kv_blocks = 0;
  // What a sequence holds of the blocks (models/kv_footprint.h): every block
  // of its tokens, or with sliding-window layers only the window's blocks of
  // those layers.
  KvFootprint kv_footprint;
  // At sequence_length while decoding, in whole-model blocks (rounded up).
  int64_t blocks_per_sequence = 0;
  // min(kv_blocks / blocks_per_sequence, max_batch_size), counted in the
  // footprint's units.
  int64_t max_concurrent_sequences = 0;
  bool fits = false;                     // at least one sequence of sequence_length fits
};

// REQUIRES: ValidateTransformer(in.replica.model).ok(); tp divides the heads; sizes > 0.
InferenceMemory EstimateInferenceMemory(const InferenceMemoryInputs& in, sim::Bytes capacity);

// One Mamba layer's state of one sequence on one tensor-parallel rank, in
// elements: the SSM state (heads/tp x head_dim x state_dim) and the conv
// state (conv_kernel - 1 inputs of the rank's conv channels).
int64_t MambaStateElementsPerLayer(const TransformerConfig& model, int tensor_parallel);

// A hybrid model's Mamba state of one sequence on one GPU (see the table); 0
// for a model without Mamba layers.
sim::Bytes MambaStateBytesPerSequence(const TransformerConfig& model, int tensor_parallel,
                                      int pipeline_parallel, Dtype state_dtype);

// Tokens of KV cache per GPU for one token of one sequence (see the table).
// `attention_data_parallel` > 1 (expert parallelism with data-parallel
// attention): each GPU caches only its own sequences, so a token costs the
// replica 1/that of a whole token's cache per GPU.
sim::Bytes KvBytesPerToken(const TransformerConfig& model, int tensor_parallel,
                           int pipeline_parallel, Dtype kv_cache_dtype,
                           int attention_data_parallel = 1);

struct InferenceVerdict {
  bool fits = false;
  std::string summary;            // "fits: 4,412 KV blocks ..." or "does not fit: ..."
  std::string remedy;             // empty when it fits; otherwise changes that were tried and fit
  bool some_remedy_fits = false;  // some remedy (4-bit, raised tp, shorter context) fits
};

// Tries remedies by re-estimating, in this order: quantise the weights (the
// first of fp8, int8, int4-awq that `gpu` runs and that fits), raise tp
// (2, 4, 8 ... dividing the attention heads, up to 64; the GPUs it needs are
// named), and shorten the context (the longest sequence_length that fits,
// when the weights fit at all). Remedies name the scenario fields
// (inference.weight_dtype, inference.tensor_parallel_size, the lengths).
InferenceVerdict JudgeInferenceMemory(const InferenceMemoryInputs& in, const GpuSpec& gpu);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_INFERENCE_MEMORY_H_
