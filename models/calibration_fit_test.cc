#include "models/calibration_fit.h"

#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace clustersim::models {
namespace {

const GpuSpec& Gpu(std::string_view name) {
  absl::StatusOr<const GpuSpec*> g = GpuCatalog::Default().Find(name);
  EXPECT_TRUE(g.ok()) << g.status();
  return **g;
}

Measurement GemmPoint(int64_t m, int64_t n, int64_t k, Dtype d = Dtype::kBf16) {
  Measurement p;
  p.op.name = "gemm";
  p.op.kind = OpKind::kGemm;
  p.op.dtype = d;
  p.op.m = m;
  p.op.n = n;
  p.op.k = k;
  const int64_t in = BytesPerElement(d);
  p.op.flops = sim::Flops(2.0 * m * n * k);
  p.op.bytes = sim::Bytes((m * k + k * n) * in + m * n * 2);
  p.label = "gemm";
  return p;
}

Measurement MemoryPoint(int64_t bytes) {
  Measurement p;
  p.op.name = "copy";
  p.op.kind = OpKind::kMemoryBound;
  p.op.bytes = sim::Bytes(bytes);
  p.label = "copy";
  return p;
}

// Synthetic "measurements" produced by the model itself with known parameters:
// the fit must recover them and predict the held-out shapes almost exactly.
TEST(CalibrationFitTest, RecoversKnownParametersFromSyntheticMeasurements) {
  const GpuSpec& gpu = Gpu("h100-sxm5-80gb");
  CalibrationParams truth;
  truth.gemm_bandwidth_fraction = 0.72;
  truth.memory_bandwidth_fraction = 0.91;
  truth.kernel_overhead = sim::Nanoseconds(4500);
  truth.dtype[DtypeIndex(Dtype::kBf16)].gemm_ceiling = 0.74;
  truth.dtype[DtypeIndex(Dtype::kBf16)].unaligned_efficiency = 0.6;
  const Calibration cal(gpu.name, truth, {}, "truth");
  const KernelModel model(gpu, {}, &cal);
  std::vector<Measurement> points;
  for (int64_t m : {1, 8, 64, 512, 1000, 2048, 4097, 8192}) {
    for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {14336, 4096}, {4096, 14336},
                        {1001, 8192}, {8192, 1001}}) {
      points.push_back(GemmPoint(m, n, k));
    }
  }
  for (int64_t bytes : {1 << 16, 1 << 20, 1 << 24, 1 << 28, 1 << 30}) {
    points.push_back(MemoryPoint(bytes));
  }
  for (Measurement& p : points) p.median = model.Cost(p.op).time;

  absl::StatusOr<FitResult> fit = FitCalibration(gpu, points);
  ASSERT_TRUE(fit.ok()) << fit.status();
  const CalibrationParams& got = fit->params;
  ASSERT_TRUE(got.gemm_bandwidth_fraction && got.memory_bandwidth_fraction &&
              got.kernel_overhead);
  EXPECT_NEAR(*got.gemm_bandwidth_fraction, 0.72, 0.72 * 0.02);
  EXPECT_NEAR(*got.memory_bandwidth_fraction, 0.91, 0.91 * 0.02);
  EXPECT_NEAR(got.kernel_overhead->ToMicroseconds(), 4.5, 4.5 * 0.05);
  const DtypeFit& bf16 = got.For(Dtype::kBf16);
  ASSERT_TRUE(bf16.gemm_ceiling.has_value());
  ASSERT_TRUE(bf16.unaligned_efficiency.has_value());
  EXPECT_NEAR(*bf16.gemm_ceiling, 0.74, 0.74 * 0.02);
  EXPECT_NEAR(*bf16.unaligned_efficiency, 0.6, 0.6 * 0.03);
  // Only GEMM and copy points: attention stays on the fallback.
  EXPECT_FALSE(bf16.attention_fwd_efficiency.has_value());
  EXPECT_FALSE(bf16.attention_bwd_efficiency.has_value());
  EXPECT_EQ(fit->heldout.points, static_cast<int>(points.size() / 4));
  EXPECT_LT(fit->heldout.median_ape_pct, 0.5);
  EXPECT_LT(fit->heldout.p90_ape_pct, 2.0);
  EXPECT_TRUE(fit->heldout.MeetsTarget());
}

