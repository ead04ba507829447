#include "models/device_capability.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::models {
namespace {

using ::testing::HasSubstr;

// Every name used here is checked by gpu_catalog_test; value() stops on a typo.
const GpuSpec& Gpu(std::string_view name) { return *GpuCatalog::Default().Find(name).value(); }

absl::StatusOr<DtypeExecution> Weights(std::string_view gpu, std::string_view dtype) {
  return DeviceSupports(Gpu(gpu), dtype, ServingTensor::kWeights, "inference.weight_dtype");
}

TEST(DeviceCapabilityTest, Fp8OnA100IsAnErrorNamingFieldDeviceAndRemedy) {
  absl::StatusOr<DtypeExecution> e = Weights("a100-sxm4-80gb", "fp8");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(e.status().message()),
            "inference.weight_dtype: fp8 is not supported on a100-sxm4-80gb (no FP8 tensor "
            "cores); use int8 or bf16");
}

TEST(DeviceCapabilityTest, Fp8NativeOnAdaHopperBlackwellOnly) {
  for (const char* g : {"h100-sxm5-80gb", "h200-sxm-141gb", "b200-sxm-180gb", "l40s", "rtx-4090"}) {
    absl::StatusOr<DtypeExecution> e = Weights(g, "fp8");
    ASSERT_TRUE(e.ok()) << g << ": " << e.status();
    EXPECT_EQ(e->compute, Dtype::kFp8);
    EXPECT_FALSE(e->dequantised);
  }
  for (const char* g : {"a100-sxm4-40gb", "a10g", "rtx-3090", "jetson-agx-orin-64gb",
                        "jetson-agx-orin-32gb", "apple-m2-ultra", "xeon-platinum-8480plus"}) {
    EXPECT_FALSE(Weights(g, "fp8").ok()) << g;
    EXPECT_FALSE(DeviceSupports(Gpu(g), "fp8", ServingTensor::kKvCache, "kv").ok()) << g;
  }
}

TEST(DeviceCapabilityTest, Int8IsNativeWithInt8UnitsElseWeightOnly) {
  absl::StatusOr<DtypeExecution> a100 = Weights("a100-sxm4-80gb", "int8");
  ASSERT_TRUE(a100.ok());
  EXPECT_EQ(a100->compute, Dtype::kInt8);
  EXPECT_FALSE(a100->dequantised);
  // Apple GPUs have no INT8 matrix rate: llama.cpp Q8_0 dequantises to FP16.
  absl::StatusOr<DtypeExecution> mac = Weights("apple-m2-ultra", "int8");
  ASSERT_TRUE(mac.ok());
  EXPECT_EQ(mac->compute, Dtype::kFp16);
  EXPECT_TRUE(mac->dequantised);
  EXPECT_EQ(mac->storage_bits, 8);
  // An int8 KV cache is widened in attention even where INT8 matmuls exist.
  absl::StatusOr<DtypeExecution> kv =
      DeviceSupports(Gpu("a100-sxm4-40gb"), "int8", ServingTensor::kKvCache, "kv");
  ASSERT_TRUE(kv.ok());
  EXPECT_TRUE(kv->dequantised);
  EXPECT_EQ(kv->compute, Dtype::kFp16);  // A100: BF16 = FP16 rate, the tie goes to FP16
}

TEST(DeviceCapabilityTest, FourBitWeightsDequantiseEverywhereButNotForKv) {
  for (const std::string& g : GpuCatalog::Default().Names()) {
    for (const char* d : {"int4-gptq", "int4-awq"}) {
      absl::StatusOr<DtypeExecution> e = Weights(g, d);
      ASSERT_TRUE(e.ok()) << g << " " << d << ": " << e.status();
      EXPECT_EQ(e->storage_bits, 4);
      EXPECT_TRUE(e->dequantised);
      EXPECT_TRUE(Gpu(g).Supports(e->compute)) << g;
    }
  }
  absl::StatusOr<DtypeExecution> kv = DeviceSupports(Gpu("h100-sxm5-80gb"), "int4-awq",
                                                     ServingTensor::kKvCache,
                                                     "inference.kv_cache_dtype");
  ASSERT_FALSE(kv.ok());
  EXPECT_THAT(kv.status().message(), HasSubstr("inference.kv_cache_dtype"));
  EXPECT_THAT(kv.status().message(), HasSubstr("not a KV-cache dtype"));
}

