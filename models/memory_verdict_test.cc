#include "models/memory_verdict.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Preset;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

MemoryVerdict Judge(const MemoryInputs& in, sim::Bytes capacity) {
  EXPECT_TRUE(ValidateMemoryInputs(in).ok()) << ValidateMemoryInputs(in);
  return JudgeMemory(in, EstimateMemory(in), capacity);
}

// Korthikanti et al. 2022, Fig. 1: GPT-3 175B on 80 GB A100s (tp 8, pp 8)
// with Megatron's pre-FlashAttention (unfused) attention does not fit with
// tensor parallelism alone and fits with sequence parallelism + selective
// recompute (the KOR22 rows of published-runs.csv).
TEST(MemoryVerdictTest, Gpt3WithoutRecomputeNeedsLessActivationMemory) {
  MemoryInputs in;
  in.model = Preset("gpt3-175b");
  in.model.attention_backend = AttentionBackend::kUnfused;
  in.shard = {.tensor_parallel = 8};
  in.pipeline_parallel = 8;
  in.virtual_pipeline = 3;
  in.num_microbatches = 64;
  const MemoryVerdict v = Judge(in, sim::GiB(80));
  EXPECT_FALSE(v.fits);
  EXPECT_EQ(v.biggest_term, "activations");
  // FlashAttention alone (tried first) leaves 86 GiB: not enough.
  EXPECT_THAT(v.remedy, StartsWith("enable sequence parallelism and selective recompute"));
  EXPECT_THAT(v.remedy, HasSubstr("of 80.0 GiB"));

  in.shard.sequence_parallel = true;
  in.shard.recompute = Recompute::kSelective;
  const MemoryVerdict ok = Judge(in, sim::GiB(80));
  EXPECT_TRUE(ok.fits);
  EXPECT_EQ(ok.remedy, "");
}

// Llama 3 8B at its 8192-token context on one GPU per replica: the unfused
// s² scores (5·a·s/h = 320 units of s·b·h against ~36 for the rest of a
// layer) dominate; FlashAttention alone brings it under an H200's 141 GiB.
TEST(MemoryVerdictTest, UnfusedLongSequenceSuggestsFlashAttention) {
  MemoryInputs in;
  in.model = Preset("llama3-8b");
  in.model.attention_backend = AttentionBackend::kUnfused;
  in.data_parallel = 8;
  in.distributed_optimizer = true;
  const MemoryVerdict v = Judge(in, sim::GiB(141));
  EXPECT_FALSE(v.fits);
  EXPECT_EQ(v.biggest_term, "activations");
  EXPECT_THAT(v.remedy, StartsWith("use FlashAttention (training.attention=flash; drops "));
  EXPECT_THAT(v.remedy, HasSubstr("GiB of s² attention scores)"));

  in.model.attention_backend = AttentionBackend::kFlash;
  EXPECT_TRUE(Judge(in, sim::GiB(141)).fits);
}

// Optimizer-bound data-parallel training: Megatron's 18 B/param on 8 GPUs of
// 80 GiB for an 8B model (144 GB of states) fits once the 12 B of optimizer
// state are sharded 8 ways (6 + 12/8 B/param).
TEST(MemoryVerdictTest, OptimizerBoundSuggestsDistributedOptimizer) {
  MemoryInputs in;
  in.model = Preset("llama3-8b");
  in.model.seq_length = 2048;
  in.shard.recompute = Recompute::kSelective;
  in.data_parallel = 8;
  const MemoryVerdict v = Judge(in, sim::GiB(80));
  EXPECT_FALSE(v.fits);
  EXPECT_EQ(v.biggest_term, "optimizer");
  EXPECT_THAT(v.remedy, StartsWith("use the distributed optimizer"));
}

// LoRA on Llama 2 70B holds a 16-bit base (~138 GB); QLoRA's 4-bit base
// (~36 GB) fits one 80 GiB GPU with full recompute.
TEST(MemoryVerdictTest, LoraWeightBoundSuggestsQlora) {
  MemoryInputs in;
  in.model = Preset("llama2-70b");
  in.shard.recompute = Recompute::kFull;
  in.finetune.method = FinetuneMethod::kLora;
  const MemoryVerdict v = Judge(in, sim::GiB(80));
  EXPECT_FALSE(v.fits);
  EXPECT_EQ(v.biggest_term, "weights");
  EXPECT_THAT(v.remedy, StartsWith("fine-tune with QLoRA"));
}

// Without data parallelism or a LoRA run, weights are fixed by raising tp:
// GPT-3 175B on 8 stages is ~43 GiB of 16-bit weights per GPU at tp 1.
TEST(MemoryVerdictTest, WeightBoundRaisesTensorParallelism) {
  MemoryInputs in;
  in.model = Preset("gpt3-175b");
  in.shard = {.tensor_parallel = 1, .recompute = Recompute::kFull};
  in.pipeline_parallel = 16;
  in.num_microbatches = 16;
  const MemoryVerdict v = Judge(in, sim::GiB(80));
  EXPECT_FALSE(v.fits);
  EXPECT_THAT(v.remedy, StartsWith("raise tp to "));
}

// Llama 2 70B at an 8,192-token context, tp 4 with sequence parallelism, pp 4
// (20 layers a stage), dp 4 with the distributed optimizer, micro-batch 1:
// 81.4 GiB without recompute on an 80 GiB GPU.
MemoryInputs Llama70bLongContext() {
  MemoryInputs in;
  in.model = Preset("llama2-70b");
  in.model.seq_length = 8192;
  in.shard.tensor_parallel = 4;
  in.shard.sequence_parallel = true;
  in.pipeline_parallel = 4;
  in.data_parallel = 4;
  in.distributed_optimizer = true;
  in.num_microbatches = 16;
  return in;
}