TEST(CalibrationFitTest, HeldOutPointsNeverInfluenceTheFit) {
  const GpuSpec& gpu = Gpu("h100-sxm5-80gb");
  std::vector<Measurement> points;
  for (int64_t m : {16, 256, 1024, 4096, 8192, 16384, 3000, 128}) {
    points.push_back(GemmPoint(m, 8192, 8192));
    points.back().median = sim::Duration::FromSecondsDouble(2.0 * m * 8192 * 8192 / 600e12);
  }
  ASSERT_TRUE(IsHeldOut(3) && IsHeldOut(7) && !IsHeldOut(0) && !IsHeldOut(4));
  absl::StatusOr<FitResult> a = FitCalibration(gpu, points);
  points[3].median = points[3].median * 10;  // a held-out point, badly off
  absl::StatusOr<FitResult> b = FitCalibration(gpu, points);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->params.For(Dtype::kBf16).gemm_ceiling, b->params.For(Dtype::kBf16).gemm_ceiling);
  EXPECT_EQ(a->train.median_ape_pct, b->train.median_ape_pct);
  EXPECT_GT(b->heldout.p90_ape_pct, 80);  // and the miss is reported
  EXPECT_NE(FormatValidation(gpu.name, "test", *b).find("MISSES the target"), std::string::npos);
  points[0].median = points[0].median * 10;  // a training point does move it
  absl::StatusOr<FitResult> c = FitCalibration(gpu, points);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->params.For(Dtype::kBf16).gemm_ceiling, c->params.For(Dtype::kBf16).gemm_ceiling);
}

TEST(CalibrationFitTest, ErrorPercentilesInterpolate) {
  const ErrorStats s = ComputeErrors({10, 1, 9, 2, 8, 3, 7, 4, 6, 5});
  EXPECT_EQ(s.points, 10);
  EXPECT_DOUBLE_EQ(s.median_ape_pct, 5.5);
  EXPECT_DOUBLE_EQ(s.p90_ape_pct, 9.1);
  EXPECT_FALSE(ComputeErrors({}).MeetsTarget());
  EXPECT_TRUE(ComputeErrors({4, 5, 14}).MeetsTarget());
  EXPECT_FALSE(ComputeErrors({4, 6, 6}).MeetsTarget());
}

TEST(CalibrationFitTest, UnsupportedDtypeIsAnInputError) {
  std::vector<Measurement> points = {GemmPoint(1024, 1024, 1024, Dtype::kFp8)};
  points[0].median = sim::Microseconds(10);
  absl::StatusOr<FitResult> fit = FitCalibration(Gpu("a100-sxm4-80gb"), points);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(std::string(fit.status().message()).find("fp8"), std::string::npos);
}

