// File: models/kernel_model.h
//
// How long one op takes on one GPU. Every OpCost says where its number came
// from: "measured" (an exact shape of the calibration's measured table),
// "fitted" (the formulas below with parameters fitted to measurements by
// `clustersim calibrate`, see calibration.h) or "spec_fallback" (the formulas
// with the spec-sheet / literature parameters of KernelModelParams).
//
//  GEMM       time = max(flops / (peak(dtype) · ceiling · gemm_factor · sustained · wave_util),
//                        bytes / (bandwidth · bandwidth_fraction)) + kernel_overhead
//             ceiling: the GPU's measured max-achievable-matmul fraction (MAMF);
//             sustained: the GPU's sustained / burst rate of GEMMs of the op's
//             input type at its power limit (models/power_model.h; training
//             and serving); gemm_factor: the stack's (an FP8 GEMM also
//             takes its recipe's kernel rate, KernelModelParams::
//             fp8_recipe_gemm_factor);
//             wave_util: tiles over SMs, best of a few cuBLAS-like tile shapes;
//             the memory roofline is the small-dimension penalty: a GEMM with a
//             small M, N or K cannot reuse its operands and streams them from HBM
//             (it reproduces the H100 small-M points of [VLLM-49363]). An op with
//             Op::roofline_overlap p > 0 (the serving MoE grouped expert GEMMs)
//             takes (c^p + m^p)^(1/p) of the two terms instead of their max.
//  Attention  time = max(flops · causal_fraction / (peak · attention_efficiency),
//                        bytes / (bandwidth · bandwidth_fraction)) + kernel_overhead
//             FLOPs are counted unmasked; a causal kernel computes about half,
//             and a sliding-window one (Op::window) only the tiles its window
//             touches (models/attention_window.h), averaged over Op::window_share.
//             A calibration with attention points gives the efficiency as a
//             curve of the op's query length per rank (op.m, after the
//             context-parallel split; models/attention_curve.h), else one
//             constant per direction. A calibrated (microbenchmark) efficiency is scaled by
//             params.framework_attention_factor (models/data/frameworks.textproto).
//             Every attention efficiency, calibrated or fallback, is then scaled
//             by the stack's kernel against FlashAttention-2
//             (params.attention_kernel_forward / _backward).
//  Triton tiles  a GEMM op with Op::tile_efficiency > 0 (the SSD scan kernels):
//             time = max(flops / (peak · tile_efficiency),
//                        bytes / (bandwidth · bandwidth_fraction)) + kernel_overhead
//             (the sourced efficiency is the op's; no calibration replaces it).
//  Memory-bound  time = bytes / (bandwidth · bandwidth_fraction) + kernel_overhead
//
// With a calibration, each fitted parameter replaces its fallback: per dtype
// the GEMM ceiling, small-tile and unaligned efficiency (a GEMM whose k or n is
// not a multiple of 16 bytes misses cuBLAS's aligned tensor-core kernels;
// fallback 1.0, no penalty) and the attention forward/backward efficiency
// (attention_bwd ops are recognised by name, see IsAttentionBackward); per GPU
// the GEMM small-dimension bandwidth fraction, the memory-bound bandwidth
// fraction (also the attention roofline) and the kernel overhead. An op is
// "fitted" when its deciding parameter was fitted: the dtype's GEMM ceiling,
// the attention efficiency of its direction, or the memory-bound fraction.
//
// OpCost.efficiency is the achieved fraction of the dtype's dense peak for the
// FLOPs executed (GEMM: the op's flops; causal attention: the unmasked blocks
// only), or of the spec memory bandwidth (memory-bound ops).
//
// Example:
//   const models::GpuSpec* gpu = *models::GpuCatalog::Default().Find("a100-sxm4-80gb");
//   models::KernelModel kernels(*gpu);
//   models::OpCost c = kernels.Cost(op);   // c.time, c.source, c.detail
//   models::KernelModel calibrated(*gpu, {}, models::Calibration::Shipped(gpu->name));
#ifndef CLUSTERSIM_MODELS_KERNEL_MODEL_H_
#define CLUSTERSIM_MODELS_KERNEL_MODEL_H_

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "models/attention_curve.h"
#include "models/calibration.h"
#include "models/dtype.h"
#include "models/gpu_catalog.h"
#include "models/workload.h"
#include "sim/units.h"

