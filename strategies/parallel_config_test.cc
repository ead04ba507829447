#include "strategies/parallel_config.h"

#include <string>

#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

models::TransformerConfig Model() {
  models::TransformerConfig m;
  m.name = "test";
  m.num_layers = 24;
  m.hidden_size = 2048;
  m.ffn_hidden_size = 8192;
  m.num_attention_heads = 32;
  m.num_query_groups = 32;
  m.seq_length = 2048;
  m.vocab_size = 51200;
  return m;
}

TEST(ParallelConfigTest, DerivesDataParallelAndMicrobatches) {
  ParallelConfig p;
  p.tensor_parallel = 2;
  p.micro_batch_size = 2;
  p.global_batch_size = 32;
  ASSERT_TRUE(ValidateParallelConfig(Model(), 16, &p).ok());
  EXPECT_EQ(p.data_parallel, 8);
  EXPECT_EQ(p.num_microbatches(), 2);
}

// Hybrid sharding: the shard size divides dp, needs ZeRO-3, and is refused
// (not simulated) on MoE models; each error names the field.
TEST(ParallelConfigTest, DataParallelShardSizeIsChecked) {
  ParallelConfig p;
  p.micro_batch_size = 1;
  p.global_batch_size = 16;
  p.zero_stage = 3;
  p.data_parallel_shard = 4;
  ASSERT_TRUE(ValidateParallelConfig(Model(), 16, &p).ok());
  EXPECT_EQ(p.ShardedDataParallel(), 4);
  p.data_parallel_shard = 3;
  absl::Status s = ValidateParallelConfig(Model(), 16, &p);
  EXPECT_NE(s.message().find("parallelism.data_parallel_shard_size=3 must divide "
                             "data_parallel_size=16"),
            std::string::npos)
      << s;
  p.data_parallel_shard = 4;
  p.zero_stage = 2;
  s = ValidateParallelConfig(Model(), 16, &p);
  EXPECT_NE(s.message().find("needs parallelism.zero_stage=3"), std::string::npos) << s;
  p.zero_stage = 3;
  models::TransformerConfig moe = Model();
  moe.num_experts = 8;
  moe.moe_top_k = 2;
  s = ValidateParallelConfig(moe, 16, &p);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("parallelism.data_parallel_shard_size"), std::string::npos) << s;
}

// Found by fuzzing the sweep reader (a sweep axis "mbs" of 1111111112 on 64
// GPUs): micro_batch_size x data_parallel overflowed int. Under UBSan the
// multiplication itself fails the test; the answer is the divisibility error.
TEST(ParallelConfigTest, HugeMicroBatchTimesDataParallelIsAnErrorNotAnOverflow) {
  ParallelConfig p;
  p.micro_batch_size = 1111111112;
  p.global_batch_size = 512;
  absl::Status s = ValidateParallelConfig(Model(), 8, &p);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("= 8888888896; use a multiple of 8888888896"), std::string::npos)
      << s.message();
}

TEST(ParallelConfigTest, HugeParallelSizesDoNotOverflowTheirProduct) {
  ParallelConfig p;
  p.tensor_parallel = 2;
  p.pipeline_parallel = 2;
  p.context_parallel = 2000000000;  // 8e9 in all: past int
  absl::Status s = ValidateParallelConfig(Model(), 8, &p);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("cluster.num_gpus=8 is not a multiple of tp x pp x cp"),
            std::string::npos)
      << s.message();
}

TEST(ParallelConfigTest, TensorParallelMustDivideHeads) {
  ParallelConfig p;
  p.tensor_parallel = 3;
  absl::Status s = ValidateParallelConfig(Model(), 6, &p);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("tensor_model_parallel_size=3 does not divide "
                             "model.num_attention_heads=32; try 1, 2, 4, 8"),
            std::string::npos)
      << s;
}

TEST(ParallelConfigTest, WorldMustBeMultipleOfModelParallel) {
  ParallelConfig p;
  p.tensor_parallel = 4;
  absl::Status s = ValidateParallelConfig(Model(), 6, &p);
  EXPECT_NE(s.message().find("cluster.num_gpus=6 is not a multiple of tp x pp x cp"),
            std::string::npos)
      << s;
}

TEST(ParallelConfigTest, GlobalBatchMustDivide) {
  ParallelConfig p;
  p.micro_batch_size = 4;
  p.global_batch_size = 6;
  absl::Status s = ValidateParallelConfig(Model(), 1, &p);
  EXPECT_NE(s.message().find("training.global_batch_size=6 is not divisible"), std::string::npos)
      << s;
}

