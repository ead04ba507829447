#include "models/calibration.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "models/kernel_model.h"

namespace clustersim::models {
namespace {

const GpuSpec& Gpu(std::string_view name) {
  absl::StatusOr<const GpuSpec*> g = GpuCatalog::Default().Find(name);
  EXPECT_TRUE(g.ok()) << g.status();
  return **g;
}

std::string SourceFile(const std::string& relative) {
  const char* root = std::getenv("CLUSTERSIM_SOURCE_DIR");
  std::ifstream in(std::string(root ? root : ".") + "/" + relative);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr char kGemmFile[] = R"pb(
  gpu { name: "h100-sxm5-80gb" }
  provenance: "test"
  measurement { kind: KERNEL_GEMM dtype: "bf16" m: 64 n: 128 k: 256 median_us: 10 }
  measurement { kind: KERNEL_GEMM dtype: "bf16" m: 64 n: 128 k: 256 median_us: 12 cold_l2: true }
  measurement { kind: KERNEL_GEMM dtype: "fp8" m: 32 n: 64 k: 128 batch: 3 median_us: 5 }
  measurement { kind: KERNEL_ATTENTION_BWD dtype: "bf16" batch: 2 heads: 4 seq_q: 1024
                seq_kv: 1024 head_dim: 128 causal: true median_us: 100 }
  measurement { kind: KERNEL_MEMORY_BOUND op: "rmsnorm" bytes: 1000000 median_us: 3 }
)pb";

TEST(CalibrationTest, MeasurementsBecomeOpsWithWorkloadConventions) {
  absl::StatusOr<config::MeasurementFile> file = ParseMeasurementFile(kGemmFile, "test");
  ASSERT_TRUE(file.ok()) << file.status();
  absl::StatusOr<std::vector<Measurement>> points = SelectMeasurements(*file);
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(points->size(), 4u);  // the warm and cold runs of one shape are one point
  EXPECT_TRUE((*points)[0].cold_l2);
  EXPECT_EQ((*points)[0].median, sim::Microseconds(12));
  const Op& fp8 = (*points)[1].op;
  EXPECT_EQ(fp8.batch, 3);
  EXPECT_DOUBLE_EQ(fp8.flops.count(), 2.0 * 3 * 32 * 64 * 128);
  EXPECT_EQ(fp8.bytes.count(), 3 * ((32 * 128 + 128 * 64) * 1 + 32 * 64 * 2));  // bf16 output
  const Op& bwd = (*points)[2].op;
  EXPECT_TRUE(IsAttentionBackward(bwd));
  EXPECT_EQ(bwd.batch, 8);
  EXPECT_DOUBLE_EQ(bwd.flops.count(), 2.5 * 4.0 * 8 * 1024 * 1024 * 128);
  EXPECT_EQ((*points)[3].op.kind, OpKind::kMemoryBound);
  EXPECT_EQ((*points)[3].op.bytes.count(), 1000000);
}

TEST(CalibrationTest, BadMeasurementsNameTheEntryAndField) {
  const std::pair<const char*, const char*> cases[] = {
      {R"pb(gpu { name: "h100-sxm5-80gb" } provenance: "t"
            measurement { kind: KERNEL_GEMM dtype: "bf16" m: 1 n: 2 k: 3 median_us: 1 }
            measurement { kind: KERNEL_GEMM dtype: "bf16" m: 0 n: 2 k: 3 median_us: 1 })pb",
       "x.textproto: measurement[1] (gemm bf16 0x2x3): m, n and k must be > 0"},
      {R"pb(gpu { name: "h100-sxm5-80gb" } provenance: "t"
            measurement { kind: KERNEL_GEMM dtype: "bf17" m: 1 n: 2 k: 3 median_us: 1 })pb",
       "bf17"},
      {R"pb(gpu { name: "h100-sxm5-80gb" } provenance: "t"
            measurement { kind: KERNEL_GEMM dtype: "bf16" m: 1 n: 2 k: 3 median_us: 2
                          p10_us: 3 p90_us: 4 })pb",
       "p10_us <= median_us <= p90_us"},
      {R"pb(gpu { name: "h100-sxm5-80gb" }
            measurement { kind: KERNEL_LAUNCH median_us: 2 })pb",
       "provenance must say"},
      {R"pb(gpu { name: "h100-sxm5-80gb" } provenance: "t" measurement { median_us: 2 })pb",
       "kind must be"},
      {R"pb(gpu { name: "h100-sxm5-80gb" } provenance: "t" method_parameters: "kernel_overhead")pb",
       "x.textproto: method_parameters[0] is \"kernel_overhead\"; it must name"},
      {R"pb(gpu { name: "h100-sxm5-80gb" } provenance: "t" fixed_parameters: "overhead_us")pb",
       "x.textproto: fixed_parameters[0] is \"overhead_us\"; it must name"},
      {R"pb(gpu { name: "h100-sxm5-80gb" } provenance: "t" measurement { kind: 7 median_us: 1 })pb",
       "kind must be"},
      {R"pb(gpu { name: "h100-sxm5-80gb" } provenance: "t" measurement { m: "x" })pb",
       "x.textproto: line 1:"},
      // Found by fuzzing (calibration target, 10-minute run): int64 byte counts
      // of a GEMM this large overflowed (UBSan) before the shape was refused.
      {R"pb(gpu { name: "h100-sxm5-80gb" } provenance: "t"
            measurement { kind: KERNEL_GEMM dtype: "bf16" m: 384 n: 24279868386851392 k: 4096
                          median_us: 1 })pb",
       "the shape is too large"},
      {R"pb(gpu { name: "h100-sxm5-80gb" } provenance: "t"
            measurement { kind: KERNEL_ATTENTION_FWD dtype: "bf16" batch: 4294967296
                          heads: 2000000000 seq_q: 4096 seq_kv: 4096 head_dim: 128
                          median_us: 1 })pb",
       "the shape is too large"},
  };
  for (const auto& [text, message] : cases) {
    absl::StatusOr<config::MeasurementFile> f = ParseMeasurementFile(text, "x.textproto");
    ASSERT_FALSE(f.ok()) << text;
    EXPECT_NE(std::string(f.status().message()).find(message), std::string::npos) << f.status();
  }
}

