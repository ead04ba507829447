#include "models/kernel_model.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "models/attention_tiles.h"
#include "models/attention_window.h"
#include "models/fp8_recipe.h"
#include "sim/check.h"

namespace clustersim::models {
namespace {

constexpr std::string_view kGemmCompute =
    "gemm compute-bound: flops/(peak*mamf_ceiling*wave_util) + kernel_overhead";
constexpr std::string_view kGemmMemory =
    "gemm memory-bound (small dimension): bytes/(bandwidth*fraction) + kernel_overhead";
constexpr std::string_view kAttentionCompute =
    "attention: flops*causal_fraction/(peak*flash_attention_efficiency) + kernel_overhead";
constexpr std::string_view kAttentionMemory =
    "attention memory-bound: bytes/(bandwidth*fraction) + kernel_overhead";
constexpr std::string_view kMemoryBound =
    "memory-bound: bytes/(bandwidth*fraction) + kernel_overhead";
constexpr std::string_view kTileCompute =
    "triton tiles: flops/(peak*tile_efficiency) + kernel_overhead";
constexpr std::string_view kTileMemory =
    "triton tiles memory-bound: bytes/(bandwidth*fraction) + kernel_overhead";
constexpr std::string_view kMeasuredShape = "measured: exact shape in the calibration table";

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::string_view CostSourceName(CostSource s) {
  switch (s) {
    case CostSource::kMeasured: return "measured";
    case CostSource::kFitted: return "fitted";
    case CostSource::kSpecFallback: return "spec_fallback";
  }
  return "unknown";
}

double WaveUtilization(int64_t m, int64_t n, int64_t batch, int tile_m, int tile_n,
                       int sm_count) {
  SIM_CHECK(m > 0 && n > 0 && batch > 0 && sm_count > 0) << "empty GEMM " << m << "x" << n;
  const int64_t tiles = CeilDiv(m, tile_m) * CeilDiv(n, tile_n) * batch;
  const int64_t waves = CeilDiv(tiles, sm_count);
  return static_cast<double>(tiles) / static_cast<double>(waves * sm_count);
}

KernelModel::KernelModel(const GpuSpec& gpu, KernelModelParams params)
    : KernelModel(gpu, params, nullptr) {}

KernelModel::KernelModel(const GpuSpec& gpu, KernelModelParams params,
                         const Calibration* calibration)
    : gpu_(gpu), params_(params), calibration_(calibration) {
  SIM_CHECK(calibration == nullptr || calibration->gpu() == gpu.name)
      << "calibration for " << calibration->gpu() << " given to the kernel model of " << gpu.name;
  SIM_CHECK(params.framework_attention_factor > 0 && params.framework_attention_factor <= 1)
      << "framework_attention_factor " << params.framework_attention_factor
      << " is outside (0, 1]";
  SIM_CHECK(params.attention_kernel_forward > 0 && params.attention_kernel_forward <= 1 &&
            params.attention_kernel_backward > 0 && params.attention_kernel_backward <= 1)
      << "attention kernel ratios " << params.attention_kernel_forward << ", "
      << params.attention_kernel_backward << " are outside (0, 1]";
  SIM_CHECK(params.framework_gemm_factor > 0 && params.framework_gemm_factor <= 1)
      << "framework_gemm_factor " << params.framework_gemm_factor << " is outside (0, 1]";
  for (Dtype d : kAllDtypes) {
    const double r = params.sustained_gemm_ratio[DtypeIndex(d)];
    SIM_CHECK(r > 0 && r <= 1) << DtypeName(d) << " sustained_gemm_ratio " << r
                               << " is outside (0, 1]";
  }
  SIM_CHECK(params.fp8_recipe_gemm_factor > 0 && params.fp8_recipe_gemm_factor <= 1)
      << "fp8_recipe_gemm_factor " << params.fp8_recipe_gemm_factor << " is outside (0, 1]";
  const CalibrationParams fit = calibration ? calibration->params() : CalibrationParams{};
  gemm_bandwidth_fraction_ =
      fit.gemm_bandwidth_fraction.value_or(params_.memory_bandwidth_fraction);
  memory_bandwidth_fraction_ =
      fit.memory_bandwidth_fraction.value_or(params_.memory_bandwidth_fraction);
  memory_fitted_ = fit.memory_bandwidth_fraction.has_value();
  kernel_overhead_ = fit.kernel_overhead.value_or(params_.kernel_overhead);
  for (Dtype d : kAllDtypes) {
    const DtypeFit& f = fit.For(d);
    Resolved& r = resolved_[DtypeIndex(d)];
    r.gemm_scale = params_.framework_gemm_factor * params_.sustained_gemm_ratio[DtypeIndex(d)] *
                   (d == Dtype::kFp8 ? params_.fp8_recipe_gemm_factor : 1.0);
    r.gemm_ceiling = f.gemm_ceiling.value_or(gpu_.GemmCeiling(d)) * r.gemm_scale;
    r.gemm_fitted = f.gemm_ceiling.has_value();
    r.small_tile_efficiency = f.small_tile_efficiency.value_or(params_.small_tile_efficiency);
    r.unaligned_efficiency = f.unaligned_efficiency.value_or(1.0);
    // The sustained clock acts on the spec fallback too: a kernel
    // benchmark's rate as well.
    const double clock = AttentionClockRatio(d);
    const double in_framework = params_.framework_attention_factor * clock;
    r.attention_fwd_efficiency = (f.attention_fwd_efficiency
                                      ? *f.attention_fwd_efficiency * in_framework
                                      : params_.attention_efficiency * clock) *
                                 params_.attention_kernel_forward;
    r.attention_fwd_fitted = f.attention_fwd_efficiency.has_value();
    r.attention_bwd_efficiency = (f.attention_bwd_efficiency
                                      ? *f.attention_bwd_efficiency * in_framework
                                      : params_.attention_efficiency * clock) *
                                 params_.attention_kernel_backward;
    r.attention_bwd_fitted = f.attention_bwd_efficiency.has_value();
    r.attention_fwd_curve = f.attention_fwd_curve;
    r.attention_bwd_curve = f.attention_bwd_curve;
    r.attention_fwd_scale = in_framework * params_.attention_kernel_forward;
    r.attention_bwd_scale = in_framework * params_.attention_kernel_backward;
    r.attention_fwd_fitted = r.attention_fwd_fitted || !r.attention_fwd_curve.empty();
    r.attention_bwd_fitted = r.attention_bwd_fitted || !r.attention_bwd_curve.empty();
  }
  if (params_.fp4_gemm_as_mxfp8) {
    const Resolved& fp8 = resolved_[DtypeIndex(Dtype::kFp8)];
    Resolved& fp4 = resolved_[DtypeIndex(Dtype::kFp4)];
    // FP8's scale without the run's own FP8 recipe factor, times MXFP8's.
    const double block = Fp8GemmRateFactor(Fp8Recipe::kMxfp8) / params_.fp8_recipe_gemm_factor;
    fp4.gemm_scale = fp8.gemm_scale * block;
    fp4.gemm_ceiling = fp8.gemm_ceiling * block;
    fp4.small_tile_efficiency = fp8.small_tile_efficiency;
    fp4.unaligned_efficiency = fp8.unaligned_efficiency;
  }
}

OpCost KernelModel::Cost(const Op& op) const {
  if (op.kind == OpKind::kGemm && op.tile_efficiency > 0) return TileCost(op);
  if (calibration_ != nullptr && op.kind != OpKind::kCollective) {
    if (std::optional<sim::Duration> t = calibration_->Measured(op)) {
      // A measured attention kernel ran standalone, like the fitted rates.
      if (op.kind == OpKind::kAttention) {
        const Resolved& r = resolved_[DtypeIndex(op.dtype)];
        const double scale =
            IsAttentionBackward(op) ? r.attention_bwd_scale : r.attention_fwd_scale;
        *t = sim::Duration::FromSecondsDouble(t->ToSeconds() / scale);
      } else if (op.kind == OpKind::kGemm) {
        *t = sim::Duration::FromSecondsDouble(t->ToSeconds() /
                                              resolved_[DtypeIndex(op.dtype)].gemm_scale);
      }
      // Under a cap, a shape the formula finds compute-bound runs at the
      // capped clock.
      if (params_.compute_clock_ratio != 1.0 && IsComputeBound(op)) {
        *t = sim::Duration::FromSecondsDouble(t->ToSeconds() / params_.compute_clock_ratio);
      }
      const double peak = gpu_.PeakFlops(op.dtype);
      return OpCost{*t, peak > 0 ? op.flops.count() / (t->ToSeconds() * peak) : 0,
                    CostSource::kMeasured, kMeasuredShape};
    }
  }
  switch (op.kind) {
    case OpKind::kGemm: return GemmCost(op);
    case OpKind::kAttention: return AttentionCost(op);
    case OpKind::kMemoryBound: return MemoryBoundCost(op);
    case OpKind::kCollective: break;
  }
  SIM_CHECK(false) << "KernelModel::Cost got collective op " << op.name
                   << "; collectives are costed by the network model";
  return {};
}

OpCost KernelModel::RowSplitCost(const Op& op, int chunks, int concurrent) const {
  SIM_CHECK(op.kind == OpKind::kGemm && chunks >= 1 && concurrent >= 1)
      << "RowSplitCost needs a GEMM, chunks >= 1 and concurrent >= 1, got " << op.name << " x"
      << chunks << " (" << concurrent << " at a time)";
  if (chunks <= concurrent || op.m < chunks) return Cost(op);
  const int64_t rows_per_chunk = CeilDiv(op.m, chunks);
  sim::Duration total;
  for (int first = 0; first < chunks; first += concurrent) {
    Op group = op;
    group.m = std::min<int64_t>(op.m - first * rows_per_chunk,
                                rows_per_chunk * std::min(concurrent, chunks - first));
    if (group.m <= 0) break;
    const double rows = static_cast<double>(group.m) / static_cast<double>(op.m);
    group.flops = sim::Flops(op.flops.count() * rows);
    group.bytes = sim::Bytes(static_cast<int64_t>(static_cast<double>(op.bytes.count()) * rows));
    total += Cost(group).time;
  }
  OpCost c = Cost(op);
  c.time = total;
  const double peak = gpu_.PeakFlops(op.dtype);
  c.efficiency = peak > 0 ? op.flops.count() / (total.ToSeconds() * peak) : 0;
  return c;
}

bool KernelModel::IsComputeBound(const Op& op) const {
  switch (op.kind) {
    case OpKind::kGemm:
      if (op.tile_efficiency > 0) return TileCost(op).detail == kTileCompute;
      return GemmCost(op).detail == kGemmCompute;
    case OpKind::kAttention: return AttentionCost(op).detail == kAttentionCompute;
    case OpKind::kMemoryBound:
    case OpKind::kCollective: break;
  }
  return false;
}

double KernelModel::MemorySeconds(sim::Bytes bytes, double fraction) const {
  return static_cast<double>(bytes.count()) / (gpu_.memory_bandwidth_gbs * 1e9 * fraction);
}

double RooflineSeconds(double compute_s, double memory_s, double overlap) {
  if (overlap <= 0) return std::max(compute_s, memory_s);
  return std::pow(std::pow(compute_s, overlap) + std::pow(memory_s, overlap), 1.0 / overlap);
}

// A grouped GEMM run one kernel per entry on `streams` streams: rounds of up
// to `streams` concurrent GEMMs sharing the SMs (each round one launch),
// costed as batched GEMMs of that many entries, one after another.
OpCost KernelModel::GemmCost(const Op& op) const {
  if (op.streams <= 0 || op.batch <= op.streams) return BatchedGemmCost(op);
  auto round = [&op, this](int64_t entries) {
    Op r = op;
    r.batch = entries;
    const double share = static_cast<double>(entries) / static_cast<double>(op.batch);
    r.flops = sim::Flops(op.flops.count() * share);
    r.bytes = sim::Bytes(static_cast<int64_t>(static_cast<double>(op.bytes.count()) * share));
    return BatchedGemmCost(r);
  };
  const OpCost full = round(op.streams);
  OpCost c = full;
  c.time = full.time * (op.batch / op.streams);
  if (const int64_t rest = op.batch % op.streams; rest > 0) {
    const OpCost last = round(rest);
    c.time += last.time;
    if (last.detail != full.detail) c.detail = kGemmCompute;
  }
  const double peak = gpu_.PeakFlops(op.dtype);
  c.efficiency = op.flops.count() / (c.time.ToSeconds() * peak);
  return c;
}

OpCost KernelModel::BatchedGemmCost(const Op& op) const {
  const double peak = gpu_.PeakFlops(op.dtype);
  SIM_CHECK(peak > 0) << gpu_.name << " has no " << DtypeName(op.dtype)
                      << " peak; call CheckDtypeSupported before costing " << op.name;
  const Resolved& r = resolved_[DtypeIndex(op.dtype)];
  // cuBLAS-like choice: the tile shape that fills the SMs best.
  double util = std::max(WaveUtilization(op.m, op.n, op.batch, 128, 256, gpu_.sm_count),
                         WaveUtilization(op.m, op.n, op.batch, 256, 128, gpu_.sm_count));
  util = std::max(util, r.small_tile_efficiency *
                            WaveUtilization(op.m, op.n, op.batch, 128, 128, gpu_.sm_count));
  const int64_t element = BytesPerElement(op.dtype);
  if ((op.k * element) % 16 != 0 || (op.n * element) % 16 != 0) util *= r.unaligned_efficiency;
  const double compute_s =
      op.flops.count() / (peak * r.gemm_ceiling * util * params_.compute_clock_ratio);
  const double memory_s = MemorySeconds(op.bytes, gemm_bandwidth_fraction_);
  const sim::Duration time =
      sim::Duration::FromSecondsDouble(RooflineSeconds(compute_s, memory_s, op.roofline_overlap)) +
      kernel_overhead_;
  return OpCost{time, op.flops.count() / (time.ToSeconds() * peak),
                r.gemm_fitted ? CostSource::kFitted : CostSource::kSpecFallback,
                compute_s >= memory_s ? kGemmCompute : kGemmMemory};
}

OpCost KernelModel::AttentionCost(const Op& op) const {
  const double peak = gpu_.PeakFlops(op.dtype);
  SIM_CHECK(peak > 0) << gpu_.name << " has no " << DtypeName(op.dtype)
                      << " peak; call CheckDtypeSupported before costing " << op.name;
  double work_fraction = 1.0;
  if (op.causal) {
    // Square (no context parallelism): (n_blk + 1) / (2 n_blk). With context
    // parallelism (m < n) the load-balanced chunks also do half the work.
    const int64_t blocks = CeilDiv(op.m, params_.attention_block);
    work_fraction = op.m == op.n ? static_cast<double>(blocks + 1) / (2.0 * blocks) : 0.5;
    const bool windowed_layers = op.window > 0 && op.window_share > 0;
    if (op.m == op.n && gpu_.attention_tiles.known() && (windowed_layers || op.k < 128)) {
      // A query tile's fixed time and head dimension 64's slower tiles
      // (models/attention_tiles.h), measured for this GPU.
      work_fraction = AttentionWorkFraction(gpu_.attention_tiles, IsAttentionBackward(op), op.k,
                                            op.m, op.window, params_.attention_block,
                                            windowed_layers ? op.window_share : 0);
    } else if (windowed_layers) {
      // Windowed layers skip the tiles outside the window too
      // (models/attention_window.h); the op stands for the layers' mean.
      const double windowed =
          op.m == op.n ? CausalTileFraction(op.m, op.window, params_.attention_block)
                       : 0.5 * CausalPairs(op.n, op.window) / CausalPairs(op.n, 0);
      work_fraction = (1 - op.window_share) * work_fraction + op.window_share * windowed;
    }
  }
  const Resolved& r = resolved_[DtypeIndex(op.dtype)];
  const bool backward = IsAttentionBackward(op);
  const std::vector<SeqEfficiency>& curve =
      backward ? r.attention_bwd_curve : r.attention_fwd_curve;
  const double efficiency =
      !curve.empty()
          ? InterpolateEfficiency(curve, op.m) *
                (backward ? r.attention_bwd_scale : r.attention_fwd_scale)
          : (backward ? r.attention_bwd_efficiency : r.attention_fwd_efficiency);
  const bool fitted = backward ? r.attention_bwd_fitted : r.attention_fwd_fitted;
  const double compute_s =
      op.flops.count() * work_fraction / (peak * efficiency * params_.compute_clock_ratio);
  const double memory_s = MemorySeconds(op.bytes, memory_bandwidth_fraction_);
  const sim::Duration time =
      sim::Duration::FromSecondsDouble(std::max(compute_s, memory_s)) + kernel_overhead_;
  return OpCost{time, op.flops.count() * work_fraction / (time.ToSeconds() * peak),
                fitted ? CostSource::kFitted : CostSource::kSpecFallback,
                compute_s >= memory_s ? kAttentionCompute : kAttentionMemory};
}

OpCost KernelModel::TileCost(const Op& op) const {
  const double peak = gpu_.PeakFlops(op.dtype);
  SIM_CHECK(peak > 0) << gpu_.name << " has no " << DtypeName(op.dtype)
                      << " peak; call CheckDtypeSupported before costing " << op.name;
  const double compute_s =
      op.flops.count() / (peak * op.tile_efficiency * params_.compute_clock_ratio);
  const double memory_s = MemorySeconds(op.bytes, memory_bandwidth_fraction_);
  const sim::Duration time =
      sim::Duration::FromSecondsDouble(std::max(compute_s, memory_s)) + kernel_overhead_;
  return OpCost{time, op.flops.count() / (time.ToSeconds() * peak), CostSource::kSpecFallback,
                compute_s >= memory_s ? kTileCompute : kTileMemory};
}

OpCost KernelModel::MemoryBoundCost(const Op& op) const {
  const sim::Duration time =
      sim::Duration::FromSecondsDouble(MemorySeconds(op.bytes, memory_bandwidth_fraction_)) +
      kernel_overhead_ * static_cast<int64_t>(op.kernels);
  const double achieved = static_cast<double>(op.bytes.count()) / time.ToSeconds();
  return OpCost{time, achieved / (gpu_.memory_bandwidth_gbs * 1e9),
                memory_fitted_ ? CostSource::kFitted : CostSource::kSpecFallback, kMemoryBound};
}

}  // namespace clustersim::models
