// File: models/framework_attention.h
//
// How fast fused attention runs inside a training framework, relative to the
// standalone kernel a calibration measured. The H100 calibration's attention
// efficiencies come from a microbenchmark (cuDNN's fused attention in the
// FlashAttention-3 paper, arXiv 2407.08608, mid-2024: forward 0.540 and
// backward 0.505 of dense peak); the 2024 Megatron-Core and NeMo runs we
// validate against reached about half of that. Evidence that the gap is the
// attention rate and not the rest of the step: the attention-dominated long
// context rows (NeMo, Llama 2 7B at 32K-1M tokens, where attention is 60-95%
// of the FLOPs) were 35-57% too fast at the microbenchmark rate, while their
// 4K row (mostly GEMMs) was within 6%; TE users report its cuDNN attention
// at FlashAttention-2's level in practice (github.com/NVIDIA/TransformerEngine
// issue #1113, cuDNN 9.1, August 2024); cuDNN 9.0's release notes claim its
// Hopper flash attention is up to 50% faster than 8.9.7, i.e. the kernel's
// rate moved a lot across the versions these runs used.
//
// Source: fitted, not measured. The training split is the four NEMOLONG rows
// of tests/validation/published-runs.csv (NeMo long-context table, H100,
// context parallelism up to 32); everything else is held out, in particular
// MCORE24 (Megatron-Core r0.8, BF16) and NEMO2407 (NeMo 24.07, FP8), the
// other H100 training rows. tests/validation/fit_attention_factor.sh
// reproduces the grid search and prints both splits.
//
// It multiplies only attention efficiencies that a calibration fitted to
// standalone kernels (today: H100); spec-fallback efficiencies are already
// in-framework figures. Overridable per scenario
// (training.framework_attention_factor; 1 = the standalone kernel's rate).
// The serving simulator keeps the standalone rate (its frameworks run other
// attention kernels; its validation is separate).
#ifndef CLUSTERSIM_MODELS_FRAMEWORK_ATTENTION_H_
#define CLUSTERSIM_MODELS_FRAMEWORK_ATTENTION_H_

namespace clustersim::models {

// Fit (grid 0.40-1.00, step 0.02 near the optimum), with the GEMM factor
// (framework_gemm.h) and host times in force: training MAPE 32.5% at 1 (the
// standalone kernel), lowest at 0.62: 2.8% (0.60: 4.8%, 0.64: 3.0%). Held
// out: MCORE24 14.2% -> 10.2%, NEMO2407 8.4% -> 7.8%, all 39 held-out rows
// 6.9% -> 5.8% (KOR22 and NAR21, A100 with unfused attention, do not move).
// First fitted before the GEMM factor existed, it was 0.62 then too (34.7% ->
// 2.2%; MCORE24 20.6 -> 15.9%, NEMO2407 10.6 -> 7.6%). The H100 rate in
// force: forward 0.335, backward 0.313 of dense BF16 peak (331 / 310 TFLOPS),
// FlashAttention-2's H100 level in the same paper (causal forward 298-335
// TFLOPS). Stability check (before the GEMM factor), not used for the value:
// fitted on NEMO2407 alone the optimum is 0.55 (6.8%); MCORE24 alone keeps
// improving down to 0.40 (10.1%), its small models being too fast for more
// reasons than attention.
inline constexpr double kFrameworkAttentionFactor = 0.62;

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_FRAMEWORK_ATTENTION_H_
