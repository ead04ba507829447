// Megatron-Core's implementation of gpt-oss's layer variants in the workload
// (models/workload_architecture.cc, models/workload_ops.h): the clamped
// quick-GELU GLU of the grouped experts (three eager clamp/concatenate
// kernels and a synchronising host-to-device copy), the eager fc2 expert
// bias and the unfused YaRN RoPE; none of them outside Megatron-Core.
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/workload.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Build;
using testing::Get;
using testing::Names;
using ::testing::Contains;
using ::testing::Not;

TransformerConfig GptOss(bool megatron_core) {
  absl::StatusOr<TransformerConfig> c = ModelCatalog::Default().Find("gpt-oss-120b");
  EXPECT_TRUE(c.ok()) << c.status();
  c->megatron_core_modules = megatron_core;
  return *c;
}

int IndexOf(const std::vector<Op>& ops, std::string_view name) {
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

TEST(GluVariantWorkloadTest, PresetCarriesTheGptOssVariants) {
  const TransformerConfig c = GptOss(false);
  EXPECT_EQ(c.glu_clamp, 7);
  EXPECT_TRUE(c.quick_gelu_glu);
  EXPECT_EQ(c.yarn_rope_factor, 32);
  EXPECT_FALSE(c.unfused_rope());  // only under Megatron-Core
  EXPECT_TRUE(GptOss(true).unfused_rope());
}

TEST(GluVariantWorkloadTest, MegatronCoreExpertsClampSyncAndAddTheBiasEagerly) {
  // EP 8: 16 local experts, micro-batch 1, 4096 tokens, top-4.
  const Workload w = Build(GptOss(true), {.expert_parallel = 8});
  const std::vector<Op>& f = w.layer_forward;
  const int fc1 = IndexOf(f, "expert_fc1_gemm");
  ASSERT_GE(fc1, 0);
  EXPECT_EQ(IndexOf(f, "expert_glu_clamp"), fc1 + 1);
  EXPECT_EQ(IndexOf(f, "swiglu"), fc1 + 2);
  EXPECT_EQ(IndexOf(f, "expert_fc2_bias"), IndexOf(f, "expert_fc2_gemm") + 1);
  EXPECT_TRUE(Get(f, "swiglu").host_sync_before);
  EXPECT_FALSE(Get(f, "expert_glu_clamp").host_sync_before);
  // 4096 tokens x 4 choices = 16384 rows; each half 2880 wide, 16-bit.
  const int64_t rows = 4096 * 4, half = int64_t{16384} * 2880;
  EXPECT_EQ(Get(f, "expert_glu_clamp").bytes.count(), half * 8 * 2);
  EXPECT_EQ(Get(f, "expert_glu_clamp").kernels, 3);
  EXPECT_EQ(Get(f, "expert_fc2_bias").bytes.count(), rows * 2880 * (4 + (2 + 4 + 4) + 8 + (4 + 2)));
  EXPECT_EQ(Get(f, "expert_fc2_bias").kernels, 2 * 16 + 2);
  // Megatron's unfused RoPE over the 64 query and 8 key heads of dim 64.
  EXPECT_EQ(IndexOf(f, "rope"), IndexOf(f, "qkv_gemm") + 1);
  EXPECT_EQ(Get(f, "rope").bytes.count(), int64_t{4096} * (64 + 8) * 64 * 12 * 2);
  const std::vector<Op>& b = w.layer_backward;
  EXPECT_THAT(Names(b), Contains("expert_glu_clamp_bwd"));
  EXPECT_THAT(Names(b), Contains("expert_fc2_bias_bwd"));
  EXPECT_THAT(Names(b), Contains("rope_bwd"));
  EXPECT_LT(IndexOf(b, "expert_fc2_bias_bwd"), IndexOf(b, "expert_fc2_gemm_dgrad"));
  EXPECT_LT(IndexOf(b, "swiglu_bwd"), IndexOf(b, "expert_glu_clamp_bwd"));
  for (const Op& op : b) EXPECT_FALSE(op.host_sync_before) << op.name;
}

TEST(GluVariantWorkloadTest, MoeActReplayRunsTheClampAndTheSyncAgain) {
  const Workload w = Build(GptOss(true), {.recompute = Recompute::kSelective,
                                          .modules = {.moe_act = true},
                                          .expert_parallel = 8});
  const std::vector<Op>& b = w.layer_backward;
  const int clamp = IndexOf(b, "expert_glu_clamp");
  ASSERT_GE(clamp, 0);
  EXPECT_TRUE(b[clamp].recompute);
  EXPECT_EQ(b[clamp + 1].name, "swiglu");
  EXPECT_TRUE(b[clamp + 1].host_sync_before);
  EXPECT_LT(clamp, IndexOf(b, "expert_fc2_gemm_dgrad"));
}

TEST(GluVariantWorkloadTest, OtherStacksKeepThePlainFusedLayer) {
  const Workload w = Build(GptOss(false), {.expert_parallel = 8});
  for (std::string_view name : {"expert_glu_clamp", "expert_fc2_bias", "rope"}) {
    EXPECT_THAT(Names(w.layer_forward), Not(Contains(std::string(name))));
  }
  // Only the dispatcher's token-count copy after the permute stops the host.
  const std::vector<Op>& f = w.layer_forward;
  for (size_t i = 0; i < f.size(); ++i) {
    EXPECT_EQ(f[i].host_sync_before, i > 0 && f[i - 1].name == "moe_permute") << f[i].name;
  }
}

}  // namespace
}  // namespace clustersim::models
