// Attention without cuDNN: the kernels of an unfused attention (what a
// framework runs when no fused kernel applies), each timed and recorded as
// what it is, a batched GEMM or a memory-bound row kernel:
//   forward   S = Q·K^T (m=s, n=s, k=d), P = softmax(S) (causal), O = P·V (m=s, n=d, k=s)
//   backward  dV = P^T·dO, dP = dO·V^T, dS = P*(dP - rowsum(dP*P)), dQ = dS·K, dK = dS^T·Q
// The backward GEMMs have the forward's two shapes. A FlashAttention-class
// fused kernel (cuDNN SDPA) is not measured here: the kernel model's attention
// efficiency keeps its literature fallback until it is.
#include <cstdio>

#include "validator.h"

namespace validator {

void RunAttention(Context& ctx, double budget_fraction) {
  // b·heads = 32 (Llama-3-8B's 32 heads at micro-batch 1, tp 1).
  constexpr int64_t kBatchHeads = 32;
  for (int64_t d : {int64_t{128}, int64_t{64}}) {
    for (int64_t s : {int64_t{1024}, int64_t{2048}, int64_t{4096}, int64_t{8192}}) {
      if (ctx.budget->Exhausted(budget_fraction)) return;
      const std::string tag = "s" + std::to_string(s) + " d" + std::to_string(d);
      MeasureGemm(ctx, "attention q.k^T " + tag, "bf16", s, s, d, kBatchHeads);
      MeasureGemm(ctx, "attention p.v " + tag, "bf16", s, d, s, kBatchHeads);
      MeasureSoftmax(ctx, "attention causal softmax " + tag, kBatchHeads * s, s, true, false);
      MeasureSoftmax(ctx, "attention softmax backward " + tag, kBatchHeads * s, s, false, true);
    }
  }
  std::printf("attention (unfused) kernels done at %.0f s\n", ctx.budget->ElapsedSeconds());
}

}  // namespace validator
