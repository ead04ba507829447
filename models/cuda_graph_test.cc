// CUDA graph scopes (models/cuda_graph.h): parsing, and which ops of a layer
// each scope captures.
#include "models/cuda_graph.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/workload.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Each named op of the layer's forward or backward list carries its scope.
void ExpectScopes(const Workload& w, std::vector<std::pair<std::string, GraphScope>> expected) {
  for (const auto& [name, scope] : expected) {
    const Op* found = nullptr;
    for (const std::vector<Op>* list : {&w.layer_forward, &w.layer_backward}) {
      for (const Op& op : *list) {
        if (op.name == name) found = &op;
      }
    }
    ASSERT_NE(found, nullptr) << "no op " << name;
    EXPECT_EQ(found->graph_scope, scope) << name;
  }
}

TEST(ParseCudaGraphScopesTest, ReadsMegatronNames) {
  absl::StatusOr<CudaGraphScopes> s =
      ParseCudaGraphScopes({"attn", "moe_router", "moe_preprocess"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->attn && s->moe_router && s->moe_preprocess);
  EXPECT_FALSE(s->CapturesExperts());
  EXPECT_THAT(s->Names(), ElementsAre("attn", "moe_router", "moe_preprocess"));
  EXPECT_FALSE(ParseCudaGraphScopes({})->any());
}

TEST(ParseCudaGraphScopesTest, RefusesWhatMegatronRefuses) {
  auto error = [](std::vector<std::string> names) {
    absl::StatusOr<CudaGraphScopes> s = ParseCudaGraphScopes(names);
    EXPECT_FALSE(s.ok());
    return std::string(s.status().message());
  };
  EXPECT_THAT(error({"mamba2"}), HasSubstr("training.cuda_graph_scope: \"mamba2\""));
  EXPECT_THAT(error({"attn", "attn"}), HasSubstr("twice"));
  EXPECT_THAT(error({"full", "attn"}), HasSubstr("no other scope"));
  EXPECT_THAT(error({"moe_preprocess"}), HasSubstr("needs \"moe_router\""));
  EXPECT_THAT(error({"moe", "moe_router"}), HasSubstr("list one"));
}

TEST(TagLayerScopesTest, DenseLayerSplitsIntoAttentionAndMlp) {
  absl::StatusOr<TransformerConfig> c = ModelCatalog::Default().Find("llama3-8b");
  ASSERT_TRUE(c.ok()) << c.status();
  const Workload w = testing::Build(*c, ShardSpec{});
  ExpectScopes(w, {{"layernorm1", GraphScope::kAttn},
                   {"dropout_residual1", GraphScope::kAttn},
                   {"fc1_gemm", GraphScope::kMlp},
                   {"dropout_residual2", GraphScope::kMlp},
                   {"fc1_gemm_dgrad", GraphScope::kMlp},
                   {"qkv_gemm_wgrad", GraphScope::kAttn},
                   {"layernorm1_bwd", GraphScope::kAttn}});
  for (const Op& op : w.head_forward) EXPECT_EQ(op.graph_scope, GraphScope::kNone) << op.name;
}

TEST(TagLayerScopesTest, MoeLayerSplitsRouterPreprocessAndExperts) {
  absl::StatusOr<TransformerConfig> c = ModelCatalog::Default().Find("qwen3-30b-a3b");
  ASSERT_TRUE(c.ok()) << c.status();
  ShardSpec s;
  s.expert_parallel = 8;
  const Workload w = testing::Build(*c, s);
  ExpectScopes(w, {{"layernorm2", GraphScope::kMoeRouter},
                   {"router_gemm", GraphScope::kMoeRouter},
                   {"moe_permute", GraphScope::kMoePreprocess},
                   {"ep_alltoall_dispatch", GraphScope::kMoe},
                   {"expert_fc1_gemm", GraphScope::kMoe},
                   {"router_gemm_wgrad", GraphScope::kMoeRouter},
                   {"moe_permute_bwd", GraphScope::kMoePreprocess},
                   {"expert_fc2_gemm_dgrad", GraphScope::kMoe}});

  const CudaGraphScopes router = *ParseCudaGraphScopes({"moe_router", "moe_preprocess"});
  EXPECT_TRUE(router.Captures(GraphScope::kMoePreprocess));
  EXPECT_FALSE(router.Captures(GraphScope::kMoe));
  EXPECT_FALSE(router.Captures(GraphScope::kAttn));
  const CudaGraphScopes full = *ParseCudaGraphScopes({"full"});
  EXPECT_TRUE(full.Captures(GraphScope::kMoe) && full.Captures(GraphScope::kLayer));
  EXPECT_FALSE(full.Captures(GraphScope::kNone));
  EXPECT_TRUE(ParseCudaGraphScopes({"full_iteration"})->Captures(GraphScope::kNone));
}

TEST(TagLayerScopesTest, PaddedDispatchHasNoHostSync) {
  absl::StatusOr<TransformerConfig> c = ModelCatalog::Default().Find("qwen3-30b-a3b");
  ASSERT_TRUE(c.ok()) << c.status();
  ShardSpec s;
  s.expert_parallel = 8;
  auto syncs = [](const std::vector<Op>& ops) {
    int n = 0;
    for (const Op& op : ops) n += op.host_sync_before ? 1 : 0;
    return n;
  };
  EXPECT_EQ(syncs(testing::Build(*c, s).layer_forward), 1);
  s.moe_pad_to_capacity = true;
  EXPECT_EQ(syncs(testing::Build(*c, s).layer_forward), 0);
}

}  // namespace
}  // namespace clustersim::models