sim::Bytes Peak(const MemoryInputs& in) { return EstimateMemory(in).Total(); }

// Just over: recomputing one layer of each chunk is enough, and is named
// ahead of full recompute with Megatron-Core's flags and the peak it reaches.
TEST(MemoryVerdictTest, SlightlyOverSuggestsBlockRecomputeOfFewLayers) {
  const MemoryInputs in = Llama70bLongContext();
  EXPECT_EQ(SmallestBlockRecompute(in, sim::GiB(80)), 1);
  const MemoryVerdict v = Judge(in, sim::GiB(80));
  EXPECT_FALSE(v.fits);
  EXPECT_EQ(v.biggest_term, "activations");
  EXPECT_EQ(v.remedy,
            "recompute the first 1 layer of each model chunk (--recompute-granularity full "
            "--recompute-method block --recompute-num-layers 1): peak 79.3 GiB of 80.0 GiB");
}

// The smallest N: it fits and N - 1 does not, at every capacity from the
// peak of all but one layer of each chunk to no recompute's; with two
// virtual-pipeline chunks of 10 layers N stays below 10.
TEST(MemoryVerdictTest, BlockRecomputeIsTheSmallestLayerCountThatFits) {
  for (int vp : {1, 2}) {
    MemoryInputs in = Llama70bLongContext();
    in.virtual_pipeline = vp;
    const int chunk = 20 / vp;
    const sim::Bytes all_but_one = Peak(WithBlockRecompute(in, chunk - 1));
    EXPECT_EQ(SmallestBlockRecompute(in, all_but_one), chunk - 1);
    int last = 0;
    for (sim::Bytes capacity = all_but_one; capacity < Peak(in);
         capacity += sim::GiB(1)) {
      const std::optional<int> n = SmallestBlockRecompute(in, capacity);
      ASSERT_TRUE(n.has_value()) << capacity.ToGiB();
      EXPECT_LT(*n, chunk) << capacity.ToGiB();
      EXPECT_LE(Peak(WithBlockRecompute(in, *n)), capacity);
      if (*n > 1) EXPECT_GT(Peak(WithBlockRecompute(in, *n - 1)), capacity);
      if (last > 0) EXPECT_LE(*n, last) << "more memory never needs more layers";
      last = *n;
    }
    EXPECT_GT(last, 0);
  }
}

// When only recomputing every layer fits, full recompute is the remedy and no
// block line is offered; when not even that fits, neither is.
TEST(MemoryVerdictTest, NoBlockRecomputeWhenEveryLayerOrMoreIsNeeded) {
  const MemoryInputs in = Llama70bLongContext();
  const sim::Bytes full = Peak(WithBlockRecompute(in, in.model.num_layers));
  const sim::Bytes just_full = full + sim::MiB(16);
  EXPECT_EQ(SmallestBlockRecompute(in, just_full), std::nullopt);
  EXPECT_THAT(Judge(in, just_full).remedy,
              StartsWith("enable full recompute (--recompute-granularity full): peak"));

  const sim::Bytes below_full = full - sim::MiB(16);
  EXPECT_EQ(SmallestBlockRecompute(in, below_full), std::nullopt);
  const MemoryVerdict v = Judge(in, below_full);
  EXPECT_FALSE(v.fits);
  EXPECT_THAT(v.remedy, Not(HasSubstr("--recompute-method block")));
}

// A schedule that splits the backward (zb-h1) cannot run block recompute:
// the caller says so and full recompute is suggested instead.
TEST(MemoryVerdictTest, BlockRecomputeOnlyWhereTheScheduleAllowsIt) {
  const MemoryInputs in = Llama70bLongContext();
  const MemoryVerdict v =
      JudgeMemory(in, EstimateMemory(in), sim::GiB(80), {.block_recompute = false});
  EXPECT_THAT(v.remedy, StartsWith("enable full recompute"));
}

// Already recomputing a block that is too small: a larger one is suggested.
TEST(MemoryVerdictTest, TooSmallABlockSuggestsALargerOne) {
  const MemoryInputs in = WithBlockRecompute(Llama70bLongContext(), 1);
  const std::optional<int> n = SmallestBlockRecompute(in, sim::GiB(70));
  ASSERT_TRUE(n.has_value());
  EXPECT_GT(*n, 1);
  EXPECT_THAT(Judge(in, sim::GiB(70)).remedy,
              HasSubstr(absl::StrCat("--recompute-num-layers ", *n, "): peak")));
}

TEST(MemoryVerdictTest, FixedOverheadHasNoRemedyButABiggerGpu) {
  MemoryInputs in;
  in.model = Preset("gpt3-1.3b");
  in.model.num_layers = 1;
  in.model.hidden_size = 128;
  in.model.ffn_hidden_size = 512;
  in.model.num_attention_heads = in.model.num_query_groups = 2;
  in.model.vocab_size = 1024;
  in.model.seq_length = 128;
  in.shard.recompute = Recompute::kFull;
  const MemoryVerdict v = Judge(in, sim::MiB(512));  // < the 532 MiB overhead
  EXPECT_FALSE(v.fits);
  EXPECT_EQ(v.biggest_term, "other");
  EXPECT_THAT(v.remedy, HasSubstr("use a GPU with more memory"));
}

}  // namespace
}  // namespace clustersim::models
