#include "models/power_model.h"

#include <string>

#include "gtest/gtest.h"
#include "models/kernel_model.h"

namespace clustersim::models {
namespace {

const GpuSpec& Gpu(const std::string& name) { return **GpuCatalog::Default().Find(name); }

TEST(PowerModelTest, ExponentIsFittedToTheFitPoint) {
  const PowerModel& pm = PowerModel::Default();
  const CapPoint& f = pm.fit();
  // The fit reproduces its own point exactly; the exponent is between the
  // linear (voltage floor) and cubic (V proportional to f) limits.
  EXPECT_NEAR(PowerModel::ClockRatio(f.cap_w, f.default_w, f.idle_w, pm.exponent()),
              f.throughput_ratio, 1e-12);
  EXPECT_GT(pm.exponent(), 1.0);
  EXPECT_LT(pm.exponent(), 3.0);
}

// The published points the fit did not see: each predicted GEMM ratio lies in
// its band (a step's band bounds the GEMM ratio from above), within tolerance.
TEST(PowerModelTest, HeldOutPublishedPointsWithinTolerance) {
  const PowerModel& pm = PowerModel::Default();
  ASSERT_FALSE(pm.held_out().empty());
  for (const CapPoint& p : pm.held_out()) {
    const double r = PowerModel::ClockRatio(p.cap_w, p.default_w, p.idle_w, pm.exponent());
    const double hi = p.throughput_ratio_max > 0 ? p.throughput_ratio_max : p.throughput_ratio;
    EXPECT_GE(r, p.throughput_ratio - pm.held_out_tolerance()) << p.gpu << " at " << p.cap_w;
    EXPECT_LE(r, hi + pm.held_out_tolerance()) << p.gpu << " at " << p.cap_w;
  }
}

TEST(PowerModelTest, RatioIsOneAtOrAboveTheDefaultLimitAndWithoutCap) {
  const PowerModel& pm = PowerModel::Default();
  const BoardPower b = pm.For(Gpu("h100-sxm5-80gb"));
  EXPECT_EQ(pm.ClockRatio(b, 0), 1.0);
  EXPECT_EQ(pm.ClockRatio(b, 700), 1.0);
  EXPECT_EQ(pm.ClockRatio(b, 800), 1.0);
}

TEST(PowerModelTest, RatioFallsMonotonicallyWithTheCap) {
  const PowerModel& pm = PowerModel::Default();
  const BoardPower b = pm.For(Gpu("h100-sxm5-80gb"));
  double last = 1.0;
  for (double cap = 690; cap >= 200; cap -= 10) {
    const double r = pm.ClockRatio(b, cap);
    EXPECT_LT(r, last) << cap;
    EXPECT_GT(r, 0) << cap;
    last = r;
  }
  // 500 W on a 700 W H100: ((500 - 78.83) / (700 - 78.83))^(1/a).
  EXPECT_NEAR(pm.ClockRatio(b, 500), 0.717, 0.002);
}

TEST(PowerModelTest, SourcedBoardsAndFallback) {
  const PowerModel& pm = PowerModel::Default();
  const BoardPower h100 = pm.For(Gpu("h100-sxm5-80gb"));
  EXPECT_TRUE(h100.sourced);
  EXPECT_EQ(h100.min_limit_w, 200);
  EXPECT_EQ(h100.max_limit_w, 700);
  const BoardPower a100 = pm.For(Gpu("a100-sxm4-80gb"));
  EXPECT_EQ(a100.min_limit_w, 100);
  EXPECT_EQ(a100.max_limit_w, 400);
  const BoardPower b200 = pm.For(Gpu("b200-sxm-180gb"));
  EXPECT_FALSE(b200.sourced);
  EXPECT_EQ(b200.max_limit_w, 1000);
  EXPECT_NE(b200.source.find("fallback"), std::string::npos);
}

TEST(PowerModelTest, CheckCapNamesFieldAndRange) {
  const PowerModel& pm = PowerModel::Default();
  const GpuSpec& h100 = Gpu("h100-sxm5-80gb");
  EXPECT_TRUE(pm.CheckCap(h100, 500, "cluster.power_cap_w").ok());
  EXPECT_TRUE(pm.CheckCap(h100, 700, "cluster.power_cap_w").ok());
  for (double bad : {-1.0, 150.0, 701.0}) {
    const absl::Status s = pm.CheckCap(h100, bad, "cluster.power_cap_w");
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("cluster.power_cap_w"), std::string::npos);
    EXPECT_NE(s.message().find("[200, 700]"), std::string::npos) << s.message();
  }
}

TEST(PowerModelTest, DrawUnderCap) {
  const PowerModel& pm = PowerModel::Default();
  const BoardPower b = pm.For(Gpu("h100-sxm5-80gb"));
  const KernelDraw stock = pm.Draw(b, 0);
  EXPECT_EQ(stock.compute_w, 700);
  EXPECT_LT(stock.memory_w, stock.compute_w);
  EXPECT_GT(stock.memory_w, stock.idle_w);
  const KernelDraw capped = pm.Draw(b, 250);
  EXPECT_EQ(capped.compute_w, 250);
  EXPECT_EQ(capped.memory_w, 250);  // 0.43 x 700 = 301 W is above this cap
}

TEST(PowerModelTest, ParseRejectsBadFiles) {
  EXPECT_FALSE(PowerModel::Parse("nonsense {", "f").ok());
  // A fit point with the cap above the default limit.
  const absl::StatusOr<PowerModel> m = PowerModel::Parse(
      R"pb(fit { gpu: "x" cap_w: 800 default_w: 700 idle_w: 80 throughput_ratio: 0.5 source: "s" }
           memory_bound_fraction: 0.4
           fallback_idle_fraction: 0.1
           fallback_min_limit_fraction: 0.25)pb",
      "f");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("f fit"), std::string::npos);
}