TEST(ParallelConfigTest, RejectsNonPositiveSizes) {
  ParallelConfig p;
  p.micro_batch_size = 0;
  absl::Status s = ValidateParallelConfig(Model(), 8, &p);
  EXPECT_NE(s.message().find("training.micro_batch_size=0 must be at least 1"), std::string::npos);
}

TEST(ParallelConfigTest, SequenceParallelNeedsTensorParallel) {
  ParallelConfig p;
  p.sequence_parallel = true;
  EXPECT_FALSE(ValidateParallelConfig(Model(), 8, &p).ok());
}

TEST(ParallelConfigTest, ContextParallelDerivesDataParallel) {
  ParallelConfig p;
  p.context_parallel = 2;
  p.global_batch_size = 4;
  ASSERT_TRUE(ValidateParallelConfig(Model(), 8, &p).ok());
  EXPECT_EQ(p.data_parallel, 4);
}

TEST(ParallelConfigTest, ContextParallelNeedsTwoChunksPerRank) {
  models::TransformerConfig m = Model();
  m.seq_length = 2040;  // 2040 / (2 x 16) is not whole
  ParallelConfig p;
  p.context_parallel = 16;
  p.global_batch_size = 1;
  const absl::Status s = ValidateParallelConfig(m, 16, &p);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("parallelism.context_parallel_size=16 needs model.seq_length=2040 "
                             "divisible by 2 x context_parallel_size=32"),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("try 1, 2, 3, 4, 5, 6, 10"), std::string::npos) << s;
}

TEST(ParallelConfigTest, InterleavingNeedsMicrobatchesMultipleOfStages) {
  ParallelConfig p;
  p.pipeline_parallel = 4;
  p.virtual_pipeline = 2;
  p.global_batch_size = 6;
  absl::Status s = ValidateParallelConfig(Model(), 4, &p);
  EXPECT_NE(s.message().find("multiple of parallelism.pipeline_model_parallel_size=4"),
            std::string::npos)
      << s;
  p.global_batch_size = 8;
  EXPECT_TRUE(ValidateParallelConfig(Model(), 4, &p).ok());
  EXPECT_EQ(p.schedule, Schedule::kInterleaved1F1B);
}

TEST(ParallelConfigTest, LayersMustSplitOverStagesAndChunks) {
  ParallelConfig p;
  p.pipeline_parallel = 4;
  p.virtual_pipeline = 4;  // 16 chunks do not divide 24 layers
  p.global_batch_size = 4;
  absl::Status s = ValidateParallelConfig(Model(), 4, &p);
  EXPECT_NE(s.message().find("model.num_layers=24"), std::string::npos) << s;
}

}  // namespace
}  // namespace clustersim::strategies