TEST(CalibrationTest, ShippedCalibrationsCoverThePublishedGpus) {
  EXPECT_EQ(Calibration::ShippedGpus(),
            (std::vector<std::string>{"a100-sxm4-80gb", "b200-sxm-180gb", "gb200-186gb",
                                      "h100-sxm5-80gb", "h200-sxm-141gb"}));
  EXPECT_EQ(Calibration::Shipped("a100-sxm4-40gb"), nullptr);
  for (const std::string& name : Calibration::ShippedGpus()) {
    const Calibration* c = Calibration::Shipped(name);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->provenance(), "published points, not measured by models/validator");
    // GB200's points are attention only (cudnn/SOURCE.md): its GEMMs keep the catalog.
    const DtypeFit& bf16 = c->params().For(Dtype::kBf16);
    EXPECT_TRUE(name == "gb200-186gb" ? bf16.attention_fwd_efficiency.has_value()
                                      : bf16.gemm_ceiling.has_value())
        << name;
    EXPECT_GT(c->measured_count(), 0u);
  }
}

TEST(CalibrationTest, InvalidCalibrationFilesAreRejected) {
  EXPECT_FALSE(Calibration::Parse(R"pb(gpu: "h100-sxm5-80gb")pb", "c").ok());  // no provenance
  absl::StatusOr<Calibration> c = Calibration::Parse(
      R"pb(gpu: "h100-sxm5-80gb" provenance: "t" dtype { dtype: "bf16" gemm_ceiling: 1.2 })pb",
      "c.textproto");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(std::string(c.status().message()).find("dtype[0] (bf16)"), std::string::npos);
}

// [MLE-acc] H100 BF16 MAMF, 794.5 TFLOPS at 2048x2048x13312, is in the shipped
// table: that exact shape is "measured"; a neighbour is "fitted".
TEST(CalibrationTest, KernelModelUsesMeasuredThenFittedThenFallback) {
  const GpuSpec& h100 = Gpu("h100-sxm5-80gb");
  const Calibration* cal = Calibration::Shipped("h100-sxm5-80gb");
  ASSERT_NE(cal, nullptr);
  KernelModel model(h100, {}, cal);
  Op gemm;
  gemm.name = "fc1_gemm";
  gemm.kind = OpKind::kGemm;
  gemm.m = 2048;
  gemm.n = 2048;
  gemm.k = 13312;
  gemm.flops = sim::Flops(2.0 * 2048 * 2048 * 13312);
  gemm.bytes = sim::Bytes((2048 * 13312 * 2 + 2048 * 2048) * 2);
  const OpCost measured = model.Cost(gemm);
  EXPECT_EQ(measured.source, CostSource::kMeasured);
  EXPECT_NEAR(gemm.flops.count() / measured.time.ToSeconds() / 1e12, 794.5, 0.1);
  gemm.k = 13440;
  EXPECT_EQ(model.Cost(gemm).source, CostSource::kFitted);
  // No attention or memory-bound kernel among the published points.
  Op norm;
  norm.name = "layernorm1";
  norm.kind = OpKind::kMemoryBound;
  norm.bytes = sim::Bytes(1 << 20);
  EXPECT_EQ(model.Cost(norm).source, CostSource::kSpecFallback);
  // Without a calibration nothing changes.
  KernelModel plain(h100, {}, nullptr);
  EXPECT_EQ(plain.Cost(gemm).source, CostSource::kSpecFallback);
  EXPECT_EQ(plain.Cost(gemm).time, KernelModel(h100).Cost(gemm).time);
}