// A cap slows compute-bound kernels by the clock ratio and leaves the HBM
// roofline alone.
TEST(PowerModelTest, KernelModelAppliesTheRatioToComputeOnly) {
  const GpuSpec& gpu = Gpu("h100-sxm5-80gb");
  KernelModelParams capped;
  capped.compute_clock_ratio = 0.7;
  const KernelModel stock_model(gpu), capped_model(gpu, capped);
  Op big{.name = "big", .kind = OpKind::kGemm, .dtype = Dtype::kBf16};
  big.m = big.n = big.k = 8192;
  big.flops = sim::Flops(2.0 * 8192 * 8192 * 8192);
  big.bytes = sim::Bytes(3LL * 8192 * 8192 * 2);
  ASSERT_TRUE(stock_model.IsComputeBound(big));
  const double t0 = stock_model.Cost(big).time.ToSeconds();
  const double t1 = capped_model.Cost(big).time.ToSeconds();
  EXPECT_NEAR(t1 / t0, 1 / 0.7, 0.01);
  Op copy{.name = "copy", .kind = OpKind::kMemoryBound, .dtype = Dtype::kBf16};
  copy.bytes = sim::Bytes(1LL << 30);
  EXPECT_FALSE(stock_model.IsComputeBound(copy));
  EXPECT_EQ(stock_model.Cost(copy).time, capped_model.Cost(copy).time);
}