namespace clustersim::strategies {
namespace {

TEST(ParallelConfigTest, UnevenFirstAndLastStages) {
  // Llama 3 405B style: 126 layers over 16 stages, one fewer on each end.
  models::TransformerConfig m = Model();
  m.num_layers = 126;
  ParallelConfig p;
  p.pipeline_parallel = 16;
  p.first_stage_layers = 7;
  p.last_stage_layers = 7;
  p.global_batch_size = 16;
  ASSERT_TRUE(ValidateParallelConfig(m, 16, &p).ok());
  EXPECT_EQ(p.LayersOf(0, 126), (std::pair<int, int>{0, 7}));
  EXPECT_EQ(p.LayersOf(1, 126), (std::pair<int, int>{7, 15}));
  EXPECT_EQ(p.LayersOf(14, 126), (std::pair<int, int>{111, 119}));
  EXPECT_EQ(p.LayersOf(15, 126), (std::pair<int, int>{119, 126}));
  p.last_stage_layers = 8;  // 111 layers cannot split over 14 stages
  EXPECT_FALSE(ValidateParallelConfig(m, 16, &p).ok());
}

// Llama 3 405B as trained (Dubey et al. 2024, section 3.3.2): interleaved
// with one layer per model chunk, so the first stage's first chunk holds only
// the embedding and the last stage's last chunk only the output and loss.
TEST(ParallelConfigTest, UnevenStagesWithInterleaving) {
  models::TransformerConfig m = Model();
  m.num_layers = 126;
  ParallelConfig p;
  p.pipeline_parallel = 16;
  p.virtual_pipeline = 8;
  p.first_stage_layers = 7;
  p.last_stage_layers = 7;
  p.global_batch_size = 32;
  ASSERT_TRUE(ValidateParallelConfig(m, 16, &p).ok()) << ValidateParallelConfig(m, 16, &p);
  EXPECT_EQ(p.LayersOf(0, 126), (std::pair<int, int>{0, 0}));      // stage 0, chunk 0
  EXPECT_EQ(p.LayersOf(1, 126), (std::pair<int, int>{0, 1}));      // stage 1, chunk 0
  EXPECT_EQ(p.LayersOf(16, 126), (std::pair<int, int>{15, 16}));   // stage 0, chunk 1
  EXPECT_EQ(p.LayersOf(126, 126), (std::pair<int, int>{125, 126}));
  EXPECT_EQ(p.LayersOf(127, 126), (std::pair<int, int>{126, 126}));  // stage 15, last chunk
  int total = 0;
  for (int pos = 0; pos < 128; ++pos) {
    const auto [b, e] = p.LayersOf(pos, 126);
    total += e - b;
  }
  EXPECT_EQ(total, 126);
  // Two chunks of 4: the end stages may hold 6 (4 + 2) but not 3 (a chunk of -1).
  p.virtual_pipeline = 2;
  m.num_layers = 8 * 14 + 6 + 6;
  p.first_stage_layers = p.last_stage_layers = 6;
  ASSERT_TRUE(ValidateParallelConfig(m, 16, &p).ok());
  EXPECT_EQ(p.LayersOf(0, m.num_layers), (std::pair<int, int>{0, 2}));
  m.num_layers = 8 * 14 + 3 + 3;
  p.first_stage_layers = p.last_stage_layers = 3;
  const absl::Status bad = ValidateParallelConfig(m, 16, &p);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("model chunks"), std::string::npos) << bad;
}

// Megatron-Core's --pipeline-model-parallel-layout: any layers per chunk,
// with interleaving, empty chunks allowed (DeepSeek-V3 on 61 layers).
TEST(ParallelConfigTest, ExplicitLayoutWithInterleaving) {
  models::TransformerConfig m = Model();
  m.num_layers = 61;
  ParallelConfig p;
  p.pipeline_parallel = 4;
  p.virtual_pipeline = 2;
  p.global_batch_size = 8;
  p.layout = {1, 9, 9, 9, 9, 9, 9, 6};
  ASSERT_TRUE(ValidateParallelConfig(m, 4, &p).ok()) << ValidateParallelConfig(m, 4, &p);
  EXPECT_EQ(p.LayersOf(0, 61), (std::pair<int, int>{0, 1}));
  EXPECT_EQ(p.LayersOf(1, 61), (std::pair<int, int>{1, 10}));
  EXPECT_EQ(p.LayersOf(7, 61), (std::pair<int, int>{55, 61}));
  p.layout = {0, 10, 9, 9, 9, 9, 9, 6};  // an empty first chunk
  EXPECT_TRUE(ValidateParallelConfig(m, 4, &p).ok());
  EXPECT_EQ(p.LayersOf(0, 61), (std::pair<int, int>{0, 0}));
  // Errors name the field and say what is wrong.
  p.layout = {1, 9, 9, 9};
  EXPECT_NE(ValidateParallelConfig(m, 4, &p).message().find(
                "parallelism.pipeline_layout has 4 entries; it needs one per model chunk: "
                "pp x vp = 4 x 2 = 8"),
            std::string::npos);
  p.layout = {1, 9, 9, 9, 9, 9, 9, 9};
  EXPECT_NE(ValidateParallelConfig(m, 4, &p).message().find("places 64 layers"),
            std::string::npos);
  p.layout = {-1, 11, 9, 9, 9, 9, 9, 6};
  EXPECT_NE(ValidateParallelConfig(m, 4, &p).message().find("[0]=-1 is negative"),
            std::string::npos);
  // Without a layout 61 layers do not split over 8 chunks, and the error says
  // how to set one.
  p.layout.clear();
  EXPECT_NE(ValidateParallelConfig(m, 4, &p).message().find("or set parallelism.pipeline_layout"),
            std::string::npos);
}

TEST(ParallelConfigTest, EvenSplitWithChunks) {
  ParallelConfig p;
  p.pipeline_parallel = 4;
  p.virtual_pipeline = 2;
  p.global_batch_size = 8;
  ASSERT_TRUE(ValidateParallelConfig(Model(), 4, &p).ok());
  EXPECT_EQ(p.LayersOf(5, 24), (std::pair<int, int>{15, 18}));
}

}  // namespace
}  // namespace clustersim::strategies
