// What a calibration fit writes (calibration_fit.h): the calibration file
// (ToCalibrationFile: parameters, errors, split, method, provenance and the
// measured-shape table) and the measured-vs-predicted validation table
// (FormatValidation).
#include <algorithm>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "models/calibration_fit.h"
#include "models/calibration_fit_internal.h"

namespace clustersim::models {
namespace {

using calibration_fit_internal::Round6;

config::FitError ToProto(const ErrorStats& e) {
  config::FitError out;
  out.set_points(e.points);
  out.set_median_ape_pct(std::round(e.median_ape_pct * 1000) / 1000);
  out.set_p90_ape_pct(std::round(e.p90_ape_pct * 1000) / 1000);
  return out;
}

}  // namespace

config::CalibrationFile ToCalibrationFile(const config::MeasurementFile& source,
                                          const FitResult& fit) {
  config::CalibrationFile out;
  out.set_gpu(source.gpu().name());
  *out.mutable_measured_on() = source.gpu();
  out.set_provenance(source.provenance());
  *out.mutable_sources() = source.sources();
  out.set_fit_method(
      "least squares on ln(time) with a 1e-4 ridge toward the spec fallback, coordinate search "
      "in ln-parameter space (models/calibration_fit.h)");
  out.set_split(absl::StrCat("one point per distinct shape (cold L2 preferred), file order; every ",
                             kHoldoutEvery, "th held out (index % ", kHoldoutEvery,
                             " == ", kHoldoutEvery - 1, ")"));
  // Parameters of the timing method were fitted so as not to bias the others;
  // the calibration leaves them to the kernel model's fallback.
  const auto& method = source.method_parameters();
  const auto is_method = [&](std::string_view name) {
    return std::find(method.begin(), method.end(), name) != method.end();
  };
  if (!method.empty()) {
    out.set_fit_method(
        absl::StrCat(out.fit_method(), "; fitted but left out as properties of the ",
                     "timing method (spec fallback kept): ", absl::StrJoin(method, ", ")));
  }
  if (!source.fixed_parameters().empty()) {
    out.set_fit_method(absl::StrCat(out.fit_method(),
                                    "; held at the spec fallback, not fitted (fixed_parameters): ",
                                    absl::StrJoin(source.fixed_parameters(), ", ")));
  }
  const CalibrationParams& p = fit.params;
  if (p.gemm_bandwidth_fraction && !is_method("gemm_bandwidth_fraction")) {
    out.set_gemm_bandwidth_fraction(*p.gemm_bandwidth_fraction);
  }
  if (p.memory_bandwidth_fraction && !is_method("memory_bandwidth_fraction")) {
    out.set_memory_bandwidth_fraction(*p.memory_bandwidth_fraction);
  }
  if (p.kernel_overhead && !is_method("kernel_overhead_us")) {
    out.set_kernel_overhead_us(Round6(p.kernel_overhead->ToMicroseconds()));
  }
  for (Dtype d : kAllDtypes) {
    const DtypeFit& f = p.For(d);
    const ErrorStats& train = fit.train_by_dtype[DtypeIndex(d)];
    const ErrorStats& heldout = fit.heldout_by_dtype[DtypeIndex(d)];
    if (train.points + heldout.points == 0) continue;
    config::DtypeParameters* e = out.add_dtype();
    e->set_dtype(std::string(DtypeName(d)));
    if (f.gemm_ceiling) e->set_gemm_ceiling(*f.gemm_ceiling);
    if (f.small_tile_efficiency) e->set_small_tile_efficiency(*f.small_tile_efficiency);
    if (f.unaligned_efficiency) e->set_unaligned_efficiency(*f.unaligned_efficiency);
    if (f.attention_fwd_efficiency) e->set_attention_fwd_efficiency(*f.attention_fwd_efficiency);
    if (f.attention_bwd_efficiency) e->set_attention_bwd_efficiency(*f.attention_bwd_efficiency);
    for (const SeqEfficiency& c : f.attention_fwd_curve) {
      config::SeqEfficiency* point = e->add_attention_fwd_curve();
      point->set_seq(c.seq);
      point->set_efficiency(c.efficiency);
    }
    for (const SeqEfficiency& c : f.attention_bwd_curve) {
      config::SeqEfficiency* point = e->add_attention_bwd_curve();
      point->set_seq(c.seq);
      point->set_efficiency(c.efficiency);
    }
    *e->mutable_train() = ToProto(train);
    if (heldout.points > 0) *e->mutable_heldout() = ToProto(heldout);
  }
  *out.mutable_train() = ToProto(fit.train);
  *out.mutable_heldout() = ToProto(fit.heldout);
  for (const config::KernelMeasurement& m : source.measurement()) {
    if (m.kind() == config::KERNEL_GEMM || m.kind() == config::KERNEL_ATTENTION_FWD ||
        m.kind() == config::KERNEL_ATTENTION_BWD) {
      *out.add_measured() = m;
    }
  }
  return out;
}

std::string FormatValidation(std::string_view gpu, std::string_view provenance,
                             const FitResult& fit) {
  std::string out = absl::StrCat("kernel validation: ", std::string(gpu), "\nprovenance: ",
                                 std::string(provenance), "\nsplit: every ", kHoldoutEvery,
                                 "th distinct shape held out; the fit never saw them\n\n");
  absl::StrAppendFormat(&out, "%-44s %-8s %12s %12s %8s %12s %8s  %s\n", "kernel", "split",
                        "measured_us", "predicted_us", "error", "fallback_us", "error", "source");
  for (const PointPrediction& p : fit.predictions) {
    const double fallback_err = 100 * (p.fallback_us - p.measured_us) / p.measured_us;
    absl::StrAppendFormat(&out, "%-44s %-8s %12.2f %12.2f %+7.1f%% %12.2f %+7.1f%%  %s\n", p.label,
                          p.heldout ? "held-out" : "train", p.measured_us, p.predicted_us,
                          100 * (p.predicted_us - p.measured_us) / p.measured_us, p.fallback_us,
                          fallback_err, std::string(CostSourceName(p.source)));
  }
  auto line = [&](std::string_view name, const ErrorStats& e) {
    absl::StrAppendFormat(&out, "%-9s %4d points  median APE %6.2f%%  p90 APE %6.2f%%\n",
                          std::string(name), e.points, e.median_ape_pct, e.p90_ape_pct);
  };
  out += "\n";
  line("train", fit.train);
  line("held-out", fit.heldout);
  if (fit.heldout.points == 0) {
    out += "verdict: NO HELD-OUT POINTS - the accuracy target cannot be checked\n";
  } else {
    absl::StrAppendFormat(&out, "verdict: held-out %s the target (median <= %.0f%%, p90 <= %.0f%%)\n",
                          fit.heldout.MeetsTarget() ? "MEETS" : "MISSES", kTargetMedianApePct,
                          kTargetP90ApePct);
    if (fit.heldout.points < 10) {
      absl::StrAppendFormat(&out, "caution: only %d held-out points; the estimate is weak\n",
                            fit.heldout.points);
    }
  }
  return out;
}

}  // namespace clustersim::models