// The sustained / burst ratios are the published pairs of the data file:
// expected values are computed here from the source numbers.
TEST(PowerModelTest, SustainedRatiosArePublishedPairs) {
  const PowerModel& pm = PowerModel::Default();
  const SustainedGemm h200 = pm.Sustained(Gpu("h200-sxm-141gb"), Dtype::kBf16);
  EXPECT_TRUE(h200.sourced);
  EXPECT_TRUE(h200.borrowed_from.empty());
  EXPECT_NEAR(h200.ratio, 755.5 / 852.1, 1e-12);  // MSMF / MAMF, 8x H200 [MLE-MSMF]
  const SustainedGemm b200 = pm.Sustained(Gpu("b200-sxm-180gb"), Dtype::kBf16);
  EXPECT_NEAR(b200.ratio, 1437.5 / 1746.7, 1e-12);  // MSMF / MAMF, 8x B200 [MLE-MSMF]
  const SustainedGemm a100 = pm.Sustained(Gpu("a100-sxm4-80gb"), Dtype::kBf16);
  EXPECT_NEAR(a100.ratio, 1305.0 / 1410.0, 1e-12);  // HPL clock / boost [GLK-PEAK]
  EXPECT_EQ(a100.quantity, "SM clock MHz");
  // Borrowed entries take the numbers of the GPU they name.
  const SustainedGemm h100 = pm.Sustained(Gpu("h100-sxm5-80gb"), Dtype::kBf16);
  EXPECT_EQ(h100.borrowed_from, "h200-sxm-141gb");
  EXPECT_EQ(h100.ratio, h200.ratio);
  EXPECT_EQ(h100.sustained, 755.5);
  EXPECT_EQ(pm.Sustained(Gpu("gb200-186gb"), Dtype::kBf16).ratio, b200.ratio);
  EXPECT_EQ(pm.Sustained(Gpu("a100-sxm4-40gb"), Dtype::kBf16).ratio, a100.ratio);
  // Newer parts hold less of their burst rate at the limit.
  EXPECT_GT(a100.ratio, h200.ratio);
  EXPECT_GT(h200.ratio, b200.ratio);
}

// A kernel model given the GPU's sustained ratios (training and serving runs)
// slows compute-bound GEMMs by the input type's ratio and leaves memory-bound
// ones at their HBM time.
TEST(PowerModelTest, SustainedRatiosSlowComputeBoundGemmsOnly) {
  const PowerModel& pm = PowerModel::Default();
  const GpuSpec& h100 = Gpu("h100-sxm5-80gb");
  KernelModelParams params;
  pm.SetSustainedGemmRatios(h100, &params);
  EXPECT_EQ(params.sustained_gemm_ratio[DtypeIndex(Dtype::kFp8)],
            pm.Sustained(h100, Dtype::kFp8).ratio);
  EXPECT_EQ(params.sustained_gemm_ratio[DtypeIndex(Dtype::kBf16)],
            pm.Sustained(h100, Dtype::kBf16).ratio);
  const KernelModel burst(h100), sustained(h100, params);
  Op big{.name = "prefill_gemm", .kind = OpKind::kGemm, .dtype = Dtype::kFp8};
  big.m = 8192, big.n = 14336, big.k = 4096;
  big.flops = sim::Flops(2.0 * big.m * big.n * big.k);
  big.bytes = sim::Bytes(big.m * big.k + big.k * big.n + 2 * big.m * big.n);
  ASSERT_TRUE(burst.IsComputeBound(big));
  EXPECT_GT(sustained.Cost(big).time, burst.Cost(big).time);
  Op decode = big;  // one token: bound by reading the weights
  decode.m = 1;
  decode.flops = sim::Flops(2.0 * decode.n * decode.k);
  decode.bytes = sim::Bytes(decode.k + decode.k * decode.n + 2 * decode.n);
  ASSERT_FALSE(burst.IsComputeBound(decode));
  EXPECT_EQ(sustained.Cost(decode).time, burst.Cost(decode).time);
}