Op Gemm(Dtype d, int64_t m, int64_t n, int64_t k) {
  Op op;
  op.name = "fc1_gemm";
  op.kind = OpKind::kGemm;
  op.dtype = d;
  op.m = m;
  op.n = n;
  op.k = k;
  op.flops = sim::Flops(2.0 * m * n * k);
  op.bytes = sim::Bytes((m * k + k * n) * BytesPerElement(d) + m * n * 2);
  return op;
}

// The B200 calibration against OpenXLA's measured table (key sm_100, b = 1),
// values copied from models/data/calibration/xla/matmul_interpolator_b1.csv:
// an exact table shape is costed as the table says, and the fitted model (the
// measured table bypassed) lands within 10% of the table at its largest shapes.
TEST(CalibrationTest, B200GemmsAgreeWithTheXlaTable) {
  const GpuSpec& b200 = Gpu("b200-sxm-180gb");
  const Calibration* cal = Calibration::Shipped("b200-sxm-180gb");
  ASSERT_NE(cal, nullptr);
  const Calibration fitted_only(cal->gpu(), cal->params(), {}, cal->provenance());
  const KernelModel measured(b200, {}, cal);
  const KernelModel fitted(b200, {}, &fitted_only);
  const KernelModel spec(b200);
  struct Case {
    Dtype dtype;
    int64_t m, n, k;
    double table_flops;  // FLOP/s in the XLA table
  };
  for (const Case& c : {Case{Dtype::kBf16, 4096, 4096, 4096, 1416867213789406.0},
                        Case{Dtype::kBf16, 2048, 4096, 4096, 1342544381979447.0},
                        Case{Dtype::kFp8, 4096, 4096, 4096, 2764981863158106.0}}) {
    const Op op = Gemm(c.dtype, c.m, c.n, c.k);
    const double table_us = op.flops.count() / c.table_flops * 1e6;
    const OpCost exact = measured.Cost(op);
    EXPECT_EQ(exact.source, CostSource::kMeasured);
    EXPECT_NEAR(exact.time.ToMicroseconds(), table_us, 1e-3);
    const OpCost fit = fitted.Cost(op);
    EXPECT_EQ(fit.source, CostSource::kFitted);
    EXPECT_NEAR(fit.time.ToMicroseconds() / table_us, 1.0, 0.10)
        << DtypeName(c.dtype) << " " << c.m << "x" << c.n << "x" << c.k << ": fitted "
        << fit.time.ToMicroseconds() << " us, table " << table_us << " us, spec fallback "
        << spec.Cost(op).time.ToMicroseconds() << " us";
  }
  // The table's fixed time per kernel belongs to its timing method: not shipped.
  EXPECT_FALSE(cal->params().kernel_overhead.has_value());
  // GB200 does not borrow this one: its own calibration carries attention only.
  const Calibration* gb200 = Calibration::Shipped("gb200-186gb");
  ASSERT_NE(gb200, nullptr);
  EXPECT_FALSE(gb200->params().For(Dtype::kBf16).gemm_ceiling.has_value());
  EXPECT_NE(gb200->params().For(Dtype::kBf16).attention_fwd_efficiency,
            cal->params().For(Dtype::kBf16).attention_fwd_efficiency);
}

TEST(CalibrationDeathTest, CalibrationMustMatchTheGpu) {
  EXPECT_DEATH(KernelModel(Gpu("a100-sxm4-80gb"), {}, Calibration::Shipped("h100-sxm5-80gb")),
               "calibration for h100-sxm5-80gb");
}

TEST(CalibrationTest, ShippedMeasurementFilesParse) {
  for (const char* gpu : {"a100-sxm4-80gb", "b200-sxm-180gb", "gb200-186gb", "h100-sxm5-80gb",
                          "h200-sxm-141gb"}) {
    const std::string path = std::string("models/data/calibration/") + gpu + ".measurements.textproto";
    absl::StatusOr<config::MeasurementFile> f = ParseMeasurementFile(SourceFile(path), path);
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_EQ(f->gpu().name(), gpu);
    EXPECT_EQ(f->provenance(), "published points, not measured by models/validator");
    for (const config::KernelMeasurement& m : f->measurement()) EXPECT_FALSE(m.source().empty());
  }
}

}  // namespace
}  // namespace clustersim::models
