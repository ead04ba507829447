#include "models/gpu_catalog.h"

#include <algorithm>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::models {
namespace {

using ::testing::HasSubstr;

const GpuSpec& Gpu(std::string_view name) {
  absl::StatusOr<const GpuSpec*> g = GpuCatalog::Default().Find(name);
  EXPECT_TRUE(g.ok()) << g.status();
  return **g;
}

TEST(GpuCatalogTest, FindsCanonicalNames) {
  for (const char* name :
       {"a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "h100-sxm5-80gb", "h100-pcie-80gb",
        "h200-sxm-141gb", "b200-sxm-180gb", "gb200-186gb", "l40s", "a10g", "rtx-3090", "rtx-4090",
        "jetson-agx-orin-32gb", "jetson-agx-orin-64gb", "apple-m2-ultra",
        "xeon-platinum-8480plus", "a10-pcie-24gb", "rtx-a6000"}) {
    absl::StatusOr<const GpuSpec*> g = GpuCatalog::Default().Find(name);
    ASSERT_TRUE(g.ok()) << name << ": " << g.status();
    EXPECT_EQ((*g)->name, name);
  }
  std::vector<std::string> names = GpuCatalog::Default().Names();
  EXPECT_EQ(names.size(), 18u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(GpuCatalogTest, UnknownNameListsValidNames) {
  absl::StatusOr<const GpuSpec*> g = GpuCatalog::Default().Find("h100");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(g.status().message(), HasSubstr("h100-sxm5-80gb"));
  EXPECT_THAT(g.status().message(), HasSubstr("'h100'"));
}

// hardware-and-prices.md §1: dense BF16 312 (A100), 989.4 (H100 SXM), 2250 (B200);
// sparse headline numbers must not leak in.
TEST(GpuCatalogTest, DensePeaksMatchSpecSheets) {
  EXPECT_DOUBLE_EQ(Gpu("a100-sxm4-80gb").PeakFlops(Dtype::kBf16), 312e12);
  EXPECT_DOUBLE_EQ(Gpu("a100-sxm4-80gb").PeakFlops(Dtype::kTf32), 156e12);
  EXPECT_DOUBLE_EQ(Gpu("h100-sxm5-80gb").PeakFlops(Dtype::kBf16), 989.4e12);
  EXPECT_DOUBLE_EQ(Gpu("h100-sxm5-80gb").PeakFlops(Dtype::kFp8), 1978.9e12);
  EXPECT_DOUBLE_EQ(Gpu("b200-sxm-180gb").PeakFlops(Dtype::kBf16), 2250e12);
  EXPECT_DOUBLE_EQ(Gpu("rtx-4090").PeakFlops(Dtype::kBf16), 165.2e12);
  EXPECT_DOUBLE_EQ(Gpu("h100-sxm5-80gb").memory_bandwidth_gbs, 3350);
  EXPECT_EQ(Gpu("a100-sxm4-80gb").memory, sim::GiB(80));
}

// Independent derivation (hardware-and-prices.md §1): SMs x dense FLOP/clk/SM x clock.
TEST(GpuCatalogTest, PeakAgreesWithSmCountAndClock) {
  const GpuSpec& h100 = Gpu("h100-sxm5-80gb");
  EXPECT_NEAR(h100.sm_count * 4096.0 * h100.boost_clock_mhz * 1e6 / h100.PeakFlops(Dtype::kBf16),
              1.0, 1e-3);
  const GpuSpec& a100 = Gpu("a100-sxm4-80gb");  // 4 tensor cores x 256 FMA x 2 per SM
  EXPECT_NEAR(a100.sm_count * 2048.0 * a100.boost_clock_mhz * 1e6 / a100.PeakFlops(Dtype::kBf16),
              1.0, 2e-3);
}

TEST(GpuCatalogTest, Fp8OnlyFromHopperAndAda) {
  for (const char* name : {"a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "a10g", "rtx-3090"}) {
    EXPECT_FALSE(Gpu(name).Supports(Dtype::kFp8)) << name;
  }
  for (const char* name : {"h100-sxm5-80gb", "h200-sxm-141gb", "b200-sxm-180gb", "gb200-186gb", "l40s", "rtx-4090"}) {
    EXPECT_TRUE(Gpu(name).Supports(Dtype::kFp8)) << name;
  }
}

// FP4 tensor cores are Blackwell's: NVIDIA's datasheets give 9 PFLOPS dense
// per B200 (HGX B200: 144 sparse per 8 GPUs) and 10 per GB200 GPU (NVL72:
// 1,440 sparse per 72).
TEST(GpuCatalogTest, Fp4OnlyOnBlackwell) {
  EXPECT_DOUBLE_EQ(Gpu("b200-sxm-180gb").PeakFlops(Dtype::kFp4), 144e15 / 8 / 2);
  EXPECT_DOUBLE_EQ(Gpu("gb200-186gb").PeakFlops(Dtype::kFp4), 1440e15 / 72 / 2);
  for (const std::string& name : GpuCatalog::Default().Names()) {
    if (name != "b200-sxm-180gb" && name != "gb200-186gb") {
      EXPECT_FALSE(Gpu(name).Supports(Dtype::kFp4)) << name;
    }
  }
}

TEST(GpuCatalogTest, CheckDtypeSupportedNamesGpuAndAlternatives) {
  absl::Status s = CheckDtypeSupported(Gpu("a100-sxm4-80gb"), Dtype::kFp8);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("fp8"));
  EXPECT_THAT(s.message(), HasSubstr("a100-sxm4-80gb"));
  EXPECT_THAT(s.message(), HasSubstr("bf16"));
  EXPECT_TRUE(CheckDtypeSupported(Gpu("h100-sxm5-80gb"), Dtype::kFp8).ok());
}

// MAMF (hardware-and-prices.md §2): ceiling x peak reproduces the measured TFLOPS.
TEST(GpuCatalogTest, GemmCeilingReproducesMeasuredMamf) {
  EXPECT_NEAR(Gpu("a100-sxm4-80gb").GemmCeiling(Dtype::kBf16) * 312, 271.2, 0.5);
  EXPECT_NEAR(Gpu("h100-sxm5-80gb").GemmCeiling(Dtype::kBf16) * 989, 794.5, 1.0);
  EXPECT_NEAR(Gpu("h100-sxm5-80gb").GemmCeiling(Dtype::kFp8) * 1979, 1402.6, 2.0);
  EXPECT_NEAR(Gpu("b200-sxm-180gb").GemmCeiling(Dtype::kBf16) * 2250, 1745.0, 2.0);
  // No FP8 measurement for the L40S: falls back to its BF16 ceiling.
  EXPECT_EQ(Gpu("l40s").GemmCeiling(Dtype::kFp8), Gpu("l40s").gemm_ceiling_fraction);
}

TEST(GpuCatalogTest, EveryEntryIsSourcedAndSane) {
  for (const std::string& name : GpuCatalog::Default().Names()) {
    const GpuSpec& g = Gpu(name);
    EXPECT_FALSE(g.source.empty()) << name;
    EXPECT_FALSE(g.gemm_ceiling_source.empty()) << name;
    EXPECT_GT(g.gemm_ceiling_fraction, 0.5) << name;
    EXPECT_LE(g.gemm_ceiling_fraction, 1.0) << name;
    // Tensor-core ordering holds on NVIDIA parts (Apple GPUs and CPUs have no TF32).
    if (!g.Supports(Dtype::kTf32)) continue;
    EXPECT_GE(g.PeakFlops(Dtype::kTf32), g.PeakFlops(Dtype::kFp32)) << name;
    EXPECT_GT(g.PeakFlops(Dtype::kBf16), g.PeakFlops(Dtype::kTf32)) << name;
  }
}

TEST(GpuCatalogTest, ParseRejectsBadEntriesNamingTheField) {
  absl::StatusOr<GpuCatalog> c = GpuCatalog::Parse(R"pb(
    gpu {
      name: "x"
      peak { dtype: "bf16" dense_tflops: 100 }
      memory_gib: 16
      sm_count: 10
      gemm_ceiling { dtype: "bf16" fraction: 0.8 source: "s" }
      source: "s"
    })pb");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("memory_bandwidth_gbs"));
  EXPECT_THAT(c.status().message(), HasSubstr("'x'"));

  c = GpuCatalog::Parse(R"pb(gpu { name: "y" peak { dtype: "fp9" dense_tflops: 1 } })pb");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("fp9"));

  EXPECT_FALSE(GpuCatalog::Parse("gpu { nonsense: 1 }").ok());
}

TEST(DtypeTest, ParsesCanonicalNames) {
  for (Dtype d : kAllDtypes) {
    absl::StatusOr<Dtype> parsed = ParseDtype(DtypeName(d));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_EQ(BytesPerElement(Dtype::kTf32), 4);
  EXPECT_EQ(BytesPerElement(Dtype::kFp8), 1);
  EXPECT_EQ(BytesPerElement(Dtype::kBf16), 2);
  EXPECT_EQ(*ParseDtype("fp4"), Dtype::kFp4);
  absl::StatusOr<Dtype> bad = ParseDtype("bfloat16");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("bf16"));
}

// Serving devices: kind, unified memory and the spec-sheet figures
// (models/data/gpus.textproto header lists the sources).
TEST(GpuCatalogTest, ServingDevicesCarryKindMemoryAndSources) {
  const GpuSpec& mac = Gpu("apple-m2-ultra");
  EXPECT_EQ(mac.kind, DeviceKind::kSocGpu);
  EXPECT_TRUE(mac.unified_memory);
  EXPECT_EQ(mac.memory, sim::GiB(192));
  EXPECT_DOUBLE_EQ(mac.memory_bandwidth_gbs, 800);
  EXPECT_FALSE(mac.Supports(Dtype::kBf16));
  EXPECT_DOUBLE_EQ(mac.PeakFlops(Dtype::kFp16), 27.2e12);
  EXPECT_EQ(mac.compute_unit, "GPU cores");
  EXPECT_DOUBLE_EQ(mac.GemmCeiling(Dtype::kFp16), 0.75);  // the FP16 default ceiling

  for (const char* orin : {"jetson-agx-orin-32gb", "jetson-agx-orin-64gb"}) {
    const GpuSpec& g = Gpu(orin);
    EXPECT_EQ(g.kind, DeviceKind::kSocGpu) << orin;
    EXPECT_TRUE(g.unified_memory) << orin;
    EXPECT_DOUBLE_EQ(g.memory_bandwidth_gbs, 204.8) << orin;
    // Ampere SM: 4096 dense INT8 OP/clk, as A100 (2048 BF16 FLOP/clk x 2).
    EXPECT_NEAR(g.sm_count * 4096.0 * g.boost_clock_mhz * 1e6 / g.PeakFlops(Dtype::kInt8), 1.0,
                2e-3)
        << orin;
  }
  EXPECT_EQ(Gpu("jetson-agx-orin-64gb").memory, sim::GiB(64));
  EXPECT_EQ(Gpu("jetson-agx-orin-32gb").memory, sim::GiB(32));

  const GpuSpec& cpu = Gpu("xeon-platinum-8480plus");
  EXPECT_EQ(cpu.kind, DeviceKind::kCpu);
  EXPECT_EQ(cpu.compute_unit, "CPU cores");
  EXPECT_DOUBLE_EQ(cpu.memory_bandwidth_gbs, 8 * 4800e6 * 8 / 1e9);  // 8 ch DDR5-4800
  EXPECT_NEAR(cpu.PeakFlops(Dtype::kBf16), cpu.sm_count * 1024.0 * cpu.boost_clock_mhz * 1e6,
              1e9);  // AMX: 1024 BF16 ops/clk/core

  for (const char* discrete : {"h100-sxm5-80gb", "l40s", "rtx-4090"}) {
    EXPECT_EQ(Gpu(discrete).kind, DeviceKind::kGpu) << discrete;
    EXPECT_FALSE(Gpu(discrete).unified_memory) << discrete;
  }
  for (const std::string& name : GpuCatalog::Default().Names()) {
    EXPECT_FALSE(Gpu(name).source.empty()) << name;
    EXPECT_GT(Gpu(name).memory_bandwidth_gbs, 0) << name;
  }
}

// Ampere GA102 parts: SMs x 1024 dense FP16 FLOP/clk x clock (FP32 accumulate at
// full rate on the data-centre A10 and the professional A6000).
TEST(GpuCatalogTest, Ga102ProfessionalPeaksAgreeWithSmsAndClock) {
  for (const char* name : {"a10-pcie-24gb", "rtx-a6000"}) {
    const GpuSpec& g = Gpu(name);
    EXPECT_NEAR(g.sm_count * 1024.0 * g.boost_clock_mhz * 1e6 / g.PeakFlops(Dtype::kFp16), 1.0,
                2e-3)
        << name;
    EXPECT_FALSE(g.Supports(Dtype::kFp8)) << name;
  }
}

// Serving needs INT8 peaks on every inference GPU the question list names.
TEST(GpuCatalogTest, InferenceGpusCarryInt8AndFp8Peaks) {
  for (const char* g : {"l40s", "a10g", "rtx-3090", "rtx-4090", "jetson-agx-orin-64gb"}) {
    EXPECT_TRUE(Gpu(g).Supports(Dtype::kInt8)) << g;
  }
  EXPECT_DOUBLE_EQ(Gpu("l40s").PeakFlops(Dtype::kFp8), 733e12);
  EXPECT_DOUBLE_EQ(Gpu("rtx-4090").PeakFlops(Dtype::kFp8), 330.3e12);
}

TEST(GpuCatalogTest, ParseRejectsUnknownDeviceKind) {
  absl::StatusOr<GpuCatalog> c = GpuCatalog::Parse(R"pb(
    gpu {
      name: "x" device_kind: "tpu" peak { dtype: "bf16" dense_tflops: 1 } memory_gib: 1
      memory_bandwidth_gbs: 1 sm_count: 1 source: "s"
      gemm_ceiling { dtype: "bf16" fraction: 0.5 source: "s" }
    })pb");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("gpu[0] 'x': device_kind \"tpu\""));
  EXPECT_THAT(c.status().message(), HasSubstr("gpu, soc-gpu or cpu"));
}