// FP8 GEMMs take their own published pair where the file has one, else the
// GPU's 16-bit entry, else the fallback; the FP8 entry does not enter the mean.
TEST(PowerModelTest, SustainedRatioIsPerInputType) {
  const PowerModel& pm = PowerModel::Default();
  const SustainedGemm h100 = pm.Sustained(Gpu("h100-sxm5-80gb"), Dtype::kFp8);
  EXPECT_TRUE(h100.sourced);
  EXPECT_EQ(h100.dtype, "fp8");
  EXPECT_NEAR(h100.ratio, 1575.0 / 1980.0, 1e-12);  // SM clock under FP8 GEMMs [DEEPGEMM-120]
  EXPECT_EQ(h100.quantity, "SM clock MHz");
  const SustainedGemm h200 = pm.Sustained(Gpu("h200-sxm-141gb"), Dtype::kFp8);
  EXPECT_EQ(h200.borrowed_from, "h100-sxm5-80gb");
  EXPECT_EQ(h200.ratio, h100.ratio);
  // FP8 settles lower than BF16 on the same board.
  EXPECT_LT(h100.ratio, pm.Sustained(Gpu("h100-sxm5-80gb"), Dtype::kBf16).ratio);
  // Blackwell: its 16-bit ratio scaled by Hopper's FP8 / BF16 ratio (inferred).
  const GpuSpec& b200 = Gpu("b200-sxm-180gb");
  const SustainedGemm b200_fp8 = pm.Sustained(b200, Dtype::kFp8);
  EXPECT_EQ(b200_fp8.scaled_from, "h100-sxm5-80gb");
  EXPECT_NEAR(b200_fp8.ratio,
              pm.Sustained(b200, Dtype::kBf16).ratio * h100.ratio /
                  pm.Sustained(Gpu("h100-sxm5-80gb"), Dtype::kBf16).ratio,
              1e-12);
  EXPECT_EQ(pm.Sustained(Gpu("gb200-186gb"), Dtype::kFp8).ratio, b200_fp8.ratio);
  // No FP8 entry: the GPU's 16-bit one, or the fallback.
  EXPECT_EQ(pm.Sustained(Gpu("a100-sxm4-80gb"), Dtype::kFp8).ratio,
            pm.Sustained(Gpu("a100-sxm4-80gb"), Dtype::kBf16).ratio);
  EXPECT_EQ(pm.Sustained(Gpu("l40s"), Dtype::kFp8).ratio, pm.sustained_fallback_ratio());
}

// A check the FP8 ratio did not see: the H200's FP8 GEMM at the shape whose
// sustained rate ml-engineering's mamf-finder published ([MLE-MSMF-FP8]:
// 1536x2816 at K=10240 holds 1335-1372 TFLOPS, one GPU at its 700 W limit),
// costed from the shipped calibration's burst ceiling times the sustained
// ratio (1,333 TFLOPS); the BF16 ratio would put it at about 1,490.
TEST(PowerModelTest, Fp8SustainedRateMatchesThePublishedH200Rate) {
  const PowerModel& pm = PowerModel::Default();
  const GpuSpec& h200 = Gpu("h200-sxm-141gb");
  KernelModelParams sustained;
  for (Dtype d : kAllDtypes) {
    sustained.sustained_gemm_ratio[DtypeIndex(d)] = pm.Sustained(h200, d).ratio;
  }
  const KernelModel model(h200, sustained, Calibration::Shipped(h200.name));
  Op gemm;
  gemm.name = "gemm";
  gemm.kind = OpKind::kGemm;
  gemm.dtype = Dtype::kFp8;
  gemm.m = 1536;
  gemm.n = 2816;
  gemm.k = 10240;
  gemm.flops = sim::Flops(2.0 * 1536 * 2816 * 10240);
  gemm.bytes = sim::Bytes(1536LL * 10240 + 10240LL * 2816 + 1536LL * 2816 * 2);
  const double tflops = gemm.flops.count() / model.Cost(gemm).time.ToSeconds() / 1e12;
  EXPECT_GT(tflops, 1335 * 0.97);
  EXPECT_LT(tflops, 1372 * 1.03);
}

TEST(PowerModelTest, SustainedFallbackIsTheMeanOfTheMeasuredEntries) {
  const PowerModel& pm = PowerModel::Default();
  const double mean = (1305.0 / 1410.0 + 755.5 / 852.1 + 1437.5 / 1746.7) / 3;
  EXPECT_NEAR(pm.sustained_fallback_ratio(), mean, 1e-12);
  const SustainedGemm l40s = pm.Sustained(Gpu("l40s"), Dtype::kBf16);
  EXPECT_FALSE(l40s.sourced);
  EXPECT_NEAR(l40s.ratio, mean, 1e-12);
  EXPECT_NE(l40s.source.find("mean"), std::string::npos) << l40s.source;
}

// A valid file with the given sustained entries appended.
std::string PowerFile(const std::string& sustained) {
  return R"pb(
           fit { gpu: "x" cap_w: 500 default_w: 1000 idle_w: 100 throughput_ratio: 0.5 source: "s" }
           memory_bound_fraction: 0.4
           fallback_idle_fraction: 0.1
           fallback_min_limit_fraction: 0.25
         )pb" +
         sustained;
}

