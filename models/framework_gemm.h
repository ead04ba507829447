// File: models/framework_gemm.h
//
// How fast GEMMs run in a sustained training step, relative to the GEMM
// ceilings of the GPU catalog and calibrations. Those ceilings are short
// best-shape benchmarks (MAMF: the best of a brute-force shape search, 100
// iterations after 50 warm-up [MLE-acc]); the kernel model already charges
// each GEMM for its shape (wave quantisation, small dimensions). What the
// benchmarks leave out is a training step's steady state: minutes of
// back-to-back kernels at the board's power limit, where the SM clock settles
// below the short-run boost. This is fitted, not measured.
//
// Source: see kFrameworkGemmFactor below and tests/validation/fit_gemm_factor.sh.
// Overridable per scenario (training.framework_gemm_factor; 1 = the
// benchmark's rate). The serving simulator keeps the benchmark rate (its
// validation is separate).
#ifndef CLUSTERSIM_MODELS_FRAMEWORK_GEMM_H_
#define CLUSTERSIM_MODELS_FRAMEWORK_GEMM_H_

namespace clustersim::models {

// Fit (tests/validation/fit_gemm_factor.sh): training split, the even rows
// (55 of 109) of vTrain's multi-node table (Megatron-DeepSpeed, A100, 64-512
// GPUs, 3.6B-175B); grid 0.86-1.00: 10.0% at 1, lowest 6.9% at 0.90 and 0.91
// (the tie goes to the value nearer the benchmark), 7.0% at 0.92. Held out:
// the odd rows, 11.0% -> 8.4%; NAR21 and KOR22 (A100, Megatron-LM 2021-22)
// 6.8% -> 3.3% (fitted on those 22 rows alone the optimum is the same 0.91);
// MCORE24 (H100 BF16) 15.9% -> 10.2%; NEMO2407 (H100 FP8) 7.6% -> 7.8%.
// The host launch time (strategies/host_overhead.h) is fitted on vTrain's
// single-node table with this factor in force; the two were refitted in turn
// until neither moved (host 80 -> 70 us/op, then this factor stayed 0.91).
// The attention factor (framework_attention.h) is fitted after both (0.62,
// unchanged). At 0.91 the A100's BF16/FP16 GEMMs run at 0.79 of peak (MAMF
// 0.869) and the H100's BF16 at 0.77 (calibrated 0.844).
inline constexpr double kFrameworkGemmFactor = 0.91;

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_FRAMEWORK_GEMM_H_