std::string SourceFile(const std::string& relative) {
  const char* root = std::getenv("CLUSTERSIM_SOURCE_DIR");
  std::ifstream in(std::string(root ? root : ".") + "/" + relative);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The shipped calibrations are exactly what `clustersim calibrate` produces
// from the shipped measurement files (regenerate them when this fails: the
// command is in each measurement file's header). Prints the error table.
TEST(CalibrationFitTest, ShippedCalibrationsAreTheFitOfThePublishedPoints) {
  for (const char* gpu : {"a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb"}) {
    const std::string path = std::string("models/data/calibration/") + gpu + ".measurements.textproto";
    absl::StatusOr<config::MeasurementFile> file = ParseMeasurementFile(SourceFile(path), path);
    ASSERT_TRUE(file.ok()) << file.status();
    absl::StatusOr<std::vector<Measurement>> points = SelectMeasurements(*file);
    ASSERT_TRUE(points.ok()) << points.status();
    const std::vector<std::string> fixed(file->fixed_parameters().begin(),
                                         file->fixed_parameters().end());
    absl::StatusOr<FitResult> fit = FitCalibration(Gpu(gpu), *points, {}, fixed);
    ASSERT_TRUE(fit.ok()) << fit.status();
    std::printf("%s\n", FormatValidation(gpu, file->provenance(), *fit).c_str());
    const Calibration* shipped = Calibration::Shipped(gpu);
    ASSERT_NE(shipped, nullptr);
    const CalibrationParams& want = fit->params;
    const CalibrationParams& have = shipped->params();
    EXPECT_EQ(have.gemm_bandwidth_fraction, want.gemm_bandwidth_fraction) << gpu;
    EXPECT_EQ(have.memory_bandwidth_fraction, want.memory_bandwidth_fraction) << gpu;
    ASSERT_EQ(have.kernel_overhead.has_value(), want.kernel_overhead.has_value()) << gpu;
    if (want.kernel_overhead) {
      EXPECT_NEAR(have.kernel_overhead->ToMicroseconds(), want.kernel_overhead->ToMicroseconds(),
                  1e-5) << gpu;
    }
    for (Dtype d : kAllDtypes) {
      EXPECT_EQ(have.For(d).gemm_ceiling, want.For(d).gemm_ceiling) << gpu;
      EXPECT_EQ(have.For(d).small_tile_efficiency, want.For(d).small_tile_efficiency) << gpu;
      EXPECT_EQ(have.For(d).unaligned_efficiency, want.For(d).unaligned_efficiency) << gpu;
    }
    // Every published training point is reproduced within 10% by its fit.
    for (const PointPrediction& p : fit->predictions) {
      if (!p.heldout) {
        EXPECT_LT(p.ApePct(), 10) << gpu << " " << p.label;
      }
    }
  }
}

// The B200 file lists kernel_overhead_us as a property of its timing method
// (models/data/calibration/xla/SOURCE.md): the fit estimates it, the shipped
// calibration leaves it out, and everything else is the fit's.
TEST(CalibrationFitTest, B200CalibrationIsTheFitLessTheTimingMethod) {
  const std::string path = "models/data/calibration/b200-sxm-180gb.measurements.textproto";
  absl::StatusOr<config::MeasurementFile> file = ParseMeasurementFile(SourceFile(path), path);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->method_parameters_size(), 1);
  EXPECT_EQ(file->method_parameters(0), "kernel_overhead_us");
  absl::StatusOr<std::vector<Measurement>> points = SelectMeasurements(*file);
  ASSERT_TRUE(points.ok()) << points.status();
  absl::StatusOr<FitResult> fit = FitCalibration(Gpu("b200-sxm-180gb"), *points);
  ASSERT_TRUE(fit.ok()) << fit.status();
  // GEMMs (OpenXLA's table) meet the target on their held-out points. The
  // cuDNN attention points (4K-16K) rise with the sequence length faster than
  // one efficiency per direction follows: the 8K points, the training rows'
  // length, are within 10%; the others are reported, not bounded.
  std::vector<double> gemm_heldout;
  int attention_8k = 0;
  for (const PointPrediction& p : fit->predictions) {
    if (p.kind == OpKind::kGemm && p.heldout) gemm_heldout.push_back(p.ApePct());
    if (p.kind == OpKind::kAttention && p.label.find("s8192/8192") != std::string::npos) {
      ++attention_8k;
      EXPECT_LT(p.ApePct(), 10) << p.label;
    }
  }
  EXPECT_TRUE(ComputeErrors(gemm_heldout).MeetsTarget())
      << FormatValidation("b200-sxm-180gb", file->provenance(), *fit);
  EXPECT_GE(gemm_heldout.size(), 10u);
  EXPECT_EQ(attention_8k, 2);  // forward and backward
  const Calibration* shipped = Calibration::Shipped("b200-sxm-180gb");
  ASSERT_NE(shipped, nullptr);
  const CalibrationParams& want = fit->params;
  const CalibrationParams& have = shipped->params();
  EXPECT_TRUE(want.kernel_overhead.has_value());
  EXPECT_FALSE(have.kernel_overhead.has_value());
  EXPECT_EQ(have.gemm_bandwidth_fraction, want.gemm_bandwidth_fraction);
  EXPECT_EQ(have.memory_bandwidth_fraction, want.memory_bandwidth_fraction);
  for (Dtype d : {Dtype::kBf16, Dtype::kFp8}) {
    ASSERT_TRUE(have.For(d).gemm_ceiling.has_value()) << DtypeName(d);
    EXPECT_EQ(have.For(d).gemm_ceiling, want.For(d).gemm_ceiling) << DtypeName(d);
    EXPECT_EQ(have.For(d).small_tile_efficiency, want.For(d).small_tile_efficiency);
  }
  ASSERT_TRUE(have.For(Dtype::kBf16).attention_fwd_efficiency.has_value());
  EXPECT_EQ(have.For(Dtype::kBf16).attention_fwd_efficiency,
            want.For(Dtype::kBf16).attention_fwd_efficiency);
  EXPECT_EQ(have.For(Dtype::kBf16).attention_bwd_efficiency,
            want.For(Dtype::kBf16).attention_bwd_efficiency);
  // The written calibration says which parameter it left out.
  const config::CalibrationFile written = ToCalibrationFile(*file, *fit);
  EXPECT_FALSE(written.has_kernel_overhead_us());
  EXPECT_NE(written.fit_method().find("timing method (spec fallback kept): kernel_overhead_us"),
            std::string::npos);
}