TEST(PowerModelTest, SustainedEntriesParse) {
  absl::StatusOr<PowerModel> pm = PowerModel::Parse(
      PowerFile(R"pb(
        sustained { gpu: "h100-sxm5-80gb" borrowed_from: "b200-sxm-180gb" source: "same die" }
        sustained {
          gpu: "b200-sxm-180gb"
          sustained: 800
          burst: 1000
          quantity: "TFLOPS"
          source: "s"
        }
      )pb"),
      "test");
  ASSERT_TRUE(pm.ok()) << pm.status();
  EXPECT_NEAR(pm->Sustained(Gpu("h100-sxm5-80gb"), Dtype::kBf16).ratio, 0.8, 1e-12);
  EXPECT_NEAR(pm->sustained_fallback_ratio(), 0.8, 1e-12);
}

// A scaled entry: its GPU's 16-bit ratio times the named GPU's type / 16-bit
// ratio, read after the borrowed entries it may rest on.
TEST(PowerModelTest, ScaledEntriesCarryTheTypeRatioOver) {
  absl::StatusOr<PowerModel> pm = PowerModel::Parse(
      PowerFile(R"pb(
        sustained { gpu: "h100-sxm5-80gb" dtype: "fp8" scaled_from: "a" source: "s" }
        sustained { gpu: "a" sustained: 800 burst: 1000 quantity: "q" source: "s" }
        sustained { gpu: "a" dtype: "fp8" sustained: 600 burst: 1000 quantity: "q" source: "s" }
        sustained { gpu: "h100-sxm5-80gb" borrowed_from: "b" source: "s" }
        sustained { gpu: "b" sustained: 500 burst: 1000 quantity: "q" source: "s" }
      )pb"),
      "test");
  ASSERT_TRUE(pm.ok()) << pm.status();
  const SustainedGemm fp8 = pm->Sustained(Gpu("h100-sxm5-80gb"), Dtype::kFp8);
  EXPECT_NEAR(fp8.ratio, 0.5 * 0.6 / 0.8, 1e-12);
  EXPECT_EQ(fp8.scaled_from, "a");
  EXPECT_EQ(fp8.dtype, "fp8");
  // A scaled entry is not a measurement: the fallback mean leaves it out.
  EXPECT_NEAR(pm->sustained_fallback_ratio(), (0.8 + 0.5) / 2, 1e-12);
}

TEST(PowerModelTest, SustainedEntriesPerInputTypeParse) {
  absl::StatusOr<PowerModel> pm = PowerModel::Parse(
      PowerFile(R"pb(
        sustained { gpu: "h100-sxm5-80gb" sustained: 800 burst: 1000 quantity: "q" source: "s" }
        sustained {
          gpu: "h100-sxm5-80gb"
          dtype: "fp8"
          sustained: 600
          burst: 1000
          quantity: "q"
          source: "s"
        }
        sustained { gpu: "h200-sxm-141gb" dtype: "fp8" borrowed_from: "h100-sxm5-80gb" source: "s" }
      )pb"),
      "test");
  ASSERT_TRUE(pm.ok()) << pm.status();
  EXPECT_NEAR(pm->Sustained(Gpu("h100-sxm5-80gb"), Dtype::kFp8).ratio, 0.6, 1e-12);
  EXPECT_NEAR(pm->Sustained(Gpu("h100-sxm5-80gb"), Dtype::kBf16).ratio, 0.8, 1e-12);
  EXPECT_NEAR(pm->Sustained(Gpu("h200-sxm-141gb"), Dtype::kFp8).ratio, 0.6, 1e-12);
  // H200 has no 16-bit entry: its BF16 GEMMs take the fallback, the 16-bit mean.
  EXPECT_FALSE(pm->Sustained(Gpu("h200-sxm-141gb"), Dtype::kBf16).sourced);
  EXPECT_NEAR(pm->sustained_fallback_ratio(), 0.8, 1e-12);
}

