#include "strategies/expert_parallel.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

using ::testing::HasSubstr;

models::TransformerConfig Moe() {
  models::TransformerConfig m;
  m.name = "moe";
  m.num_layers = 8;
  m.hidden_size = 1024;
  m.ffn_hidden_size = 2048;
  m.num_attention_heads = 16;
  m.num_query_groups = 16;
  m.seq_length = 1024;
  m.vocab_size = 32000;
  m.num_experts = 8;
  m.moe_top_k = 2;
  return m;
}

// Validates through the full parallel-config path on `world` GPUs.
absl::Status Check(const models::TransformerConfig& m, ParallelConfig p, int world) {
  if (p.global_batch_size == 1) p.global_batch_size = world;
  return ValidateParallelConfig(m, world, &p);
}

TEST(ExpertParallelTest, AcceptsMegatronLayouts) {
  ParallelConfig p;
  p.tensor_parallel = 2;
  p.sequence_parallel = true;
  p.pipeline_parallel = 2;
  p.expert_parallel = 4;
  EXPECT_TRUE(Check(Moe(), p, 16).ok()) << Check(Moe(), p, 16);
  p.expert_parallel = 1;  // experts replicated: still a MoE step
  EXPECT_TRUE(Check(Moe(), p, 16).ok());
}

TEST(ExpertParallelTest, ErrorsNameTheFieldAndAFix) {
  ParallelConfig p;
  p.expert_parallel = 3;
  absl::Status s = Check(Moe(), p, 24);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("parallelism.expert_model_parallel_size=3 does not divide "
                                     "model.num_experts=8; try 1, 2, 4, 8"));
  p.expert_parallel = 8;  // divides the experts, not dp = 4
  s = Check(Moe(), p, 4);
  EXPECT_THAT(s.message(),
              HasSubstr("does not divide data_parallel x context_parallel = 4 x 1 = 4"));
  EXPECT_THAT(s.message(), HasSubstr("try 1, 2, 4"));
  models::TransformerConfig dense = Moe();
  dense.num_experts = 0;
  dense.moe_top_k = 0;
  p.expert_parallel = 2;
  EXPECT_THAT(Check(dense, p, 4).message(),
              HasSubstr("needs a mixture-of-experts model, but model.num_experts is 0"));
  models::TransformerConfig bad_k = Moe();
  bad_k.moe_top_k = 9;
  EXPECT_THAT(Check(bad_k, p, 4).message(), HasSubstr("model.moe_top_k=9 must be in [1, "));
}

TEST(ExpertParallelTest, TensorParallelMoeNeedsSequenceParallel) {
  for (int ep : {1, 2}) {
    ParallelConfig p;
    p.tensor_parallel = 2;
    p.expert_parallel = ep;
    absl::Status s = Check(Moe(), p, 8);
    EXPECT_THAT(s.message(), HasSubstr("needs parallelism.sequence_parallel=true")) << ep;
    p.sequence_parallel = true;
    EXPECT_TRUE(Check(Moe(), p, 8).ok()) << ep;
  }
}

TEST(ExpertParallelTest, FoldingLetsEpSpanTensorRanks) {
  ParallelConfig p;
  p.tensor_parallel = 2;
  p.sequence_parallel = true;
  p.expert_parallel = 8;  // dp = 4 on 8 GPUs
  EXPECT_THAT(Check(Moe(), p, 8).message(),
              HasSubstr("does not divide data_parallel x context_parallel = 4 x 1 = 4"));
  p.expert_tensor_parallel = 1;
  EXPECT_TRUE(Check(Moe(), p, 8).ok()) << Check(Moe(), p, 8);
  EXPECT_THAT(Check(Moe(), p, 4).message(),
              HasSubstr("does not divide tensor x data x context parallel = 2 x 2 x 1 = 4"));
  p.tensor_parallel = 4;
  p.expert_tensor_parallel = 2;  // neither 1 nor tp
  p.expert_parallel = 2;
  EXPECT_THAT(Check(Moe(), p, 8).message(),
              HasSubstr("expert_tensor_parallel_size=2 must be 1 or tensor_model_parallel_size=4"));
}

TEST(ExpertParallelTest, ZeroThreeWorksOnMoeAndWithPipelines) {
  ParallelConfig p;
  p.zero_stage = 3;
  p.expert_parallel = 2;
  EXPECT_TRUE(Check(Moe(), p, 4).ok());
  models::TransformerConfig dense = Moe();
  dense.num_experts = 0;
  dense.moe_top_k = 0;
  p.expert_parallel = 1;
  p.pipeline_parallel = 2;
  EXPECT_TRUE(Check(dense, p, 8).ok());
}

}  // namespace
}  // namespace clustersim::strategies
