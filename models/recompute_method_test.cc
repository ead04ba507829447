// Full recompute by method (ShardSpec::recompute_method, recompute_num_layers):
// the activations EstimateMemory counts, which equal no recompute and full
// recompute at the ends, and the replay FLOPs LayerReplayFlops counts.
#include "gtest/gtest.h"
#include "models/flops.h"
#include "models/memory_model.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Preset;

// Llama 3 8B (32 layers) on 4 stages of 8 layers, tp 2 with sequence
// parallelism, 8 micro-batches; the first stage.
MemoryInputs Inputs(Recompute r, RecomputeMethod method, int layers) {
  MemoryInputs in;
  in.model = Preset("llama3-8b");
  in.shard = {.tensor_parallel = 2, .sequence_parallel = true, .micro_batch_size = 1,
              .recompute = r};
  in.shard.recompute_method = method;
  in.shard.recompute_num_layers = layers;
  in.pipeline_parallel = 4;
  in.num_microbatches = 8;
  return in;
}

double Activations(const MemoryInputs& in) {
  EXPECT_TRUE(ValidateMemoryInputs(in).ok());
  return static_cast<double>(EstimateMemory(in).activations.count());
}

TEST(RecomputeMethodTest, BlockMemoryRunsFromNoneToFull) {
  const double none = Activations(Inputs(Recompute::kNone, RecomputeMethod::kUniform, 1));
  const double full = Activations(Inputs(Recompute::kFull, RecomputeMethod::kUniform, 1));
  // No layer replayed keeps what no recompute keeps; every layer, full's.
  EXPECT_EQ(Activations(Inputs(Recompute::kFull, RecomputeMethod::kBlock, 0)), none);
  EXPECT_EQ(Activations(Inputs(Recompute::kFull, RecomputeMethod::kBlock, 8)), full);
  EXPECT_EQ(Activations(Inputs(Recompute::kFull, RecomputeMethod::kBlock, 20)), full);
  // Between, linear in the replayed layers: 3 of the stage's 8.
  const double block3 = Activations(Inputs(Recompute::kFull, RecomputeMethod::kBlock, 3));
  EXPECT_NEAR(block3, none + (full - none) * 3.0 / 8.0, 8.0);
  // Two chunks of 4 layers per stage (virtual pipeline 2): the first 3 of each.
  MemoryInputs vp = Inputs(Recompute::kFull, RecomputeMethod::kBlock, 3);
  vp.virtual_pipeline = 2;
  MemoryInputs vp_none = vp, vp_full = vp;
  vp_none.shard.recompute = Recompute::kNone;
  vp_full.shard.recompute_num_layers = 4;
  const double a = Activations(vp_none), b = Activations(vp_full);
  EXPECT_NEAR(Activations(vp), a + (b - a) * 6.0 / 8.0, 8.0);
}

TEST(RecomputeMethodTest, UniformGroupsKeepOneCheckpointAndTheirReplay) {
  // One layer's bytes per micro-batch: the first stage with 7 layers instead
  // of 8 (28 in the model), 4 micro-batches in flight.
  auto per_layer = [](Recompute r) {
    MemoryInputs in = Inputs(r, RecomputeMethod::kUniform, 1), fewer = in;
    fewer.model.num_layers = 28;
    return (Activations(in) - Activations(fewer)) / 4.0;
  };
  const double checkpoint = per_layer(Recompute::kFull), whole = per_layer(Recompute::kNone);
  const double full = Activations(Inputs(Recompute::kFull, RecomputeMethod::kUniform, 1));
  // 8 layers in groups of 4: 2 checkpoints per micro-batch instead of 8, and
  // while a group replays, its other 3 layers whole for one micro-batch.
  EXPECT_NEAR(Activations(Inputs(Recompute::kFull, RecomputeMethod::kUniform, 4)),
              full - 6.0 * 4.0 * checkpoint + 3.0 * whole, 16.0);
  // Groups of 3: 3 checkpoints (the last group has 2 layers), a window of 3.
  EXPECT_NEAR(Activations(Inputs(Recompute::kFull, RecomputeMethod::kUniform, 3)),
              full - 5.0 * 4.0 * checkpoint + 2.0 * whole, 16.0);
  // Groups longer than the stage replay the stage at once.
  EXPECT_EQ(Activations(Inputs(Recompute::kFull, RecomputeMethod::kUniform, 8)),
            Activations(Inputs(Recompute::kFull, RecomputeMethod::kUniform, 12)));
}

TEST(RecomputeMethodTest, LayerReplayFlopsSumToFullRecompute) {
  // DeepSeek-V3's 3 dense-first layers do the same MLP work as its MoE ones;
  // with half the dense MLP they do less.
  TransformerConfig narrow_dense = Preset("deepseek-v3-671b");
  narrow_dense.ffn_hidden_size /= 2;
  for (const TransformerConfig& c : {Preset("llama3-8b"), narrow_dense}) {
    double sum = 0;
    for (int l = 0; l < c.num_layers; ++l) sum += LayerReplayFlops(c, 16, l);
    const double replay =
        MegatronHardwareFlops(c, 16, Recompute::kFull) - MegatronModelFlops(c, 16);
    EXPECT_NEAR(sum / replay, 1.0, 1e-12) << c.name;
  }
  EXPECT_LT(LayerReplayFlops(narrow_dense, 1, 2), LayerReplayFlops(narrow_dense, 1, 3));
}

}  // namespace
}  // namespace clustersim::models
