// Tile-level attention cost: the dense head-dim-128 kernel unchanged, cuDNN's
// measured GPT-OSS kernel times reproduced, and the catalog's entries.
#include "models/attention_tiles.h"

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "models/gpu_catalog.h"

namespace clustersim::models {
namespace {

// The GB200 entry's figures (models/data/gpus.textproto).
AttentionTiles Gb200() {
  return AttentionTiles{.fwd_query_tile_overhead = 3.85, .bwd_query_tile_overhead = 5.65,
                        .fwd_head_dim64_tile = 0.89, .fwd_head_dim64_query_tile = 0.95,
                        .bwd_head_dim64_tile = 0.79, .bwd_head_dim64_query_tile = 0.48,
                        .source = "test"};
}

TEST(AttentionTilesTest, DenseHeadDim128IsThePlainTileCount) {
  for (bool backward : {false, true}) {
    for (int64_t s : {2048, 4096, 8192, 16384}) {
      const double n = static_cast<double>(s / 128);
      EXPECT_NEAR(AttentionWorkFraction(Gb200(), backward, 128, s, 0, 128, 0), (n + 1) / (2 * n),
                  1e-12);
      EXPECT_NEAR(AttentionWorkFraction(Gb200(), backward, 256, s, 0, 128, 0), (n + 1) / (2 * n),
                  1e-12);
    }
  }
}

// cuDNN 9.22 on GB200 (cudnn-frontend results at fb682ce), 4096 tokens, batch
// 2: the dense head-dim-128 forward (64 heads) takes 0.391 ms, GPT-OSS's
// head-dim-64 window-128 forward (128 heads) 0.210 ms; backward 1.198 and
// 0.465 ms. Time ∝ heads x head dim x work fraction.
TEST(AttentionTilesTest, ReproducesCudnnGptOssKernel) {
  const double dense = 33.0 / 64;  // 4096 tokens, 32 query tiles
  const double fwd = 128.0 * 64 * AttentionWorkFraction(Gb200(), false, 64, 4096, 128, 128, 1) /
                     (64.0 * 128 * dense);
  EXPECT_NEAR(fwd, 0.210 / 0.391, 0.03);
  const double bwd = 128.0 * 64 * AttentionWorkFraction(Gb200(), true, 64, 4096, 128, 128, 1) /
                     (64.0 * 128 * dense);
  EXPECT_NEAR(bwd, 0.465 / 1.198, 0.03);
}

TEST(AttentionTilesTest, WindowShareAveragesTheLayers) {
  const double full = AttentionWorkFraction(Gb200(), false, 64, 4096, 128, 128, 0);
  const double windowed = AttentionWorkFraction(Gb200(), false, 64, 4096, 128, 128, 1);
  EXPECT_LT(windowed, full);
  EXPECT_NEAR(AttentionWorkFraction(Gb200(), false, 64, 4096, 128, 128, 0.5),
              (full + windowed) / 2, 1e-12);
}

TEST(AttentionTilesTest, HeadDimBetween64And128Interpolates) {
  const double at64 = AttentionWorkFraction(Gb200(), false, 64, 4096, 0, 128, 0);
  const double at96 = AttentionWorkFraction(Gb200(), false, 96, 4096, 0, 128, 0);
  const double at128 = AttentionWorkFraction(Gb200(), false, 128, 4096, 0, 128, 0);
  EXPECT_GT(at64, at96);
  EXPECT_GT(at96, at128);
  EXPECT_DOUBLE_EQ(AttentionWorkFraction(Gb200(), false, 32, 4096, 0, 128, 0), at64);
}

TEST(AttentionTilesTest, CatalogCarriesHopperAndBlackwell) {
  for (const char* name : {"h100-sxm5-80gb", "h200-sxm-141gb", "b200-sxm-180gb", "gb200-186gb"}) {
    absl::StatusOr<const GpuSpec*> gpu = GpuCatalog::Default().Find(name);
    ASSERT_TRUE(gpu.ok()) << name;
    EXPECT_TRUE((*gpu)->attention_tiles.known()) << name;
    EXPECT_FALSE((*gpu)->attention_tiles.source.empty()) << name;
  }
  absl::StatusOr<const GpuSpec*> a100 = GpuCatalog::Default().Find("a100-sxm4-80gb");
  ASSERT_TRUE(a100.ok());
  EXPECT_FALSE((*a100)->attention_tiles.known());
}

}  // namespace
}  // namespace clustersim::models
