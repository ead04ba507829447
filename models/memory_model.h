// File: models/memory_model.h
//
// Bytes on one GPU during training: weights, gradients and optimizer states
// (mixed-precision Adam, Megatron's distributed optimizer, ZeRO 1/2/3), the
// activations kept for backward (Korthikanti et al. 2022, Table 2, with
// Megatron-LM's theoretical_memory_usage.py pipeline accounting), and fixed
// per-process overheads.
//
// Model states (bytes per parameter on the rank, Ψ = parameters of the rank):
//   weights 2 (16-bit/fp8 training; 4 for fp32/tf32), gradients 4 (Megatron's
//   fp32 main_grad; 2 with main_grad_dtype = bf16/fp16, the ZeRO paper's
//   accounting), optimizer 12 (fp32 master + Adam m + v; 8 for fp32 training).
//   ZeRO stage 1 (= Megatron's distributed optimizer: 6 + 12/d) shards the
//   optimizer, stage 2 also the gradients, stage 3 also the weights, over the
//   data-parallel group (data_parallel · context_parallel ranks).
//   Ψ = (layers of the stage · P_layer + embedding on the first stage + final
//   norm and untied LM head on the last) / tp, as Megatron's
//   (P_transformer/p + P_embedding)/t.
// MoE: routed-expert parameters are further split over expert_parallel ranks
//   and their ZeRO / distributed-optimizer shards span the expert-data-parallel
//   group, dp·cp/ep ranks (Megatron-core); the rest as above.
// Fine-tuning (finetune.h): LoRA keeps the frozen base in 16 bits (2 B/param),
//   QLoRA its linear-layer weights in NF4 with double quantisation
//   (kNf4BytesPerParameter, 0.516 B) and embeddings, LM head, norms, biases and
//   router in 16 bits; neither has base gradients or optimizer states. Adapter
//   parameters (r·(in+out) per target) carry 2 + 2 + 8 bytes (16-bit weights
//   and gradients, fp32 Adam m and v). ZeRO stage 3 shards the base too.
//   Activations are taken as in full training: an upper bound (the frozen
//   layers' inputs are still needed for the adapters' and the input
//   gradients).
// Activations per layer (16-bit, s' = s/cp tokens, units of s'·b·h bytes):
//   replicated across TP (sharded with SP): 2 norm inputs 4, QKV input 2,
//     FC1 input 2, two dropout masks 2                         = 10
//   sharded across TP: Q 2, K and V 4·g/a, out-proj input 2, FC1 output
//     2·w/h (w = f, 2f for SwiGLU), FC2 input 2·f/h            = 24 for GPT
//   attention core (activation_memory.h AttentionCoreUnits; dropped by selective recompute):
//     unfused: 5·a·s'/h (softmax output, its dropout mask and the dropout
//       output over the a·s'² scores; Korthikanti's accounting, pre-Flash);
//     flash (default): 4·a/h, the fp32 logsumexp per head and token that
//       FlashAttention keeps; Q, K, V and the output are counted above.
//   full recompute keeps only the layer input: 2 (÷ tp with SP). By method
//   (ShardSpec::recompute_method, over the stage's v chunks): block keeps
//   that for the first recompute_num_layers layers of each chunk and the
//   whole layer (as without recompute) for the others; uniform keeps one per
//   group of recompute_num_layers layers, plus, once, the replayed group's
//   other n − 1 layers whole while its backward runs.
// Pipeline (first stage by default): layers of the stage × in-flight
//   micro-batches min(m, p − stage), × (1 + (p−1)/(p·v)) when interleaved; plus
//   the embedding input (8 B/token) and dropout mask per in-flight micro-batch on
//   the first stage, and the LM-head input and fp32 logits (4·s'·b·(h + V/t)) on
//   the last.
// Activation offload to host memory (MemoryInputs::cpu_offload_layers = N,
//   Megatron-Core cpu_offloading_num_layers through Transformer Engine's
//   get_cpu_offload_context; strategies/activation_offload.h): the saved
//   activations of the first N layers leave the GPU once copied to the host,
//   and come back one layer at a time before their backward. The peak, at the
//   start of the backward, holds the L − N kept layers plus the one offloaded
//   layer being reloaded: the stage's layer activations drop by N − 1 layers.
//   Only with p = 1 and no recompute (Megatron-Core refuses the others).
// ZeRO-3 / FSDP working set, counted in `other`: two layers of parameters
//   gathered in 16 bits (the current one and the prefetched next, as the step
//   builder issues them) and one layer's unsharded gradient before its
//   reduce-scatter. On a mixture-of-experts layer that is the dense part
//   (÷ tp) plus the rank's experts (÷ tp·ep), the experts only when the
//   expert-data-parallel group (dp·cp/ep) shards them.
// Context parallelism: every activation term above uses s' = s/cp; the ring
//   attention adds its K/V receive buffers, 2 x (K/V + dK/dV) chunks of
//   b·s'·2·(g/t)·d 16-bit values (Transformer Engine double-buffers the ring).
// FP8 (Transformer Engine): 16-bit weights as above plus the cached FP8 copy
//   of each transformer linear weight and its transpose, 2 B per such
//   parameter (TE Linear keeps weight_fp8 and weight_t_fp8 across the
//   micro-batches of a step; transformer_engine/pytorch/module/linear.py).
//   Gradients and optimizer states are unchanged (fp32 main grads, Adam).
//   Activations are counted 16-bit (TE saves some GEMM inputs in FP8: an
//   upper bound).
// MoE activations: the MLP's sharded terms (FC1 output, FC2 input) hold
//   k·capacity_factor routed copies of each token, plus the permuted expert
//   input 2·k·cf (units of s'·b·h; gathered over tp, so whole on every TP
//   rank) and the fp32 router probabilities 4·E/h (÷ tp: each rank routes its
//   own sequence-parallel shard).
//
// Example:
//   models::MemoryInputs in{.model = *catalog.Find("gpt3-175b"),
//                           .shard = {.tensor_parallel = 8, .sequence_parallel = true,
//                                     .recompute = models::Recompute::kSelective},
//                           .pipeline_parallel = 8, .virtual_pipeline = 3,
//                           .num_microbatches = 64};
//   if (absl::Status s = models::ValidateMemoryInputs(in); !s.ok()) return s;
//   models::MemoryBreakdown m = models::EstimateMemory(in);   // m.Total()
#ifndef CLUSTERSIM_MODELS_MEMORY_MODEL_H_
#define CLUSTERSIM_MODELS_MEMORY_MODEL_H_