namespace clustersim::models {

enum class CostSource { kMeasured, kFitted, kSpecFallback };
std::string_view CostSourceName(CostSource s);  // "measured" | "fitted" | "spec_fallback"

struct OpCost {
  sim::Duration time;
  double efficiency = 0;
  CostSource source = CostSource::kSpecFallback;
  std::string_view detail;  // which formula; static storage
};

// Every tunable number of the spec-fallback model, with its source.
struct KernelModelParams {
  // Achieved fraction of spec HBM/GDDR bandwidth for streaming kernels. Derived
  // from the H100 M=1 GEMM point (N=12288, K=5376, BF16: 2.87 TFLOPS [VLLM-49363]),
  // which streams its 132 MB weight in 46.0 µs = 2.87 TB/s = 86% of 3.35 TB/s;
  // STREAM-style copies typically reach 80-90% (unverified).
  double memory_bandwidth_fraction = 0.85;
  // Fixed cost per kernel on the GPU (launch gap and ramp-up). Asynchronous
  // launches hide the ~5 µs CPU launch latency in steady state; 2 µs is an
  // assumption (unverified), within the error of the H100 small-M points.
  sim::Duration kernel_overhead = sim::Nanoseconds(2000);
  // FlashAttention fraction of dense peak. Literature fallback: the
  // FlashAttention-2 paper (Dao 2023, arXiv 2307.08691) reports 50-73% of peak
  // forward on A100; 0.6 is the middle, used for forward and backward alike. On
  // H100, FlashAttention-3 (Shah et al. 2024, arXiv 2407.08608) reports up to 75%
  // BF16 forward while FlashAttention-2 reaches ~35%.
  double attention_efficiency = 0.6;
  // FlashAttention skips fully masked blocks: a causal square attention of
  // n_blk = ceil(seq/128) query blocks computes (n_blk + 1) / (2·n_blk) of the
  // unmasked work; 128 is FlashAttention-2's block size on A100/H100.
  int attention_block = 128;
  // Small tiles lose operand reuse; 0.9 for 128x128 against 128x256 is an
  // assumption (uncalibrated) that only matters when it wins the wave count.
  double small_tile_efficiency = 0.9;
  // Multiplies the attention efficiencies a calibration fitted to standalone
  // kernels (not the fallback above): the rate attention reaches inside a
  // training framework relative to its microbenchmark. 1 costs the standalone
  // kernel; training runs pass their stack profile's (models/framework_profile.h).
  double framework_attention_factor = 1.0;
  // The stack's attention kernel against FlashAttention-2, forward and
  // backward (llm-foundry's Triton kernel runs slower): multiplies the
  // attention efficiency on every GPU, calibrated or fallback. 1: FlashAttention-2.
  double attention_kernel_forward = 1.0;
  double attention_kernel_backward = 1.0;
  // Multiplies every GEMM ceiling (fitted, measured or catalog): the stack's
  // software efficiency, the fraction of the GPU's sustained rate its GEMMs
  // reach. 1: no loss; training runs pass their stack profile's
  // (models/framework_profile.h).
  double framework_gemm_factor = 1.0;
  // Multiplies every GEMM ceiling too, by the GEMM's input type (indexed by
  // DtypeIndex): the GPU's sustained rate of such GEMMs under minutes of
  // back-to-back GEMMs at its default power limit over the short burst the
  // ceilings measured (PowerModel::Sustained). 1 costs the burst; training
  // and serving runs pass their GPU's.
  std::array<double, kAllDtypes.size()> sustained_gemm_ratio = [] {
    std::array<double, kAllDtypes.size()> burst{};
    burst.fill(1.0);
    return burst;
  }();
  // true: attention efficiencies (calibrated or fallback) also take
  // sustained_gemm_ratio of the attention's input type (16-bit in every run):
  // the stack's attention factor is a ratio of burst kernel benchmarks, and
  // a training step's attention runs at the clock its GEMMs hold the board at
  // (FrameworkProfile::attention_at_sustained_clock). false: the burst rates,
  // or a factor fitted on training steps that already includes the clock.
  bool attention_at_sustained_clock = false;
  // Multiplies the FP8 GEMM ceiling: the rate of the run's FP8 recipe's GEMM
  // kernels against per-tensor-scaled FP8 ones (Fp8GemmRateFactor,
  // models/fp8_recipe.h). 1: per-tensor scaling.
  double fp8_recipe_gemm_factor = 1.0;
  // true (training under NVFP4): FP4 GEMMs reach the fraction of the FP4 peak
  // that MXFP8's block-scaled GEMMs reach of the FP8 peak: FP8's ceiling
  // (calibrated or catalog), FP8's sustained-clock ratio and MXFP8's kernel
  // rate (Fp8GemmRateFactor). Inferred: no sustained or ceiling measurement
  // of an NVFP4 GEMM is in our sources, and FP4 tensor cores, twice FP8's
  // math per clock, settle at least as low as FP8's under the same limit.
  // false (serving's W4A4 GEMMs): the catalog's FP4 fallback.
  bool fp4_gemm_as_mxfp8 = false;
  // Multiplies the tensor-core rate of GEMM and attention kernels (not their
  // HBM roofline): the SM clock under a board power cap over the clock held
  // at the default limit (models/power_model.h). 1: no cap.
  double compute_clock_ratio = 1.0;
};

// Fraction of SM slots that do useful work for a GEMM of batch x (m x n) output
// tiled `tile_m` x `tile_n`: tiles = ceil(m/tile_m)·ceil(n/tile_n)·batch,
// waves = ceil(tiles / sm_count), utilisation = tiles / (waves · sm_count).
double WaveUtilization(int64_t m, int64_t n, int64_t batch, int tile_m, int tile_n, int sm_count);

// A GEMM's time from its compute and memory times: max(c, m), or with
// `overlap` p > 0 (Op::roofline_overlap) (c^p + m^p)^(1/p), which is max(c, m)
// when one dominates and 2^(1/p)·c when they are equal.
double RooflineSeconds(double compute_s, double memory_s, double overlap);

class KernelModel {
 public:
  // `gpu` must outlive the model.
  explicit KernelModel(const GpuSpec& gpu, KernelModelParams params = {});
  // `calibration` may be nullptr (same as the constructor above); otherwise it
  // must outlive the model and be for this GPU (calibration->gpu() == gpu.name).
  KernelModel(const GpuSpec& gpu, KernelModelParams params, const Calibration* calibration);