// The CUDA runtime's total (cudaMemGetInfo) is the framebuffer less the
// driver's reservation: just under the marketed capacity on HBM parts (H100
// SXM 81106 of 81920 MiB), about 92% of it on GDDR parts sold as "48 GB" or
// "24 GB" (L40S 45589 MiB of a 46068 MiB framebuffer). Where no source gives
// it, the marketed capacity stands in.
TEST(GpuCatalogTest, CudaTotalIsJustBelowTheMarketedCapacity) {
  for (const std::string& name : GpuCatalog::Default().Names()) {
    const GpuSpec& g = Gpu(name);
    if (g.cuda_total_memory_source.empty()) {
      EXPECT_EQ(g.cuda_total_memory, g.memory) << name;
      continue;
    }
    const double share =
        static_cast<double>(g.cuda_total_memory.count()) / static_cast<double>(g.memory.count());
    EXPECT_LT(share, 1.0) << name;
    EXPECT_GT(share, 0.9) << name;
  }
  for (const char* hbm : {"a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "h100-sxm5-80gb",
                          "h100-pcie-80gb", "h200-sxm-141gb", "b200-sxm-180gb", "gb200-186gb"}) {
    const GpuSpec& g = Gpu(hbm);
    EXPECT_FALSE(g.cuda_total_memory_source.empty()) << hbm;
    EXPECT_GT(g.cuda_total_memory.ToGiB(), 0.985 * g.memory.ToGiB()) << hbm;
  }
  EXPECT_EQ(Gpu("h100-sxm5-80gb").cuda_total_memory.count(), int64_t{85045477376});
  EXPECT_NEAR(Gpu("h200-sxm-141gb").cuda_total_memory.ToGiB(), 139.80, 0.005);
  EXPECT_EQ(Gpu("jetson-agx-orin-64gb").cuda_total_memory, Gpu("jetson-agx-orin-64gb").memory);
}

TEST(GpuCatalogTest, ParseRejectsACudaTotalAboveTheCapacityOrWithoutSource) {
  const std::string entry = R"pb(
    gpu { name: "x"
          peak { dtype: "bf16" dense_tflops: 1 }
          memory_gib: 1
          memory_bandwidth_gbs: 1
          sm_count: 1
          source: "s"
          gemm_ceiling { dtype: "bf16" fraction: 0.5 source: "s" }
  )pb";
  absl::StatusOr<GpuCatalog> c = GpuCatalog::Parse(
      entry + "cuda_total_memory_bytes: 2000000000 cuda_total_memory_source: \"s\" }");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("gpu[0] 'x': cuda_total_memory_bytes 2000000000"));
  EXPECT_THAT(c.status().message(), HasSubstr("omit it to use memory_gib"));
  c = GpuCatalog::Parse(entry + "cuda_total_memory_bytes: 1000000000 }");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("cuda_total_memory_source must name"));
  c = GpuCatalog::Parse(entry +
                        "cuda_total_memory_bytes: 1000000000 cuda_total_memory_source: \"s\" }");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c->Find("x"))->cuda_total_memory.count(), 1000000000);
}

}  // namespace
}  // namespace clustersim::models
