// Serving costs of fp8-mixed weights (Meta's Llama 3 FP8 checkpoints,
// models/quantization.h): attention projections and the first and last
// layers' FFN GEMMs read 16-bit weights and run in BF16, the inner layers'
// FFN GEMMs read 8-bit weights and run in FP8.
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/calibration.h"
#include "models/gpu_catalog.h"
#include "strategies/serving_cost_testing.h"
#include "strategies/serving_iteration.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"

namespace clustersim::strategies {
namespace {

using ::testing::HasSubstr;

class ServingFp8MixedTest : public testing::DgxH100Test {
 protected:
  absl::StatusOr<ServingCostModel> Create(models::WeightFormat f,
                                          std::string_view preset = "llama3-8b") {
    ServingModelSpec spec;
    spec.replica.model = *models::ModelCatalog::Default().Find(preset);
    spec.replica.weight_format = f;
    spec.gpus = {0};
    return ServingCostModel::Create(spec, *kernels_, *network_);
  }

  static IterationTotals Decode(int64_t seqs, int64_t context) {
    std::vector<SequenceWork> w(seqs, {.new_tokens = 1, .context = context, .decode = true});
    return Summarise(w);
  }

  static const models::Op& Find(const std::vector<models::Op>& ops, std::string_view name) {
    for (const models::Op& op : ops) {
      if (op.name == name) return op;
    }
    ADD_FAILURE() << "no op " << name;
    return ops.front();
  }
};

// A batch-1 decode step of Llama 3 8B (h 4096, 32 heads, 8 KV heads of 128,
// f 14336): the attention projections read 2 B per weight, the inner FFN
// 1 B per weight plus a 4 B scale per output row of k inputs.
TEST_F(ServingFp8MixedTest, DecodeReadsAttentionAt16BitAndInnerFfnAt8Bit) {
  absl::StatusOr<ServingCostModel> m = Create(models::WeightFormat::kFp8Mixed);
  ASSERT_TRUE(m.ok()) << m.status();
  const int64_t h = 4096, qkv = (32 + 2 * 8) * 128, f = 14336;
  const std::vector<models::Op> inner = m->LayerOps(Decode(1, 512));
  const models::Op& q = Find(inner, "qkv_gemm");
  EXPECT_EQ(q.dtype, models::Dtype::kBf16);
  EXPECT_EQ(q.bytes.count(), h * 2 + qkv * 2 + h * qkv * 2);
  const models::Op& o = Find(inner, "o_proj_gemm");
  EXPECT_EQ(o.dtype, models::Dtype::kBf16);
  EXPECT_EQ(o.bytes.count(), h * 2 + h * 2 + h * h * 2);
  const models::Op& up = Find(inner, "gate_up_gemm");
  EXPECT_EQ(up.dtype, models::Dtype::kFp8);
  EXPECT_NEAR(up.bytes.count(), h * 2 + 2 * f * 2 + h * 2 * f + 2 * f * 4, 1);
  const models::Op& down = Find(inner, "down_gemm");
  EXPECT_EQ(down.dtype, models::Dtype::kFp8);
  // The weight's scales: one per output row (h) whatever k; BitsPerWeight
  // counts them as 32/k per weight with k = f here.
  EXPECT_NEAR(down.bytes.count(), f * 2 + h * 2 + f * h + h * 4, 1);
  // The first and last layers' FFN: 16-bit.
  const std::vector<models::Op> ends =
      m->LayerOps(Decode(1, 512), /*moe=*/false, /*ffn_16bit=*/true);
  EXPECT_EQ(Find(ends, "gate_up_gemm").dtype, models::Dtype::kBf16);
  EXPECT_EQ(Find(ends, "gate_up_gemm").bytes.count(), h * 2 + 2 * f * 2 + h * 2 * f * 2);
  EXPECT_EQ(Find(ends, "down_gemm").bytes.count(), f * 2 + h * 2 + f * h * 2);
  // Plain fp8 reads every projection at 1 B per weight.
  absl::StatusOr<ServingCostModel> fp8 = Create(models::WeightFormat::kFp8);
  ASSERT_TRUE(fp8.ok());
  const std::vector<models::Op> fp8_ops = fp8->LayerOps(Decode(1, 512));
  const models::Op& q8 = Find(fp8_ops, "qkv_gemm");
  EXPECT_EQ(q8.dtype, models::Dtype::kFp8);
  EXPECT_EQ(q8.bytes.count(), h * 2 + qkv * 2 + h * qkv);
}

// Decode is bound by the weights it reads: fp8-mixed sits between fp8 and
// bf16 (of Llama 3 8B's 6.98e9 layer weights, 1.34e9 attention and 2 x 176M
// end-layer FFN stay 16-bit).
TEST_F(ServingFp8MixedTest, DecodeTimeSitsBetweenFp8AndBf16) {
  auto decode = [&](models::WeightFormat f) {
    absl::StatusOr<ServingCostModel> m = Create(f);
    EXPECT_TRUE(m.ok()) << m.status();
    return m->Cost(Decode(1, 1024)).time.ToSeconds();
  };
  const double bf16 = decode(models::WeightFormat::kBf16);
  const double fp8 = decode(models::WeightFormat::kFp8);
  const double mixed = decode(models::WeightFormat::kFp8Mixed);
  EXPECT_LT(fp8, mixed);
  EXPECT_LT(mixed, bf16);
}

TEST_F(ServingFp8MixedTest, RefusesMoeModelsAndGpusWithoutFp8) {
  absl::StatusOr<ServingCostModel> moe = Create(models::WeightFormat::kFp8Mixed, "mixtral-8x7b");
  ASSERT_FALSE(moe.ok());
  EXPECT_THAT(moe.status().message(), HasSubstr("inference.weight_dtype=fp8-mixed"));
  EXPECT_THAT(moe.status().message(), HasSubstr("mixture-of-experts"));
  const models::GpuSpec* a100 = *models::GpuCatalog::Default().Find("a100-sxm4-80gb");
  models::KernelModel kernels(*a100);
  ServingModelSpec spec;
  spec.replica.model = *models::ModelCatalog::Default().Find("llama3-8b");
  spec.replica.weight_format = models::WeightFormat::kFp8Mixed;
  spec.gpus = {0};
  absl::StatusOr<ServingCostModel> a = ServingCostModel::Create(spec, kernels, *network_);
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("inference.weight_dtype=fp8-mixed"));
}

}  // namespace
}  // namespace clustersim::strategies