  // REQUIRES: op.kind != OpKind::kCollective; for GEMM and attention ops,
  // CheckDtypeSupported(gpu, op.dtype).ok().
  OpCost Cost(const Op& op) const;

  // A GEMM run as `chunks` GEMMs over row slices of M (the same N and K), up
  // to `concurrent` at a time on separate streams: Transformer Engine's
  // ring-exchange TP overlap computes on each rank's slice as it arrives, on
  // NVTE_COMM_OVERLAP_MAX_STREAMS (3) compute streams in turn. Chunks that run
  // together share the SMs, so each group of `concurrent` chunks is costed by
  // Cost() as one GEMM of their rows (its wave quantisation and one kernel
  // overhead); the groups run one after another. Bytes scale with the rows
  // (the weight re-read is not added: these GEMMs are compute-bound).
  // chunks <= concurrent is Cost(op).
  // REQUIRES: op.kind == OpKind::kGemm, chunks >= 1, concurrent >= 1.
  OpCost RowSplitCost(const Op& op, int chunks, int concurrent = 1) const;

  // True when the op's time is its tensor-core term (GEMM and attention whose
  // compute term beats the HBM roofline, by the formulas even for a measured
  // shape); false for memory-bound ops and collectives.
  bool IsComputeBound(const Op& op) const;

  const GpuSpec& gpu() const { return gpu_; }
  const KernelModelParams& params() const { return params_; }
  const Calibration* calibration() const { return calibration_; }

 private:
  // The parameter values in force for one dtype, fitted or fallback.
  struct Resolved {
    double gemm_ceiling = 0, small_tile_efficiency = 0, unaligned_efficiency = 1;
    // What multiplies a standalone GEMM rate: the stack's factor, the
    // sustained-clock ratio and, for FP8, the recipe's kernel rate.
    double gemm_scale = 1;
    double attention_fwd_efficiency = 0, attention_bwd_efficiency = 0;
    bool gemm_fitted = false, attention_fwd_fitted = false, attention_bwd_fitted = false;
    // The calibration's efficiency by sequence length (empty: the constant
    // above) and what multiplies it or a measured kernel's rate: the
    // in-framework, sustained-clock and kernel factors.
    std::vector<SeqEfficiency> attention_fwd_curve, attention_bwd_curve;
    double attention_fwd_scale = 1, attention_bwd_scale = 1;
  };

  // The sustained-clock ratio attention of input type `d` runs at: the GPU's
  // sustained GEMM ratio with attention_at_sustained_clock, else 1.
  double AttentionClockRatio(Dtype d) const {
    return params_.attention_at_sustained_clock ? params_.sustained_gemm_ratio[DtypeIndex(d)]
                                                : 1.0;
  }
  OpCost GemmCost(const Op& op) const;
  OpCost BatchedGemmCost(const Op& op) const;  // the batch as one kernel
  OpCost AttentionCost(const Op& op) const;
  OpCost TileCost(const Op& op) const;  // op.tile_efficiency > 0
  OpCost MemoryBoundCost(const Op& op) const;
  double MemorySeconds(sim::Bytes bytes, double fraction) const;

  const GpuSpec& gpu_;
  KernelModelParams params_;
  const Calibration* calibration_ = nullptr;
  std::array<Resolved, kAllDtypes.size()> resolved_{};  // indexed by DtypeIndex
  double gemm_bandwidth_fraction_ = 0, memory_bandwidth_fraction_ = 0;
  bool memory_fitted_ = false;
  sim::Duration kernel_overhead_;
};

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_KERNEL_MODEL_H_
