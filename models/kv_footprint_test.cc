#include "models/kv_footprint.h"

#include "gtest/gtest.h"
#include "models/transformer_config.h"

namespace clustersim::models {
namespace {

TransformerConfig GptOss20b() { return *ModelCatalog::Default().Find("gpt-oss-20b"); }

TEST(KvFootprintTest, WithoutWindowsAUnitIsABlock) {
  TransformerConfig m = GptOss20b();
  m.sliding_window = 0;
  m.sliding_window_layers = 0;
  const KvFootprint f = KvFootprintOf(m, 16, sim::Bytes(49152), sim::Bytes(0));
  EXPECT_FALSE(f.windowed());
  EXPECT_EQ(f.UnitsPerBlock(), 1);
  EXPECT_EQ(f.Units(8192, 1), 512);
  EXPECT_EQ(f.Units(8193, 8193), 513);
  EXPECT_EQ(f.Blocks(513), 513);
  EXPECT_EQ(f.PrefixTokenUnits(512), 512);
}

// gpt-oss-20b: 12 of its 24 layers attend to 128 tokens. A decode step at 8k
// tokens keeps every block of the full layers and the 9 blocks the window
// reaches of the windowed ones; a prompt computed whole holds every block
// until its window moves on.
TEST(KvFootprintTest, WindowedLayersKeepTheBlocksTheWindowReaches) {
  const TransformerConfig m = GptOss20b();
  ASSERT_EQ(m.sliding_window, 128);
  ASSERT_EQ(m.sliding_window_layers * 2, m.num_attention_layers());
  const KvFootprint f = KvFootprintOf(m, 16, sim::Bytes(24 * 2048), sim::Bytes(0));
  ASSERT_TRUE(f.windowed());
  EXPECT_EQ(f.full_weight, 12 * 2048);
  EXPECT_EQ(f.window_weight, 12 * 2048);
  EXPECT_EQ(f.Units(8192, 1), 512 * f.full_weight + 9 * f.window_weight);
  EXPECT_EQ(f.Units(8192, 8192), 512 * f.UnitsPerBlock());
  EXPECT_EQ(f.Units(64, 1), 4 * f.UnitsPerBlock());  // shorter than the window
  // A decode step at 8k holds a little over half the blocks it would hold
  // without the window.
  EXPECT_EQ(f.Blocks(f.Units(8192, 1)), 261);
}

// A cached 512-token prefix keeps all 512 tokens of the full layers and the
// 8 blocks (ceil(127 / 16), 128 tokens) before its end of the windowed ones;
// a prefix shorter than that tail keeps every token of both.
TEST(KvFootprintTest, CachedPrefixKeepsTheWindowedLayersTail) {
  const KvFootprint f = KvFootprintOf(GptOss20b(), 16, sim::Bytes(24 * 2048), sim::Bytes(0));
  EXPECT_EQ(f.PrefixTokenUnits(512), 512 * f.full_weight + 128 * f.window_weight);
  EXPECT_EQ(f.PrefixTokenUnits(100), 100 * f.UnitsPerBlock());
}

// A drafter's KV (its layers attend to everything) counts with the full layers.
TEST(KvFootprintTest, DrafterBytesCountAsFullLayers) {
  const KvFootprint f = KvFootprintOf(GptOss20b(), 16, sim::Bytes(24 * 2048 + 4096),
                                      sim::Bytes(4096));
  EXPECT_EQ(f.window_weight, 12 * 2048);
  EXPECT_EQ(f.full_weight, 12 * 2048 + 4096);
}

}  // namespace
}  // namespace clustersim::models