// The H200 file holds three compute-bound GEMMs of 87-193 us, which cannot
// separate a per-kernel overhead of a few microseconds from the ceilings: it
// names the overhead in fixed_parameters, and the shipped calibration keeps
// the kernel model's fallback rather than a value the ridge happened to reach.
TEST(CalibrationFitTest, H200CalibrationHoldsTheKernelOverheadAtTheFallback) {
  const std::string path = "models/data/calibration/h200-sxm-141gb.measurements.textproto";
  absl::StatusOr<config::MeasurementFile> file = ParseMeasurementFile(SourceFile(path), path);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->fixed_parameters_size(), 1);
  EXPECT_EQ(file->fixed_parameters(0), "kernel_overhead_us");
  const Calibration* shipped = Calibration::Shipped("h200-sxm-141gb");
  ASSERT_NE(shipped, nullptr);
  EXPECT_FALSE(shipped->params().kernel_overhead.has_value());
  // The kernel model then charges the H200 the fallback overhead per kernel.
  const KernelModelParams params;
  const KernelModel kernels(Gpu("h200-sxm-141gb"), params, shipped);
  Op launch;
  launch.kind = OpKind::kMemoryBound;
  launch.name = "launch";
  EXPECT_EQ(kernels.Cost(launch).time, params.kernel_overhead);
}

// The GB200 file holds cuDNN attention only (cudnn/SOURCE.md) and names the
// kernel overhead in fixed_parameters: the fit holds it at the fallback, fits
// one efficiency per direction, and the shipped calibration is that fit.
TEST(CalibrationFitTest, Gb200CalibrationIsTheAttentionFitWithTheOverheadHeld) {
  const std::string path = "models/data/calibration/gb200-186gb.measurements.textproto";
  absl::StatusOr<config::MeasurementFile> file = ParseMeasurementFile(SourceFile(path), path);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->fixed_parameters_size(), 1);
  EXPECT_EQ(file->fixed_parameters(0), "kernel_overhead_us");
  absl::StatusOr<std::vector<Measurement>> points = SelectMeasurements(*file);
  ASSERT_TRUE(points.ok()) << points.status();
  const std::vector<std::string> fixed(file->fixed_parameters().begin(),
                                       file->fixed_parameters().end());
  absl::StatusOr<FitResult> fit = FitCalibration(Gpu("gb200-186gb"), *points, {}, fixed);
  ASSERT_TRUE(fit.ok()) << fit.status();
  std::printf("%s\n", FormatValidation("gb200-186gb", file->provenance(), *fit).c_str());
  EXPECT_FALSE(fit->params.kernel_overhead.has_value());
  // Fitted free, the overhead absorbs the rise with sequence length instead.
  absl::StatusOr<FitResult> free = FitCalibration(Gpu("gb200-186gb"), *points);
  ASSERT_TRUE(free.ok()) << free.status();
  ASSERT_TRUE(free->params.kernel_overhead.has_value());
  EXPECT_GT(free->params.kernel_overhead->ToMicroseconds(), 20);
  int attention_8k = 0;
  for (const PointPrediction& p : fit->predictions) {
    EXPECT_EQ(p.kind, OpKind::kAttention) << p.label;
    if (p.label.find("s8192/8192") != std::string::npos) {
      ++attention_8k;
      EXPECT_LT(p.ApePct(), 10) << p.label;
    }
  }
  EXPECT_EQ(attention_8k, 2);
  const Calibration* shipped = Calibration::Shipped("gb200-186gb");
  ASSERT_NE(shipped, nullptr);
  const CalibrationParams& have = shipped->params();
  EXPECT_FALSE(have.kernel_overhead.has_value());
  EXPECT_FALSE(have.gemm_bandwidth_fraction.has_value());
  ASSERT_TRUE(have.For(Dtype::kBf16).attention_fwd_efficiency.has_value());
  EXPECT_EQ(have.For(Dtype::kBf16).attention_fwd_efficiency,
            fit->params.For(Dtype::kBf16).attention_fwd_efficiency);
  EXPECT_EQ(have.For(Dtype::kBf16).attention_bwd_efficiency,
            fit->params.For(Dtype::kBf16).attention_bwd_efficiency);
  EXPECT_FALSE(have.For(Dtype::kBf16).gemm_ceiling.has_value());
  const config::CalibrationFile written = ToCalibrationFile(*file, *fit);
  EXPECT_NE(written.fit_method().find("(fixed_parameters): kernel_overhead_us"), std::string::npos);
}

