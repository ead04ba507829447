// Sliding-window attention closed forms against brute-force counts.
#include "models/attention_window.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "models/gpu_catalog.h"
#include "models/kernel_model.h"
#include "models/workload.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

double BrutePairs(int64_t s, int64_t w) {
  double pairs = 0;
  for (int64_t i = 0; i < s; ++i) {
    for (int64_t j = 0; j <= i; ++j) pairs += (w <= 0 || i - j < w) ? 1 : 0;
  }
  return pairs;
}

double BruteTiles(int64_t s, int64_t w, int64_t block) {
  const int64_t tiles = (s + block - 1) / block;
  double live = 0;
  for (int64_t qi = 0; qi < tiles; ++qi) {
    for (int64_t ki = 0; ki < tiles; ++ki) {
      bool any = false;
      for (int64_t i = qi * block; i < std::min(s, (qi + 1) * block) && !any; ++i) {
        for (int64_t j = ki * block; j < std::min(s, (ki + 1) * block) && !any; ++j) {
          any = j <= i && (w <= 0 || i - j < w);
        }
      }
      live += any ? 1 : 0;
    }
  }
  return live / static_cast<double>(tiles * tiles);
}

TEST(AttentionWindowTest, PairsMatchBruteForce) {
  for (int64_t s : {1, 2, 7, 64, 129, 300}) {
    for (int64_t w : {0, 1, 2, 5, 64, 128, 299, 300, 1000}) {
      EXPECT_DOUBLE_EQ(CausalPairs(s, w), BrutePairs(s, w)) << s << " " << w;
    }
  }
  EXPECT_DOUBLE_EQ(CausalPairs(4096, 128), 128.0 * 129 / 2 + 3968.0 * 128);
}

TEST(AttentionWindowTest, PairsAfterACachedPrefix) {
  // Decode: one query after 1000 cached tokens sees 128 keys in a window.
  EXPECT_DOUBLE_EQ(CausalPairsAfter(1000, 1, 128), 128);
  EXPECT_DOUBLE_EQ(CausalPairsAfter(1000, 1, 0), 1001);
  EXPECT_DOUBLE_EQ(CausalPairsAfter(0, 300, 64), BrutePairs(300, 64));
  EXPECT_EQ(WindowedKvTokens(1000, 1, 128), 128);
  EXPECT_EQ(WindowedKvTokens(1000, 4, 128), 131);
  EXPECT_EQ(WindowedKvTokens(10, 1, 128), 11);
  EXPECT_EQ(WindowedKvTokens(1000, 1, 0), 1001);
}

TEST(AttentionWindowTest, TilesMatchBruteForce) {
  for (int64_t s : {1, 100, 128, 129, 640, 1000}) {
    for (int64_t w : {0, 1, 64, 128, 129, 256, 2000}) {
      EXPECT_NEAR(CausalTileFraction(s, w, 128), BruteTiles(s, w, 128), 1e-12) << s << " " << w;
    }
  }
  // No window: FlashAttention's (n + 1) / (2n) causal tiles.
  EXPECT_DOUBLE_EQ(CausalTileFraction(4096, 0, 128), 33.0 / 64);
  // gpt-oss's 128-token window at 4096 tokens: the diagonal and one tile per
  // row.
  EXPECT_DOUBLE_EQ(CausalTileFraction(4096, 128, 128), 63.0 / 1024);
}

// A gpt-oss-120b training step: half its layers attend within 128 tokens, so
// the attention kernels (forward and backward) cost less than with the
// window off, by the tiles they skip (each query tile keeps its fixed time); the
// model FLOPs stay unmasked.
TEST(AttentionWindowTest, GptOssTrainingAttentionIsCheaper) {
  absl::StatusOr<const GpuSpec*> gpu = GpuCatalog::Default().Find("h100-sxm5-80gb");
  ASSERT_TRUE(gpu.ok());
  const KernelModel kernels(**gpu);
  TransformerConfig windowed = testing::Preset("gpt-oss-120b");
  ASSERT_EQ(windowed.sliding_window, 128);
  ASSERT_EQ(windowed.sliding_window_layers, 18);
  TransformerConfig full = windowed;
  full.sliding_window = 0;
  full.sliding_window_layers = 0;
  const ShardSpec shard{.tensor_parallel = 8, .sequence_parallel = true, .micro_batch_size = 1};
  const Workload w = testing::Build(windowed, shard), f = testing::Build(full, shard);
  for (const char* name : {"attention_fwd", "attention_bwd"}) {
    auto find = [name](const std::vector<Op>& ops) {
      return *std::find_if(ops.begin(), ops.end(), [name](const Op& o) { return o.name == name; });
    };
    const std::vector<Op>& wo = std::string(name) == "attention_fwd" ? w.layer_forward
                                                                        : w.layer_backward;
    const std::vector<Op>& fo = std::string(name) == "attention_fwd" ? f.layer_forward
                                                                        : f.layer_backward;
    const Op a = find(wo), b = find(fo);
    EXPECT_EQ(a.flops.count(), b.flops.count()) << name;
    EXPECT_EQ(a.window_share, 0.5) << name;
    const double ratio = kernels.Cost(a).time.ToSeconds() / kernels.Cost(b).time.ToSeconds();
    // Work: half the layers at 33/64 of the tiles, half at 63/1024, each query
    // tile's fixed time kept (models/attention_tiles.h): about two thirds.
    EXPECT_LT(ratio, 0.7) << name;
    EXPECT_GT(ratio, 0.6) << name;
  }
}

}  // namespace
}  // namespace clustersim::models
