#include "models/quantization.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::models {
namespace {

using ::testing::HasSubstr;

const GpuSpec& Gpu(std::string_view name) { return **GpuCatalog::Default().Find(name); }

TEST(QuantizationTest, ParsesEveryFormatAndRejectsUnknownNamingTheField) {
  for (std::string_view n :
       {"bf16", "fp16", "fp8", "int8", "int4-gptq", "int4-awq", "nvfp4", "fp8-mixed"}) {
    absl::StatusOr<WeightFormat> f = ParseWeightFormat(n, "inference.weight_dtype");
    ASSERT_TRUE(f.ok()) << n;
    EXPECT_EQ(WeightFormatName(*f), n);
  }
  absl::StatusOr<WeightFormat> bad = ParseWeightFormat("int3", "inference.weight_dtype");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("inference.weight_dtype=\"int3\""));
  EXPECT_THAT(bad.status().message(), HasSubstr("int4-awq"));
}

TEST(QuantizationTest, FourBitCountsGroupScalesAndZeros) {
  // 4 bits + (16-bit scale + 4-bit zero) / 128 = 4.15625.
  EXPECT_DOUBLE_EQ(BitsPerWeight(WeightFormat::kInt4Awq, 128, 4096), 4.15625);
  EXPECT_DOUBLE_EQ(BitsPerWeight(WeightFormat::kInt4Gptq, 64, 4096), 4.3125);
  EXPECT_GT(BitsPerWeight(WeightFormat::kInt4Gptq, 32, 4096),
            BitsPerWeight(WeightFormat::kInt4Gptq, 128, 4096));
  EXPECT_DOUBLE_EQ(BitsPerWeight(WeightFormat::kBf16, 128, 4096), 16);
  EXPECT_DOUBLE_EQ(BitsPerWeight(WeightFormat::kFp8, 128, 4096), 8);
  EXPECT_DOUBLE_EQ(BitsPerWeight(WeightFormat::kInt8, 128, 4096), 8 + 16.0 / 4096);
}

TEST(QuantizationTest, Nvfp4CountsOneFp8ScalePerSixteenValues) {
  // 16 E2M1 values (64 bits) + one E4M3 scale (8 bits) = 72 bits per 16.
  EXPECT_DOUBLE_EQ(BitsPerWeight(WeightFormat::kNvfp4, 128, 4096), 72.0 / 16.0);
  // Neither the group size nor k enters: the block is fixed at 16.
  EXPECT_DOUBLE_EQ(BitsPerWeight(WeightFormat::kNvfp4, 32, 8192), 4.5);
  EXPECT_EQ(ComputeDtype(WeightFormat::kNvfp4), Dtype::kFp4);
  EXPECT_FALSE(IsFourBit(WeightFormat::kNvfp4));  // no quant_group_size
}

TEST(QuantizationTest, Nvfp4NeedsFp4TensorCores) {
  EXPECT_TRUE(CheckWeightFormatSupported(Gpu("b200-sxm-180gb"), WeightFormat::kNvfp4, "f").ok());
  EXPECT_TRUE(CheckWeightFormatSupported(Gpu("gb200-186gb"), WeightFormat::kNvfp4, "f").ok());
  const absl::Status s = CheckWeightFormatSupported(Gpu("h100-sxm5-80gb"), WeightFormat::kNvfp4,
                                                    "inference.weight_dtype");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("inference.weight_dtype=nvfp4"));
  EXPECT_THAT(s.message(), HasSubstr("fp8"));
}

TEST(QuantizationTest, WeightOnlyFormatsComputeIn16Bit) {
  EXPECT_EQ(ComputeDtype(WeightFormat::kInt4Awq), Dtype::kFp16);
  EXPECT_EQ(ComputeDtype(WeightFormat::kFp8), Dtype::kFp8);
  EXPECT_EQ(ComputeDtype(WeightFormat::kInt8), Dtype::kInt8);
}

TEST(QuantizationTest, Fp8WeightsOnA100AreRejectedWithAlternatives) {
  const absl::Status s = CheckWeightFormatSupported(Gpu("a100-sxm4-80gb"), WeightFormat::kFp8,
                                                    "inference.weight_dtype");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("inference.weight_dtype=fp8"));
  EXPECT_THAT(s.message(), HasSubstr("a100-sxm4-80gb"));
  EXPECT_THAT(s.message(), HasSubstr("int4-awq"));
  EXPECT_TRUE(CheckWeightFormatSupported(Gpu("h100-sxm5-80gb"), WeightFormat::kFp8, "f").ok());
  EXPECT_TRUE(CheckWeightFormatSupported(Gpu("a100-sxm4-80gb"), WeightFormat::kInt4Gptq, "f").ok());
}

// fp8-mixed: inner layers' FFN weights at 8 bits plus one fp32 scale per
// output row; attention and the first and last layers' FFN 16-bit; its FP8
// GEMMs need FP8 tensor cores like fp8.
TEST(QuantizationTest, Fp8MixedQuantisesOnlyInnerFfns) {
  EXPECT_DOUBLE_EQ(BitsPerWeight(WeightFormat::kFp8Mixed, 128, 16384), 8 + 32.0 / 16384);
  EXPECT_EQ(ComputeDtype(WeightFormat::kFp8Mixed), Dtype::kFp8);
  EXPECT_TRUE(AttentionKeeps16Bit(WeightFormat::kFp8Mixed));
  EXPECT_FALSE(AttentionKeeps16Bit(WeightFormat::kFp8));
  EXPECT_TRUE(FfnKeeps16Bit(WeightFormat::kFp8Mixed, 0, 126));
  EXPECT_FALSE(FfnKeeps16Bit(WeightFormat::kFp8Mixed, 1, 126));
  EXPECT_TRUE(FfnKeeps16Bit(WeightFormat::kFp8Mixed, 125, 126));
  EXPECT_FALSE(FfnKeeps16Bit(WeightFormat::kFp8, 0, 126));
  EXPECT_EQ(Ffn16BitLayers(WeightFormat::kFp8Mixed, 0, 126, 126), 2);
  EXPECT_EQ(Ffn16BitLayers(WeightFormat::kFp8Mixed, 0, 63, 126), 1);   // first pp stage
  EXPECT_EQ(Ffn16BitLayers(WeightFormat::kFp8Mixed, 63, 63, 126), 1);  // last
  EXPECT_EQ(Ffn16BitLayers(WeightFormat::kFp8Mixed, 1, 2, 4), 0);
  EXPECT_EQ(Ffn16BitLayers(WeightFormat::kBf16, 0, 126, 126), 0);
  EXPECT_TRUE(CheckWeightFormatSupported(Gpu("h100-sxm5-80gb"), WeightFormat::kFp8Mixed, "f").ok());
  const absl::Status s = CheckWeightFormatSupported(Gpu("a100-sxm4-80gb"), WeightFormat::kFp8Mixed,
                                                    "inference.weight_dtype");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("inference.weight_dtype=fp8-mixed"));
}

TEST(QuantizationTest, KvCacheDtypes) {
  EXPECT_EQ(*ParseKvCacheDtype("fp8", "inference.kv_cache_dtype"), Dtype::kFp8);
  absl::StatusOr<Dtype> bad = ParseKvCacheDtype("int4", "inference.kv_cache_dtype");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("inference.kv_cache_dtype"));
}

}  // namespace
}  // namespace clustersim::models
