#include "models/attention_curve.h"

#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "models/calibration.h"
#include "models/gpu_catalog.h"
#include "models/kernel_model.h"

namespace clustersim::models {
namespace {

const std::vector<SeqEfficiency> kCurve = {{4096, 0.40}, {8192, 0.52}, {16384, 0.60}};

TEST(AttentionCurveTest, ReturnsThePointsAndInterpolatesInLog2Seq) {
  ASSERT_TRUE(CheckEfficiencyCurve(kCurve, "curve").ok());
  EXPECT_DOUBLE_EQ(InterpolateEfficiency(kCurve, 4096), 0.40);
  EXPECT_DOUBLE_EQ(InterpolateEfficiency(kCurve, 8192), 0.52);
  EXPECT_DOUBLE_EQ(InterpolateEfficiency(kCurve, 16384), 0.60);
  // 4096·sqrt(2) is halfway between 4K and 8K in log2: the mean of the two.
  const int64_t mid = std::llround(4096 * std::sqrt(2.0));
  EXPECT_NEAR(InterpolateEfficiency(kCurve, mid), 0.46, 1e-4);
  // 12288 is log2(1.5) = 0.585 of the way from 8K to 16K, not half.
  EXPECT_NEAR(InterpolateEfficiency(kCurve, 12288), 0.52 + 0.08 * std::log2(1.5), 1e-12);
}

TEST(AttentionCurveTest, ClampsOutsideTheMeasuredRange) {
  EXPECT_DOUBLE_EQ(InterpolateEfficiency(kCurve, 1), 0.40);
  EXPECT_DOUBLE_EQ(InterpolateEfficiency(kCurve, 2048), 0.40);
  EXPECT_DOUBLE_EQ(InterpolateEfficiency(kCurve, 131072), 0.60);
  const std::vector<SeqEfficiency> one = {{8192, 0.5}};
  EXPECT_DOUBLE_EQ(InterpolateEfficiency(one, 1024), 0.5);
  EXPECT_DOUBLE_EQ(InterpolateEfficiency(one, 65536), 0.5);
}

TEST(AttentionCurveTest, BadPointsNameTheFieldAndTheFix) {
  const auto error = [](std::vector<SeqEfficiency> c) {
    return std::string(CheckEfficiencyCurve(c, "dtype[0] (bf16).attention_fwd_curve").message());
  };
  EXPECT_TRUE(CheckEfficiencyCurve({}, "empty").ok());
  EXPECT_EQ(error({{0, 0.5}}),
            "dtype[0] (bf16).attention_fwd_curve[0].seq=0 must be > 0 (query tokens per "
            "sequence)");
  EXPECT_EQ(error({{8192, 0.5}, {4096, 0.4}}),
            "dtype[0] (bf16).attention_fwd_curve[1].seq=4096 must be above the point before "
            "(8192); list the points by increasing seq, one per length");
  EXPECT_NE(error({{4096, 0.4}, {4096, 0.5}}).find("[1].seq=4096 must be above"),
            std::string::npos);
  EXPECT_NE(error({{4096, 1.2}}).find("attention_fwd_curve[0].efficiency=1.2 must be in (0, 1]"),
            std::string::npos);
  EXPECT_NE(error({{4096, 0}}).find("[0].efficiency=0 must be in (0, 1]"), std::string::npos);
  EXPECT_NE(error({{4096, std::numeric_limits<double>::quiet_NaN()}}).find("[0].efficiency=nan"),
            std::string::npos);
}

// A calibration file's curve goes through the same check; the error names the
// file and the dtype entry.
TEST(AttentionCurveTest, CalibrationFileWithABadCurveIsRejected) {
  absl::StatusOr<Calibration> c = Calibration::Parse(
      "gpu: 'h100-sxm5-80gb' provenance: 'test' dtype { dtype: 'bf16' "
      "attention_bwd_efficiency: 0.5 attention_bwd_curve { seq: 4096 efficiency: 0.4 } "
      "attention_bwd_curve { seq: 2048 efficiency: 0.3 } }",
      "cal.textproto");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find(
                "cal.textproto: dtype[0] (bf16).attention_bwd_curve[1].seq=2048 must be above"),
            std::string::npos)
      << c.status();
}

Op CausalAttention(std::string name, int64_t seq_q, int64_t seq_kv) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::kAttention;
  op.dtype = Dtype::kBf16;
  op.batch = 32;
  op.m = seq_q;
  op.n = seq_kv;
  op.k = 128;
  op.causal = true;
  op.flops = sim::Flops(4.0 * op.batch * op.m * op.n * op.k);
  op.bytes = sim::Bytes(4 * op.batch * (op.m + op.n) * op.k * 2);
  return op;
}

// The kernel model reads the curve at the op's query length per rank (after
// the context-parallel split), per direction, scaled by the in-framework and
// kernel factors like the constant; without a curve the constant applies.
TEST(AttentionCurveTest, KernelModelReadsTheCurveAtTheQueryLengthPerRank) {
  const GpuSpec& gpu = **GpuCatalog::Default().Find("h100-sxm5-80gb");
  CalibrationParams constant;
  constant.kernel_overhead = sim::Duration();
  constant.dtype[DtypeIndex(Dtype::kBf16)].attention_fwd_efficiency = 0.5;
  constant.dtype[DtypeIndex(Dtype::kBf16)].attention_bwd_efficiency = 0.45;
  CalibrationParams curved = constant;
  curved.dtype[DtypeIndex(Dtype::kBf16)].attention_fwd_curve = kCurve;
  const Calibration flat(gpu.name, constant, {}, "test"), shaped(gpu.name, curved, {}, "test");
  KernelModelParams framework;
  framework.framework_attention_factor = 0.8;
  framework.attention_kernel_forward = 0.5;
  const KernelModel a(gpu, framework, &flat), b(gpu, framework, &shaped);

  const Op fwd_4k = CausalAttention("attention_fwd", 4096, 4096);
  const Op fwd_cp = CausalAttention("attention_fwd", 4096, 8192);  // 8K split over 2 ranks
  const Op fwd_16k = CausalAttention("attention_fwd", 16384, 16384);
  const double scale = 0.8 * 0.5;
  for (const auto& [op, expected] :
       {std::pair{fwd_4k, 0.40}, std::pair{fwd_cp, 0.40}, std::pair{fwd_16k, 0.60}}) {
    ASSERT_EQ(b.Cost(op).detail, a.Cost(op).detail);
    EXPECT_NEAR(a.Cost(op).time.ToSeconds() / b.Cost(op).time.ToSeconds(),
                expected * scale / (0.5 * scale), 1e-6)
        << op.m << "x" << op.n;
    EXPECT_EQ(b.Cost(op).source, CostSource::kFitted);
  }
  // Backward has no curve here: the constant, the same in both models.
  Op bwd = fwd_4k;
  bwd.name = "attention_bwd";
  bwd.flops = sim::Flops(2.5 * fwd_4k.flops.count());
  EXPECT_EQ(a.Cost(bwd).time, b.Cost(bwd).time);
}

}  // namespace
}  // namespace clustersim::models