// Each shipped attention curve is what AddAttentionCurves derives from the
// GPU's measurement file, and the kernel model with the calibration as shipped
// (formulas, not the measured table) costs every attention point at its
// measured time: on the B200 with the fallback overhead the file leaves out.
TEST(CalibrationFitTest, ShippedAttentionCurvesReproduceEveryAttentionPoint) {
  for (const char* gpu : {"h100-sxm5-80gb", "h200-sxm-141gb", "b200-sxm-180gb", "gb200-186gb"}) {
    const std::string path = std::string("models/data/calibration/") + gpu + ".measurements.textproto";
    absl::StatusOr<config::MeasurementFile> file = ParseMeasurementFile(SourceFile(path), path);
    ASSERT_TRUE(file.ok()) << file.status();
    absl::StatusOr<std::vector<Measurement>> points = SelectMeasurements(*file);
    ASSERT_TRUE(points.ok()) << points.status();
    const std::vector<std::string> fixed(file->fixed_parameters().begin(),
                                         file->fixed_parameters().end());
    absl::StatusOr<FitResult> fit = FitCalibration(Gpu(gpu), *points, {}, fixed);
    ASSERT_TRUE(fit.ok()) << fit.status();
    AddAttentionCurves(Gpu(gpu), *points, *file, &*fit);
    const Calibration* shipped = Calibration::Shipped(gpu);
    ASSERT_NE(shipped, nullptr);
    const DtypeFit& want = fit->params.For(Dtype::kBf16);
    const DtypeFit& have = shipped->params().For(Dtype::kBf16);
    ASSERT_GE(have.attention_fwd_curve.size(), 3u) << gpu;
    ASSERT_GE(have.attention_bwd_curve.size(), 3u) << gpu;
    for (const auto& [w, h] : {std::pair{&want.attention_fwd_curve, &have.attention_fwd_curve},
                               std::pair{&want.attention_bwd_curve, &have.attention_bwd_curve}}) {
      ASSERT_EQ(w->size(), h->size()) << gpu;
      for (size_t i = 0; i < w->size(); ++i) {
        EXPECT_EQ((*w)[i].seq, (*h)[i].seq) << gpu;
        EXPECT_EQ((*w)[i].efficiency, (*h)[i].efficiency) << gpu << " seq " << (*h)[i].seq;
      }
    }
    const Calibration formulas(gpu, shipped->params(), {}, "formulas");
    const KernelModel model(Gpu(gpu), {}, &formulas);
    int attention = 0;
    for (const Measurement& m : *points) {
      if (m.op.kind != OpKind::kAttention) continue;
      ++attention;
      EXPECT_NEAR(model.Cost(m.op).time.ToSeconds() / m.median.ToSeconds(), 1, 1e-4)
          << gpu << " " << m.label;
    }
    // The H100's eight cuDNN points, which the H200 (the same die) carries too.
    const bool hopper = std::string(gpu) == "h100-sxm5-80gb" || std::string(gpu) == "h200-sxm-141gb";
    EXPECT_EQ(attention, 6 + (hopper ? 2 : 0)) << gpu;
  }
  // Without attention points there is no curve: the constant (or prior) stays.
  const Calibration* a100 = Calibration::Shipped("a100-sxm4-80gb");
  ASSERT_NE(a100, nullptr);
  EXPECT_TRUE(a100->params().For(Dtype::kBf16).attention_fwd_curve.empty());
  EXPECT_TRUE(a100->params().For(Dtype::kBf16).attention_bwd_curve.empty());
  // The H200's curve is the H100's: the same points.
  const DtypeFit& h100 = Calibration::Shipped("h100-sxm5-80gb")->params().For(Dtype::kBf16);
  const DtypeFit& h200 = Calibration::Shipped("h200-sxm-141gb")->params().For(Dtype::kBf16);
  ASSERT_EQ(h100.attention_fwd_curve.size(), h200.attention_fwd_curve.size());
  for (size_t i = 0; i < h100.attention_fwd_curve.size(); ++i) {
    EXPECT_NEAR(h100.attention_fwd_curve[i].efficiency, h200.attention_fwd_curve[i].efficiency,
                0.005) << h100.attention_fwd_curve[i].seq;
  }
}

}  // namespace
}  // namespace clustersim::models