TEST(DeviceCapabilityTest, Fp8MixedNeedsFp8TensorCoresAndIsNoKvDtype) {
  absl::StatusOr<DtypeExecution> h100 = Weights("h100-sxm5-80gb", "fp8-mixed");
  ASSERT_TRUE(h100.ok()) << h100.status();
  EXPECT_EQ(h100->compute, Dtype::kFp8);
  absl::StatusOr<DtypeExecution> a100 = Weights("a100-sxm4-80gb", "fp8-mixed");
  ASSERT_FALSE(a100.ok());
  EXPECT_THAT(a100.status().message(), HasSubstr("inference.weight_dtype: fp8-mixed"));
  EXPECT_THAT(a100.status().message(), HasSubstr("no FP8 tensor cores"));
  EXPECT_THAT(DeviceSupports(Gpu("h100-sxm5-80gb"), "fp8-mixed", ServingTensor::kKvCache, "kv")
                  .status()
                  .message(),
              HasSubstr("not a KV-cache dtype"));
}

TEST(DeviceCapabilityTest, Nvfp4IsNativeW4A4OnBlackwellOnly) {
  for (const char* g : {"b200-sxm-180gb", "gb200-186gb"}) {
    absl::StatusOr<DtypeExecution> e = Weights(g, "nvfp4");
    ASSERT_TRUE(e.ok()) << g << ": " << e.status();
    EXPECT_EQ(e->compute, Dtype::kFp4);
    EXPECT_EQ(e->storage_bits, 4);
    EXPECT_FALSE(e->dequantised);
  }
  absl::StatusOr<DtypeExecution> h100 = Weights("h100-sxm5-80gb", "nvfp4");
  ASSERT_FALSE(h100.ok());
  EXPECT_THAT(h100.status().message(), HasSubstr("no FP4 tensor cores"));
  EXPECT_THAT(h100.status().message(), HasSubstr("use fp8"));
  absl::StatusOr<DtypeExecution> kv = DeviceSupports(Gpu("b200-sxm-180gb"), "nvfp4",
                                                     ServingTensor::kKvCache, "kv");
  ASSERT_FALSE(kv.ok());
  EXPECT_THAT(kv.status().message(), HasSubstr("not a KV-cache dtype"));
}

TEST(DeviceCapabilityTest, DequantComputeIsTheFaster16BitType) {
  EXPECT_EQ(DequantComputeDtype(Gpu("apple-m2-ultra")), Dtype::kFp16);      // no BF16
  EXPECT_EQ(DequantComputeDtype(Gpu("xeon-platinum-8480plus")), Dtype::kBf16);  // AMX BF16
  EXPECT_EQ(DequantComputeDtype(Gpu("h100-sxm5-80gb")), Dtype::kFp16);      // tie -> FP16
}

TEST(DeviceCapabilityTest, Bf16OnAppleSuggestsFp16) {
  absl::StatusOr<DtypeExecution> e = Weights("apple-m2-ultra", "bf16");
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("no BF16 tensor cores"));
  EXPECT_THAT(e.status().message(), HasSubstr("use fp16"));
  absl::StatusOr<DtypeExecution> cpu = Weights("xeon-platinum-8480plus", "fp8");
  ASSERT_FALSE(cpu.ok());
  EXPECT_THAT(cpu.status().message(), HasSubstr("no FP8 matrix or vector unit"));
  EXPECT_THAT(cpu.status().message(), HasSubstr("use int8 or bf16"));
}

TEST(DeviceCapabilityTest, UnknownDtypeListsValidNames) {
  absl::StatusOr<DtypeExecution> e = Weights("h100-sxm5-80gb", "int3");
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("inference.weight_dtype: unknown dtype 'int3'"));
  EXPECT_THAT(e.status().message(), HasSubstr("int4-awq"));
  absl::StatusOr<DtypeExecution> kv =
      DeviceSupports(Gpu("h100-sxm5-80gb"), "q4", ServingTensor::kKvCache, "kv");
  ASSERT_FALSE(kv.ok());
  EXPECT_THAT(kv.status().message(), ::testing::Not(HasSubstr("int4")));
}

}  // namespace
}  // namespace clustersim::models