TEST(PowerModelTest, BadSustainedEntriesNameTheEntryAndField) {
  const struct {
    std::string entries, expect;
  } cases[] = {
      {R"pb(sustained { gpu: "a" sustained: 900 burst: 800 quantity: "TFLOPS" source: "s" })pb",
       "sustained[0] 'a': needs 0 < sustained <= burst"},
      {R"pb(sustained { gpu: "a" sustained: 0 burst: 800 quantity: "TFLOPS" source: "s" })pb",
       "sustained <= burst"},
      {R"pb(sustained { gpu: "a" sustained: 700 burst: 800 source: "s" })pb", "a quantity"},
      {R"pb(sustained { gpu: "a" sustained: 700 burst: 800 quantity: "TFLOPS" })pb",
       "gpu and source are required"},
      {R"pb(sustained { gpu: "a" sustained: 700 burst: 800 quantity: "q" source: "s" }
            sustained { gpu: "a" sustained: 600 burst: 800 quantity: "q" source: "s" })pb",
       "a second entry for the same GPU and dtype"},
      {R"pb(sustained { gpu: "a" sustained: 700 burst: 800 quantity: "q" source: "s" }
            sustained { gpu: "b" borrowed_from: "c" source: "s" })pb",
       "borrowed_from 'c' must name an entry of the same dtype measured on its own GPU"},
      {R"pb(sustained { gpu: "a" sustained: 700 burst: 800 quantity: "q" source: "s" }
            sustained { gpu: "b" borrowed_from: "a" burst: 5 source: "s" })pb",
       "takes sustained, burst and quantity from 'a'; remove them"},
      {R"pb(sustained { gpu: "b" borrowed_from: "a" source: "s" })pb",
       "borrowed_from 'a' must name an entry of the same dtype measured"},
      {"", "needs at least one 16-bit sustained entry (no dtype) measured on its own GPU"},
      {R"pb(sustained { gpu: "a" dtype: "fp8" sustained: 7 burst: 8 quantity: "q" source: "s" })pb",
       "needs at least one 16-bit sustained entry"},
      {R"pb(sustained { gpu: "a" dtype: "f8" sustained: 7 burst: 8 quantity: "q" source: "s" })pb",
       "sustained[0] 'a' dtype 'f8': dtype: "},
      {R"pb(sustained { gpu: "a" sustained: 7 burst: 8 quantity: "q" source: "s" }
            sustained { gpu: "a" dtype: "fp8" sustained: 6 burst: 8 quantity: "q" source: "s" }
            sustained { gpu: "a" dtype: "fp8" sustained: 5 burst: 8 quantity: "q" source: "s" })pb",
       "sustained[2] 'a' dtype 'fp8': a second entry for the same GPU and dtype"},
      {R"pb(sustained { gpu: "a" sustained: 7 burst: 8 quantity: "q" source: "s" }
            sustained { gpu: "b" dtype: "fp8" borrowed_from: "a" source: "s" })pb",
       "borrowed_from 'a' must name an entry of the same dtype"},
      {R"pb(sustained { gpu: "a" sustained: 7 burst: 8 quantity: "q" source: "s" }
            sustained { gpu: "b" scaled_from: "a" source: "s" })pb",
       "sustained[1] 'b': a scaled_from entry needs a dtype"},
      {R"pb(sustained { gpu: "a" sustained: 7 burst: 8 quantity: "q" source: "s" }
            sustained { gpu: "b" dtype: "fp8" scaled_from: "a" source: "s" })pb",
       "scaled_from needs a 16-bit entry (no dtype) of 'b'"},
      {R"pb(sustained { gpu: "a" sustained: 7 burst: 8 quantity: "q" source: "s" }
            sustained { gpu: "a" dtype: "fp8" scaled_from: "a" source: "s" })pb",
       "scaled_from 'a' must have an entry of dtype 'fp8' measured on its own GPU"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<PowerModel> pm = PowerModel::Parse(PowerFile(c.entries), "gpu_power.textproto");
    ASSERT_FALSE(pm.ok()) << c.entries;
    EXPECT_EQ(pm.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(pm.status().message().find(c.expect), std::string::npos)
        << pm.status().message() << "\nexpected: " << c.expect;
  }
}

}  // namespace
}  // namespace clustersim::models
