// File: models/memory_verdict.h
//
// Whether a rank's memory fits its GPU and, if not, which term is the biggest
// and one change that fixes it. Remedies are tried, not guessed: each
// candidate change is applied to the MemoryInputs and re-estimated with
// EstimateMemory; the first (in the order below) that brings the total under
// capacity wins, otherwise the one that lowers the total most, with the
// shortfall stated. Candidates, by biggest term:
//   activations: FlashAttention (unfused attention without recompute: it
//     drops the s² scores, named with their size); selective recompute;
//     sequence parallelism (tp > 1); both; block recompute of the fewest
//     layers per model chunk that fits (SmallestBlockRecompute; when the
//     schedule allows it and it leaves some layer unreplayed);
//     halve the micro-batch; full recompute;
//   optimizer:   the distributed optimizer (dp·cp > 1); QLoRA (LoRA runs);
//   gradients:   ZeRO stage 2 (dp·cp > 1); QLoRA (LoRA runs);
//   weights:     QLoRA (LoRA runs); ZeRO stage 3 (dp·cp > 1);
//   any term, then: raise tp to 2/4/8 (within an 8-GPU node, dividing the
//     model), raise pp (x2, x4); both take the factor from data_parallel
//     when it divides it (same GPU count).
//   other (the fixed per-process overhead): none; use a GPU with more memory.
//
// Example:
//   models::MemoryBreakdown m = models::EstimateMemory(in);
//   models::MemoryVerdict v = models::JudgeMemory(in, m, gpu.memory);
//   if (!v.fits) std::cout << v.biggest_term << ": " << v.remedy << "\n";
//   // "activations: enable selective recompute (--recompute-granularity
//   //  selective): peak 61.2 GiB of 80.0 GiB"
#ifndef CLUSTERSIM_MODELS_MEMORY_VERDICT_H_
#define CLUSTERSIM_MODELS_MEMORY_VERDICT_H_

#include <optional>
#include <string>

#include "models/memory_model.h"
#include "sim/units.h"

namespace clustersim::models {

struct MemoryVerdict {
  bool fits = false;
  std::string biggest_term;  // "weights" | "gradients" | "optimizer" | "activations" | "other"
  std::string remedy;        // empty when it fits
  // Whether the remedies ran SmallestBlockRecompute, and its answer, so that a
  // caller building the block-recompute strategy need not bisect again.
  bool block_recompute_tried = false;
  std::optional<int> block_recompute_layers;
};

// What the remedies may change beyond the memory model's own inputs.
struct RemedyOptions {
  // Block recompute needs a schedule that runs each layer's backward whole
  // (strategies::ParallelConfig::AllowsBlockRecompute; not zb-h1).
  bool block_recompute = true;
};

// REQUIRES: ValidateMemoryInputs(in).ok(), m == EstimateMemory(in).
MemoryVerdict JudgeMemory(const MemoryInputs& in, const MemoryBreakdown& m, sim::Bytes capacity,
                          RemedyOptions options = {});

// Megatron-Core's block recompute (--recompute-granularity full
// --recompute-method block --recompute-num-layers N: full recompute of the
// first N layers of each model chunk, the others kept whole): the smallest N
// with which `in` fits `capacity` by EstimateMemory, or nullopt when none
// does or the first that does replays every layer of the accounted stage
// (then full recompute is the change). The peak falls as N grows, so N is
// found by bisection. REQUIRES: ValidateMemoryInputs(in).ok().
std::optional<int> SmallestBlockRecompute(const MemoryInputs& in, sim::Bytes capacity);

// `in` with block recompute of the first `num_layers` layers of each chunk.
MemoryInputs WithBlockRecompute(const MemoryInputs& in, int num_layers);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_MEMORY_VERDICT_H_
