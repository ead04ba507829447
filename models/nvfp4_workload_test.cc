// NVFP4 training (Transformer Engine's NVFP4BlockScaling): the linear layers'
// GEMMs in FP4 at the FP4 tensor-core rate, attention and the output layer in
// BF16, and the quantize traffic of the recipe.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/calibration.h"
#include "models/fp8_recipe.h"
#include "models/gpu_catalog.h"
#include "models/kernel_model.h"
#include "models/transformer_config.h"
#include "models/workload.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Get;

TransformerConfig Llama() { return testing::SmallGqaLlama(); }

const ShardSpec kNvfp4{.dtype = Dtype::kFp4, .fp8_recipe = Fp8Recipe::kNvfp4};

// fprop, dgrad and wgrad of every linear run in FP4; attention and the output
// layer stay BF16 (fp8_dpa False; the head is not a TE module).
TEST(Nvfp4WorkloadTest, LinearsRunInFp4AndTheRestInBf16) {
  absl::StatusOr<Workload> w = BuildWorkload(Llama(), kNvfp4);
  ASSERT_TRUE(w.ok()) << w.status();
  for (const char* name : {"qkv_gemm", "out_proj_gemm", "fc1_gemm", "fc2_gemm"}) {
    EXPECT_EQ(Get(w->layer_forward, name).dtype, Dtype::kFp4) << name;
    EXPECT_EQ(Get(w->layer_backward, std::string(name) + "_dgrad").dtype, Dtype::kFp4) << name;
    EXPECT_EQ(Get(w->layer_backward, std::string(name) + "_wgrad").dtype, Dtype::kFp4) << name;
  }
  EXPECT_EQ(Get(w->layer_forward, "attention_fwd").dtype, Dtype::kBf16);
  EXPECT_EQ(Get(w->layer_backward, "attention_bwd").dtype, Dtype::kBf16);
  EXPECT_EQ(Get(w->head_forward, "lm_head_gemm").dtype, Dtype::kBf16);
}

// Each activation and gradient quantize moves three 2 B reads (amax, rowwise
// cast, RHT + columnwise cast) and two 0.5625 B writes: 7.125 B per element.
TEST(Nvfp4WorkloadTest, QuantizeMovesTheRecipesBytes) {
  EXPECT_DOUBLE_EQ(Fp8CastBytesPerElement(Fp8Recipe::kNvfp4), 7.125);
  EXPECT_DOUBLE_EQ(Fp8WeightCastBytesPerElement(Fp8Recipe::kNvfp4), 5.125);
  EXPECT_EQ(Fp8GroupedCastKernels(Fp8Recipe::kNvfp4, 4), 12);
  absl::StatusOr<Workload> w = BuildWorkload(Llama(), kNvfp4);
  ASSERT_TRUE(w.ok()) << w.status();
  const int64_t elements = int64_t{16384} * (4096 + 4096 + 4096 + 11008);
  EXPECT_EQ(Get(w->layer_forward, "fp8_cast_fwd").bytes.count(),
            static_cast<int64_t>(elements * 7.125));
  EXPECT_GT(Get(w->layer_backward, "fp8_cast_bwd").bytes.count(), 0);
}

// Under KernelModelParams::fp4_gemm_as_mxfp8 a compute-bound FP4 GEMM reaches
// the fraction of the FP4 peak that an MXFP8 GEMM reaches of the FP8 peak:
// on a GB200 (FP4 peak twice FP8's) it takes half the MXFP8 GEMM's time.
TEST(Nvfp4WorkloadTest, Fp4GemmsRunAtMxfp8sFractionOfTheFp4Peak) {
  const GpuSpec& gpu = *GpuCatalog::Default().Find("gb200-186gb").value();
  const Calibration* cal = Calibration::Shipped(gpu.name);
  KernelModelParams mxfp8;
  mxfp8.sustained_gemm_ratio[DtypeIndex(Dtype::kFp8)] = 0.74;
  mxfp8.sustained_gemm_ratio[DtypeIndex(Dtype::kFp4)] = 0.82;
  mxfp8.fp8_recipe_gemm_factor = Fp8GemmRateFactor(Fp8Recipe::kMxfp8);
  KernelModelParams nvfp4 = mxfp8;
  nvfp4.fp8_recipe_gemm_factor = Fp8GemmRateFactor(Fp8Recipe::kNvfp4);
  nvfp4.fp4_gemm_as_mxfp8 = true;
  const KernelModel as_mxfp8(gpu, mxfp8, cal), as_nvfp4(gpu, nvfp4, cal);
  Op fp8;
  fp8.name = "fc1_gemm";
  fp8.kind = OpKind::kGemm;
  fp8.m = fp8.n = fp8.k = 8192;
  fp8.flops = sim::Flops(2.0 * 8192 * 8192 * 8192);
  fp8.bytes = sim::Bytes(3LL * 8192 * 8192);
  fp8.dtype = Dtype::kFp8;
  Op fp4 = fp8;
  fp4.dtype = Dtype::kFp4;
  ASSERT_TRUE(as_nvfp4.IsComputeBound(fp4));
  EXPECT_NEAR(as_nvfp4.Cost(fp4).efficiency, as_mxfp8.Cost(fp8).efficiency, 0.005);
  EXPECT_NEAR(as_nvfp4.Cost(fp4).time.ToSeconds() / as_mxfp8.Cost(fp8).time.ToSeconds(), 0.5,
              0.01);
  // Without the flag (serving's W4A4 GEMMs) FP4 keeps the catalog fallback.
  EXPECT_GT(std::abs(as_mxfp8.Cost(fp4).efficiency - as_nvfp4.Cost(fp4).efficiency), 0.01);
}

}  // namespace
}  // namespace clustersim::models
