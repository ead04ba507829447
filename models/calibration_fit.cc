#include "models/calibration_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "models/calibration_fit_internal.h"
#include "sim/check.h"
#include "sim/status_macros.h"

namespace clustersim::models {
namespace {

using calibration_fit_internal::Round6;

constexpr double kRidgeWeight = 1e-4;
constexpr double kInitialStep = 0.22314355131420976;  // ln 1.25
constexpr double kFinalStep = 1e-5;
constexpr double kSensitivityFactor = 1.5;
constexpr double kSensitivityThreshold = 1e-3;
constexpr int kMaxEvaluations = 200000;

enum class Field {
  kGemmBandwidth, kMemoryBandwidth, kOverheadUs,
  kCeiling, kSmallTile, kUnaligned, kAttentionFwd, kAttentionBwd
};

// One searchable parameter; `dtype` only for the per-dtype fields.
struct Param {
  Field field;
  Dtype dtype = Dtype::kBf16;
  double initial = 0, lo = 0, hi = 0;
};

void Apply(const Param& p, double v, CalibrationParams* out) {
  DtypeFit& f = out->dtype[DtypeIndex(p.dtype)];
  switch (p.field) {
    case Field::kGemmBandwidth: out->gemm_bandwidth_fraction = v; break;
    case Field::kMemoryBandwidth: out->memory_bandwidth_fraction = v; break;
    case Field::kOverheadUs: out->kernel_overhead = sim::Duration::FromSecondsDouble(v * 1e-6); break;
    case Field::kCeiling: f.gemm_ceiling = v; break;
    case Field::kSmallTile: f.small_tile_efficiency = v; break;
    case Field::kUnaligned: f.unaligned_efficiency = v; break;
    case Field::kAttentionFwd: f.attention_fwd_efficiency = v; break;
    case Field::kAttentionBwd: f.attention_bwd_efficiency = v; break;
  }
}

// The measurement-file name of a per-GPU field (empty for per-dtype fields).
std::string_view PerGpuName(Field f) {
  switch (f) {
    case Field::kGemmBandwidth: return "gemm_bandwidth_fraction";
    case Field::kMemoryBandwidth: return "memory_bandwidth_fraction";
    case Field::kOverheadUs: return "kernel_overhead_us";
    default: return "";
  }
}

std::vector<Param> Candidates(const GpuSpec& gpu, const std::vector<Measurement>& points,
                              const KernelModelParams& fb, const std::vector<std::string>& fixed) {
  const double overhead_us = fb.kernel_overhead.ToMicroseconds();
  std::vector<Param> params;
  const double bandwidth = fb.memory_bandwidth_fraction;
  for (Param p : {Param{Field::kGemmBandwidth, Dtype::kBf16, bandwidth, 0.02, 1.0},
                  Param{Field::kMemoryBandwidth, Dtype::kBf16, bandwidth, 0.02, 1.0},
                  Param{Field::kOverheadUs, Dtype::kBf16, overhead_us, 0.1, 50.0}}) {
    if (std::find(fixed.begin(), fixed.end(), PerGpuName(p.field)) == fixed.end()) {
      params.push_back(p);
    }
  }
  for (Dtype d : kAllDtypes) {
    const bool used = std::any_of(points.begin(), points.end(), [&](const Measurement& m) {
      return m.op.dtype == d && m.op.kind != OpKind::kMemoryBound;
    });
    if (!used) continue;
    params.push_back({Field::kCeiling, d, gpu.GemmCeiling(d), 0.02, 1.0});
    params.push_back({Field::kSmallTile, d, fb.small_tile_efficiency, 0.02, 1.0});
    params.push_back({Field::kUnaligned, d, 1.0, 0.02, 1.0});
    params.push_back({Field::kAttentionFwd, d, fb.attention_efficiency, 0.02, 1.0});
    params.push_back({Field::kAttentionBwd, d, fb.attention_efficiency, 0.02, 1.0});
  }
  return params;
}

// Predicted seconds of every point under `params` (no measured table).
std::vector<double> PredictSeconds(const GpuSpec& gpu, const std::vector<Measurement>& points,
                                   const CalibrationParams& params, const KernelModelParams& fb) {
  const Calibration cal(gpu.name, params, {}, "fit");
  const KernelModel model(gpu, fb, &cal);
  std::vector<double> out;
  out.reserve(points.size());
  for (const Measurement& m : points) out.push_back(model.Cost(m.op).time.ToSeconds());
  return out;
}

double Percentile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

absl::Status CheckPoints(const GpuSpec& gpu, const std::vector<Measurement>& points) {
  for (const Measurement& m : points) {
    if (m.op.kind == OpKind::kMemoryBound) continue;
    if (absl::Status s = CheckDtypeSupported(gpu, m.op.dtype); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("measurement ", m.label, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

FitResult Evaluate(const GpuSpec& gpu, const std::vector<Measurement>& points,
                   const CalibrationParams& params, const KernelModelParams& fb) {
  FitResult r;
  r.params = params;
  const Calibration cal(gpu.name, params, {}, "evaluation");
  const KernelModel calibrated(gpu, fb, &cal);
  const KernelModel fallback(gpu, fb);
  std::vector<double> train, heldout;
  std::array<std::vector<double>, kAllDtypes.size()> train_d, heldout_d;
  for (size_t i = 0; i < points.size(); ++i) {
    const Measurement& m = points[i];
    const OpCost c = calibrated.Cost(m.op);
    PointPrediction p{m.label, m.op.dtype, m.op.kind, IsHeldOut(i), m.median.ToMicroseconds(),
                      c.time.ToMicroseconds(), fallback.Cost(m.op).time.ToMicroseconds(), c.source};
    (p.heldout ? heldout : train).push_back(p.ApePct());
    if (m.op.kind != OpKind::kMemoryBound) {
      (p.heldout ? heldout_d : train_d)[DtypeIndex(p.dtype)].push_back(p.ApePct());
    }
    r.predictions.push_back(std::move(p));
  }
  r.train = ComputeErrors(train);
  r.heldout = ComputeErrors(heldout);
  for (Dtype d : kAllDtypes) {
    r.train_by_dtype[DtypeIndex(d)] = ComputeErrors(train_d[DtypeIndex(d)]);
    r.heldout_by_dtype[DtypeIndex(d)] = ComputeErrors(heldout_d[DtypeIndex(d)]);
  }
  return r;
}

}  // namespace

namespace calibration_fit_internal {

double Round6(double v) {
  if (v == 0) return 0;
  const double scale = std::pow(10.0, 5 - std::floor(std::log10(std::abs(v))));
  return std::round(v * scale) / scale;
}

}  // namespace calibration_fit_internal

ErrorStats ComputeErrors(std::vector<double> ape_pct) {
  ErrorStats s;
  s.points = static_cast<int>(ape_pct.size());
  if (ape_pct.empty()) return s;
  std::sort(ape_pct.begin(), ape_pct.end());
  s.median_ape_pct = Percentile(ape_pct, 0.5);
  s.p90_ape_pct = Percentile(ape_pct, 0.9);
  return s;
}

absl::StatusOr<FitResult> FitCalibration(const GpuSpec& gpu, const std::vector<Measurement>& points,
                                         const KernelModelParams& fallback,
                                         const std::vector<std::string>& fixed) {
  CLUSTERSIM_RETURN_IF_ERROR(CheckPoints(gpu, points));
  std::vector<Measurement> train;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!IsHeldOut(i)) train.push_back(points[i]);
  }
  if (train.empty()) {
    return absl::InvalidArgumentError(
        "the training split is empty: the measurement file needs at least one measurement");
  }
  std::vector<double> measured;
  for (const Measurement& m : train) measured.push_back(m.median.ToSeconds());

  // Keep only the parameters that move some training prediction.
  std::vector<Param> params;
  CalibrationParams base;
  const std::vector<Param> all = Candidates(gpu, train, fallback, fixed);
  for (const Param& p : all) Apply(p, p.initial, &base);
  const std::vector<double> reference = PredictSeconds(gpu, train, base, fallback);
  for (const Param& p : all) {
    bool informed = false;
    for (double v : {std::min(p.hi, p.initial * kSensitivityFactor),
                     std::max(p.lo, p.initial / kSensitivityFactor)}) {
      CalibrationParams probe = base;
      Apply(p, v, &probe);
      const std::vector<double> moved = PredictSeconds(gpu, train, probe, fallback);
      for (size_t i = 0; i < moved.size(); ++i) {
        if (std::abs(moved[i] / reference[i] - 1) > kSensitivityThreshold) informed = true;
      }
    }
    if (informed) params.push_back(p);
  }

  std::vector<double> x, x0;
  for (const Param& p : params) x.push_back(std::log(p.initial));
  x0 = x;
  int evaluations = 0;
  auto objective = [&](const std::vector<double>& at) {
    ++evaluations;
    CalibrationParams c;
    for (size_t j = 0; j < params.size(); ++j) Apply(params[j], std::exp(at[j]), &c);
    const std::vector<double> predicted = PredictSeconds(gpu, train, c, fallback);
    double loss = 0;
    for (size_t i = 0; i < predicted.size(); ++i) {
      const double e = std::log(predicted[i] / measured[i]);
      loss += e * e;
    }
    loss /= static_cast<double>(predicted.size());
    for (size_t j = 0; j < at.size(); ++j) loss += kRidgeWeight * (at[j] - x0[j]) * (at[j] - x0[j]);
    return loss;
  };
  double best = objective(x);
  for (double step = kInitialStep; step >= kFinalStep && evaluations < kMaxEvaluations;) {
    bool improved = false;
    for (size_t j = 0; j < x.size(); ++j) {
      // Long moves too: a roofline max() leaves flat regions that short steps
      // cannot leave (a compute ceiling below the memory time changes nothing).
      std::vector<double> accepted;
      for (double move : {step, -step, 3 * step, -3 * step, 9 * step, -9 * step}) {
        std::vector<double> trial = x;
        trial[j] = std::clamp(x[j] + move, std::log(params[j].lo), std::log(params[j].hi));
        if (trial[j] == x[j]) continue;
        const double loss = objective(trial);
        if (loss < best - 1e-15) {
          best = loss;
          accepted = std::move(trial);
        }
      }
      if (!accepted.empty()) {
        x = std::move(accepted);
        improved = true;
      }
    }
    if (!improved) step /= 2;
  }

  CalibrationParams fitted;
  for (size_t j = 0; j < params.size(); ++j) Apply(params[j], Round6(std::exp(x[j])), &fitted);
  FitResult r = Evaluate(gpu, points, fitted, fallback);
  r.evaluations = evaluations;
  return r;
}

absl::StatusOr<FitResult> EvaluateCalibration(const GpuSpec& gpu,
                                              const std::vector<Measurement>& points,
                                              const CalibrationParams& params,
                                              const KernelModelParams& fallback) {
  CLUSTERSIM_RETURN_IF_ERROR(CheckPoints(gpu, points));
  return Evaluate(gpu, points, params, fallback);
}

void AddAttentionCurves(const GpuSpec& gpu, const std::vector<Measurement>& points,
                        const config::MeasurementFile& source, FitResult* fit,
                        const KernelModelParams& fallback) {
  const auto& method = source.method_parameters();
  const auto is_method = [&](std::string_view name) {
    return std::find(method.begin(), method.end(), name) != method.end();
  };
  CalibrationParams shipped = fit->params;
  if (is_method("gemm_bandwidth_fraction")) shipped.gemm_bandwidth_fraction.reset();
  if (is_method("memory_bandwidth_fraction")) shipped.memory_bandwidth_fraction.reset();
  if (is_method("kernel_overhead_us")) shipped.kernel_overhead.reset();
  for (DtypeFit& f : shipped.dtype) {
    f.attention_fwd_curve.clear();
    f.attention_bwd_curve.clear();
  }
  const Calibration cal(gpu.name, shipped, {}, "attention curves");
  const KernelModel model(gpu, fallback, &cal);
  const double overhead_s = shipped.kernel_overhead.value_or(fallback.kernel_overhead).ToSeconds();
  // (dtype, backward, seq) -> sum and count of implied efficiencies.
  std::map<std::tuple<int, bool, int64_t>, std::pair<double, int>> implied;
  for (const Measurement& m : points) {
    if (m.op.kind != OpKind::kAttention || !model.IsComputeBound(m.op)) continue;
    const bool backward = IsAttentionBackward(m.op);
    const DtypeFit& f = shipped.For(m.op.dtype);
    const double constant = (backward ? f.attention_bwd_efficiency : f.attention_fwd_efficiency)
                                .value_or(fallback.attention_efficiency);
    const double predicted_s = model.Cost(m.op).time.ToSeconds() - overhead_s;
    const double measured_s = m.median.ToSeconds() - overhead_s;
    if (measured_s <= 0) continue;
    // Compute-bound time is inversely proportional to the efficiency (the
    // fallback's in-framework and kernel factors scale both alike).
    const double e = constant * predicted_s / measured_s;
    if (e > 1) continue;
    auto& [sum, count] = implied[{DtypeIndex(m.op.dtype), backward, m.op.m}];
    sum += e;
    ++count;
  }
  for (const auto& [key, value] : implied) {
    const auto& [dtype, backward, seq] = key;
    DtypeFit& f = fit->params.dtype[dtype];
    (backward ? f.attention_bwd_curve : f.attention_fwd_curve)
        .push_back({seq, Round6(value.first / value.second)});
  }
}

}  // namespace clustersim::models