#include "absl/status/status.h"
#include "models/dtype.h"
#include "models/finetune.h"
#include "models/transformer_config.h"
#include "models/workload.h"
#include "sim/units.h"

namespace clustersim::models {

// Fixed per-process memory outside the model.
struct MemoryOverheads {
  // CUDA context and kernel images of a PyTorch process: an assumption
  // (commonly 300-600 MiB as reported by nvidia-smi for an idle process;
  // unverified here).
  sim::Bytes cuda_context = sim::MiB(500);
  // cuBLAS workspace; the cuBLAS documentation recommends at least 32 MiB on
  // Hopper (CUBLAS_WORKSPACE_CONFIG); smaller parts need less.
  sim::Bytes gemm_workspace = sim::MiB(32);
};

struct MemoryInputs {
  TransformerConfig model;
  ShardSpec shard;
  int pipeline_parallel = 1, data_parallel = 1, virtual_pipeline = 1, num_microbatches = 1;
  bool distributed_optimizer = false;
  int zero_stage = 0;
  // Data-parallel ranks the model states are sharded over (hybrid sharding:
  // strategies::ParallelConfig::data_parallel_shard); 0: all of them.
  int data_parallel_shard = 0;
  // ZeRO-3 keeps the embedding and output layer gathered from the first
  // micro-batch's forward to the optimizer step (Megatron-FSDP; the stack
  // profile's megatron_fsdp): their whole 16-bit weights are held
  // next to the shards.
  bool keep_non_layer_gathered = false;
  // Added: which pipeline stage to account (0 = the first, the most loaded
  // under 1F1B), Megatron's fp32 main gradients vs 16-bit gradients, overheads.
  int pipeline_stage = 0;
  Dtype main_grad_dtype = Dtype::kFp32;
  MemoryOverheads overheads;
  // Added: full training or LoRA / QLoRA fine-tuning (finetune.h).
  FinetuneSpec finetune;
  // Layers whose saved activations are offloaded to host memory (see the
  // header comment); 0: none. In [0, num_layers) with pipeline_parallel 1
  // and no recompute.
  int cpu_offload_layers = 0;
};

struct MemoryBreakdown {
  sim::Bytes weights, gradients, optimizer, activations, other;
  sim::Bytes ModelStates() const { return weights + gradients + optimizer; }
  sim::Bytes Total() const { return ModelStates() + activations + other; }
};

// InvalidArgument naming the field: the model and shard (ValidateShard),
// sizes < 1, zero_stage outside 0..3, pipeline_stage outside [0, p), more
// stages than layers, main_grad_dtype not fp32/bf16/fp16, ep not dividing
// dp·cp, an invalid finetune spec.
absl::Status ValidateMemoryInputs(const MemoryInputs& in);

// Weights, gradients and optimizer bytes for `params_on_rank` parameters
// (already divided by tp and pipeline), sharded by ZeRO stage `zero_stage`
// over `shard_group` ranks. Training dtype `dtype` sets weight and optimizer
// bytes; `main_grad_dtype` the gradient bytes.
MemoryBreakdown ModelStateMemory(double params_on_rank, Dtype dtype, Dtype main_grad_dtype,
                                 int zero_stage, int shard_group);

// REQUIRES: ValidateMemoryInputs(in).ok(). For the stage `in.pipeline_stage`.
MemoryBreakdown EstimateMemory(const MemoryInputs& in);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_MEMORY_MODEL_H_
