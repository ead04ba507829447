// File: models/calibration_fit.h
//
// Fits the KernelModel's parameters (kernel_model.h) to the measurements of one
// GPU and measures the fit's error on shapes it did not see.
//
// Split: the measurements are reduced to one per distinct shape (cold L2
// preferred, SelectMeasurements) and, in file order, every 4th one (index % 4
// == 3) is HELD OUT; the rest is the training split. The fit never sees the
// held-out points; their absolute percentage errors are the reported accuracy.
//
// Method (deterministic): minimise over the training split
//     mean_i (ln predicted_i - ln measured_i)^2 + 1e-4 · sum_j (ln p_j - ln p_j0)^2
// by coordinate search in ln-parameter space (each parameter in a fixed order
// takes the best of ×e^{±step}, ×e^{±3 step}, ×e^{±9 step}; the step halves
// after a pass without improvement, from ln 1.25 down to 1e-5). p_j0 is the spec-sheet fallback; the small ridge term
// keeps parameters that the data cannot separate (a memory-bound GEMM constrains
// the bandwidth fraction and the overhead only jointly) near their documented
// defaults. A parameter is fitted only when changing it by ×1.5 or ×1/1.5 moves
// some training prediction by more than 0.1%; the others stay absent from the
// calibration, and ops that depend on them keep the "spec_fallback" source.
// Predictions for errors never use the measured-shape table.
//
// Example:
//   absl::StatusOr<models::FitResult> fit = models::FitCalibration(*gpu, points);
//   if (!fit.ok()) return fit.status();
//   std::cout << models::FormatValidation(gpu->name, fit->predictions, fit->heldout);
//   config::CalibrationFile out = models::ToCalibrationFile(file, *fit);
#ifndef CLUSTERSIM_MODELS_CALIBRATION_FIT_H_
#define CLUSTERSIM_MODELS_CALIBRATION_FIT_H_

#include <array>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "models/calibration.h"
#include "models/gpu_catalog.h"
#include "models/kernel_model.h"
#include "models/proto/calibration.pb.h"

namespace clustersim::models {

inline constexpr int kHoldoutEvery = 4;
inline constexpr double kTargetMedianApePct = 5;
inline constexpr double kTargetP90ApePct = 15;

// True when the index-th distinct shape (0-based, file order) is held out.
constexpr bool IsHeldOut(size_t index) { return index % kHoldoutEvery == kHoldoutEvery - 1; }

struct ErrorStats {
  int points = 0;
  double median_ape_pct = 0;  // percentiles interpolate linearly between order statistics
  double p90_ape_pct = 0;
  bool MeetsTarget() const {
    return points > 0 && median_ape_pct <= kTargetMedianApePct && p90_ape_pct <= kTargetP90ApePct;
  }
};
ErrorStats ComputeErrors(std::vector<double> ape_pct);

struct PointPrediction {
  std::string label;
  Dtype dtype = Dtype::kBf16;
  OpKind kind = OpKind::kGemm;
  bool heldout = false;
  double measured_us = 0;
  double predicted_us = 0;  // with the calibration, never the measured table
  double fallback_us = 0;   // spec-sheet fallback, for comparison
  CostSource source = CostSource::kSpecFallback;
  double ApePct() const { return 100 * std::abs(predicted_us - measured_us) / measured_us; }
};

struct FitResult {
  CalibrationParams params;
  std::vector<PointPrediction> predictions;  // every point, in file order
  ErrorStats train, heldout;                 // all points of each split
  std::array<ErrorStats, kAllDtypes.size()> train_by_dtype{}, heldout_by_dtype{};  // GEMM+attention
  int evaluations = 0;                       // objective evaluations the search used
};

// Fits on the training split of `points` (SelectMeasurements' output for
// `gpu`). `fixed` names per-GPU parameters held at `fallback` (a measurement
// file's fixed_parameters). InvalidArgument when a point's dtype is
// unsupported by `gpu` or the training split is empty.
absl::StatusOr<FitResult> FitCalibration(const GpuSpec& gpu, const std::vector<Measurement>& points,
                                         const KernelModelParams& fallback = {},
                                         const std::vector<std::string>& fixed = {});

// Predictions of `points` under fixed `params` (e.g. a loaded calibration file),
// with the same split and statistics as FitCalibration.
absl::StatusOr<FitResult> EvaluateCalibration(const GpuSpec& gpu,
                                              const std::vector<Measurement>& points,
                                              const CalibrationParams& params,
                                              const KernelModelParams& fallback = {});

// Adds to fit->params, per dtype and direction with attention points, the
// efficiency curve (attention_curve.h) the points imply: at each measured
// sequence length (the op's query length), the efficiency at which the kernel
// model, with the calibration as shipped (the timing-method parameters
// source.method_parameters names at `fallback`), costs that point at its
// measured time; the mean where several points share a length. Points the
// model finds memory-bound, or that imply more than dense peak, are left out.
// The curve holds every attention point, training and held out, like the
// measured-shape table; fit->predictions and the errors stay the constant fit's.
void AddAttentionCurves(const GpuSpec& gpu, const std::vector<Measurement>& points,
                        const config::MeasurementFile& source, FitResult* fit,
                        const KernelModelParams& fallback = {});

// The calibration file for `fit`: parameters, errors, the split and method, the
// source file's identity, provenance and sources, the attention curves
// AddAttentionCurves added, and its GEMM/attention measurements as the
// measured-shape table.
config::CalibrationFile ToCalibrationFile(const config::MeasurementFile& source,
                                          const FitResult& fit);

// A table of measured vs predicted (and spec fallback) per kernel, then the
// held-out and training median/p90 APE and whether the held-out split meets the
// target (median <= 5%, p90 <= 15%), stated plainly either way.
std::string FormatValidation(std::string_view gpu, std::string_view provenance,
                             const FitResult& fit);

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_CALIBRATION_FIT_H_
