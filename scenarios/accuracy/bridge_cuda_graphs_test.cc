// Megatron-Bridge presets' CUDA graphs and token drop (bridge_cuda_graphs.h).
#include "scenarios/accuracy/bridge_cuda_graphs.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::scenarios {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(BridgeCudaGraphsTest, Release2509CapturesWholeLayersWherePresetsSayAndDropsTokens) {
  BridgeGraphs g =
      BridgeCudaGraphs("25.09", "qwen3-30b-a3b", "b200-sxm-180gb", "fp8", "current", "none");
  EXPECT_THAT(g.scopes, ElementsAre("full"));
  EXPECT_TRUE(g.pad_to_capacity);
  g = BridgeCudaGraphs("25.09", "qwen3-30b-a3b", "h100-sxm5-80gb", "fp8", "current", "none");
  EXPECT_THAT(g.scopes, IsEmpty());
  EXPECT_TRUE(g.pad_to_capacity);
  g = BridgeCudaGraphs("25.09", "deepseek-v3-671b", "h100-sxm5-80gb", "fp8", "current", "none");
  EXPECT_FALSE(g.pad_to_capacity);
  EXPECT_THAT(
      BridgeCudaGraphs("25.09", "llama3-8b", "gb200-186gb", "fp8", "current", "none").scopes,
      IsEmpty());
  EXPECT_THAT(
      BridgeCudaGraphs("25.09", "llama3-8b", "gb200-186gb", "fp8", "mxfp8", "none").scopes,
      ElementsAre("full"));
  // Megatron-Core 0.14 refuses layer graphs with recompute.
  EXPECT_THAT(
      BridgeCudaGraphs("25.09", "llama3-8b", "b200-sxm-180gb", "bf16", "", "full").scopes,
      IsEmpty());
}

TEST(BridgeCudaGraphsTest, Release2511CapturesScopesDropless) {
  BridgeGraphs g =
      BridgeCudaGraphs("25.11", "qwen3-30b-a3b", "gb200-186gb", "fp8", "current", "none");
  EXPECT_THAT(g.scopes, ElementsAre("attn", "moe_router", "moe_preprocess"));
  EXPECT_FALSE(g.pad_to_capacity);
  EXPECT_THAT(
      BridgeCudaGraphs("25.11", "qwen3-30b-a3b", "b200-sxm-180gb", "fp8", "current", "none")
          .scopes,
      ElementsAre("moe_router", "moe_preprocess"));
  EXPECT_THAT(
      BridgeCudaGraphs("25.11", "qwen3-30b-a3b", "h100-sxm5-80gb", "fp8", "current", "none")
          .scopes,
      IsEmpty());
  EXPECT_THAT(
      BridgeCudaGraphs("25.11", "llama3-8b", "b200-sxm-180gb", "fp8", "current", "none").scopes,
      ElementsAre("full_iteration"));
  EXPECT_THAT(BridgeCudaGraphs("26.04", "qwen3-30b-a3b", "b200-sxm-180gb", "fp8", "mxfp8", "none")
                  .scopes,
              IsEmpty());
}

}  // namespace
}  // namespace clustersim::scenarios
