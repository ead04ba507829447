// File: models/finetune_ops.h
//
// What LoRA / QLoRA fine-tuning (finetune.h) changes in the ops of a training
// step (workload.h), and in its FLOP count.
//
// ApplyFinetune rewrites a full-training Workload:
//  * The frozen base needs no weight gradients: every "<gemm>_wgrad" of the
//    transformer linears (qkv, out_proj, fc1, fc2, router, experts) and of the
//    LM head is dropped, and so is the embedding table's gradient
//    (embedding_bwd). Input gradients (dgrad) stay: they carry the gradient to
//    the adapters below. The sequence-parallel re-gather of a column-parallel
//    input for wgrad stays (the adapter's A needs it for its own dW).
//  * Every targeted module gets its adapter (Hu et al. 2021, arXiv 2106.09685;
//    PEFT's LoraLayer.forward: result + lora_B(lora_A(x)) · scaling), after
//    its base GEMM in forward (and in the recomputed forward):
//      lora_<module>_a  x·A   (m x r x in)
//      lora_<module>_b  ·B    (m x out x r)
//      lora_<module>_add      memory-bound, PyTorch eager: ·scaling (read,
//                             write m·out) and + result (read 2, write 1)
//    and after its base dgrad in backward: lora_<module>_b_dgrad,
//    lora_<module>_b_wgrad, lora_<module>_a_dgrad, lora_<module>_a_wgrad and
//    lora_<module>_bwd_add (scaling backward over m·out, 2 passes, and the
//    accumulation of the adapter's dX into the base dX over m·in, 3 passes).
//    Shapes follow finetune.h's tensor-parallel split: `in` is the base GEMM's
//    k and `out` the module's share of its n (Q, K and V share the fused
//    qkv_gemm; gate and up share fc1_gemm). The tiny all-reduce of a
//    row-parallel adapter's m x r partial sums is not modelled.
//  * QLoRA: before each use of a 4-bit weight (forward, recomputed forward,
//    dgrad) bitsandbytes' MatMul4Bit dequantises it to 16 bits
//    (dequantize_4bit, then a 16-bit matmul): nf4_dequant_<gemm>, a
//    memory-bound op reading kNf4BytesPerParameter (NF4 codes, blocksize 64,
//    double-quantised absmax; QLoRA paper §3, Dettmers et al. 2023, arXiv
//    2305.14314) and writing 2 B per weight. The LM head is not quantised
//    (bitsandbytes / transformers skip lm_head).
// Everything is costed by the kernel model like any other op.
//
// FLOP convention for fine-tuning (FinetuneModelFlops): Megatron's model
// FLOPs (flops.h) less the weight-gradient GEMMs that are not run (one
// forward's worth of the layer GEMMs and of the LM head), plus the adapters'
// forward, dgrad and wgrad (3 x 2·r·(in + out) per token per module). For a
// dense model that is ~4·N·T for the base instead of 6·N·T, plus the
// attention core (forward and backward, as in full training).
//
// Example:
//   absl::StatusOr<Workload> w = BuildWorkload(config, shard);
//   if (auto st = ApplyFinetune(config, finetune, shard, &*w); !st.ok()) return st;
#ifndef CLUSTERSIM_MODELS_FINETUNE_OPS_H_
#define CLUSTERSIM_MODELS_FINETUNE_OPS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "models/finetune.h"
#include "models/transformer_config.h"
#include "models/workload.h"

namespace clustersim::models {

// Adapter optimizer step per trainable parameter (AdamW over 16-bit adapter
// weights and gradients with fp32 m and v, finetune.h): read w, g, m, v;
// write w, m, v; one more gradient read for the global-norm clip.
inline constexpr double kAdapterOptimizerStepBytes =
    2 * kAdapterWeightBytes + 2 * kAdapterGradientBytes + 2 * kAdapterOptimizerBytes;

// No-op for full training. InvalidArgument (naming the training.* field) when
// the spec does not fit the model.
absl::Status ApplyFinetune(const TransformerConfig& c, const FinetuneSpec& f, const ShardSpec& s,
                           Workload* w);

// Trainable adapter parameters of the whole model (no parallelism).
double AdapterParameters(const TransformerConfig& c, const FinetuneSpec& f);

// Model FLOPs of one fine-tuning step over `global_batch` sequences (the
// convention above); MegatronModelFlops for full training.
// REQUIRES: ValidateTransformer(c).ok(), ValidateFinetune(c, f).ok().
double FinetuneModelFlops(const TransformerConfig& c, const FinetuneSpec& f,
                          int64_t global_batch);

// Recomputed forward work on top of FinetuneModelFlops (hardware FLOPs):
// Megatron's recompute count plus, with full recompute, the adapters' forward.
double FinetuneHardwareFlops(const TransformerConfig& c, const FinetuneSpec& f,
                             int64_t global_batch, Recompute r);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_FINETUNE_OPS_H_
