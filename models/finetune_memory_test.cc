// LoRA / QLoRA and MoE terms of the memory model (memory_model.h,
// finetune.h) against published figures.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/finetune.h"
#include "models/memory_model.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Preset;
using ::testing::HasSubstr;

// LLaMA 65B (Touvron et al. 2023, arXiv 2302.13971, Table 2: dim 8192, 64
// heads, 80 layers; FFN int(2·4h/3) rounded up to a multiple of 256 = 22016,
// the Llama sizing rule of models.md §4.1; vocabulary 32,000).
TransformerConfig Llama65b() {
  TransformerConfig c = Preset("llama2-7b");
  c.name = "llama-65b";
  c.num_layers = 80;
  c.hidden_size = 8192;
  c.ffn_hidden_size = 22016;
  c.num_attention_heads = 64;
  c.num_query_groups = 64;
  c.seq_length = 2048;
  EXPECT_TRUE(ValidateTransformer(c).ok());
  return c;
}

MemoryInputs SingleGpu(const TransformerConfig& c, FinetuneMethod method) {
  MemoryInputs in;
  in.model = c;
  in.finetune.method = method;
  EXPECT_TRUE(ValidateMemoryInputs(in).ok()) << ValidateMemoryInputs(in);
  return in;
}

// QLoRA paper (Dettmers et al. 2023, arXiv 2305.14314), abstract and §1:
// QLoRA (r = 64 on all linear layers, §4) "reduces the average memory
// requirements of finetuning a 65B parameter model from >780GB of GPU memory
// to <48GB"; 4-bit weights cannot take less than 0.5 B/param.
TEST(FinetuneMemoryTest, QloraFits65bIn48GbAndFullDoesNot) {
  const TransformerConfig c = Llama65b();
  const double params = CountParameters(c).Total(c.num_layers);
  const MemoryBreakdown q = EstimateMemory(SingleGpu(c, FinetuneMethod::kQlora));
  EXPECT_LT(static_cast<double>(q.ModelStates().count()), 48e9);
  EXPECT_GT(static_cast<double>(q.weights.count()), 0.5 * params);
  const MemoryBreakdown full = EstimateMemory(SingleGpu(c, FinetuneMethod::kFull));
  EXPECT_GT(static_cast<double>(full.ModelStates().count()), 780e9);
  // LoRA keeps the 16-bit base: about 2 B/param, between the two.
  const MemoryBreakdown lora = EstimateMemory(SingleGpu(c, FinetuneMethod::kLora));
  EXPECT_GT(lora.weights.count(), 2 * q.weights.count() * 0.9);
  EXPECT_EQ(lora.gradients, q.gradients);  // only the adapters have gradients
}

// LoRA paper (Hu et al. 2021, arXiv 2106.09685, §4.2): on GPT-3 175B with
// r = 4 on the query and value projections, training VRAM drops "from 1.2TB
// to 350GB" and the checkpoint "from 350GB to 35MB".
TEST(FinetuneMemoryTest, LoraOnGpt3MatchesLoraPaper) {
  const TransformerConfig c = Preset("gpt3-175b");
  absl::StatusOr<FinetuneSpec> f = ParseFinetune("lora", 4, {"q_proj", "v_proj"});
  ASSERT_TRUE(f.ok()) << f.status();
  MemoryInputs in = SingleGpu(c, FinetuneMethod::kLora);
  in.finetune = *f;
  const MemoryBreakdown m = EstimateMemory(in);
  EXPECT_NEAR(static_cast<double>(m.ModelStates().count()) / 350e9, 1.0, 0.01);
  const double adapter_bytes = c.num_layers * LoraParametersPerLayer(c, *f, 1, 1) * 2;
  EXPECT_NEAR(adapter_bytes / 35e6, 1.0, 0.10);
}

// Adapters follow Megatron's TP split; tp = 1 gives Hu et al.'s r·(in+out).
TEST(FinetuneMemoryTest, AdapterParametersFollowTensorParallelSplit) {
  const TransformerConfig c = Preset("llama2-7b");
  FinetuneSpec f;
  f.method = FinetuneMethod::kLora;
  f.lora_rank = 8;
  const double h = 4096, ffn = 11008, r = 8;
  EXPECT_DOUBLE_EQ(LoraParametersPerLayer(c, f, 1, 1), r * (4 * 2 * h + 3 * (h + ffn)));
  EXPECT_LT(LoraParametersPerLayer(c, f, 4, 1), LoraParametersPerLayer(c, f, 1, 1));
  f.method = FinetuneMethod::kFull;
  EXPECT_EQ(LoraParametersPerLayer(c, f, 1, 1), 0);
}

TEST(FinetuneMemoryTest, ParseErrorsNameTheField) {
  EXPECT_THAT(ParseFinetune("qlora4", 0, {}).status().message(), HasSubstr("training.finetune"));
  EXPECT_THAT(ParseFinetune("lora", -1, {}).status().message(), HasSubstr("training.lora_rank"));
  EXPECT_THAT(ParseFinetune("lora", 0, {"wq"}).status().message(),
              HasSubstr("training.lora_target_modules: \"wq\""));
  absl::StatusOr<FinetuneSpec> f = ParseFinetune("", 0, {});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->method, FinetuneMethod::kFull);
  EXPECT_EQ(f->lora_rank, 64);
}

// Mixtral 8x7B: 46.70B total, 12.88B active with top-2 of 8 (models.md
// §4.2), so experts hold (46.70 − 12.88)/(1 − 2/8) = 45.09B and the rest
// 1.61B. With ep = 8 a rank holds the rest plus one expert per layer.
TEST(MoeMemoryTest, ExpertParallelSplitsExpertWeights) {
  MemoryInputs in;
  in.model = Preset("mixtral-8x7b");
  in.data_parallel = 8;
  in.shard.expert_parallel = 8;
  ASSERT_TRUE(ValidateMemoryInputs(in).ok()) << ValidateMemoryInputs(in);
  const double experts = (46.70e9 - 12.88e9) / (1 - 2.0 / 8), rest = 46.70e9 - experts;
  const MemoryBreakdown m = EstimateMemory(in);
  EXPECT_NEAR(static_cast<double>(m.weights.count()) / (2 * (rest + experts / 8)), 1.0, 0.005);
  // The distributed optimizer shards expert states over dp/ep = 1 rank only,
  // the rest over 8.
  in.distributed_optimizer = true;
  const MemoryBreakdown d = EstimateMemory(in);
  EXPECT_NEAR(static_cast<double>(d.optimizer.count()) / (12 * (rest / 8 + experts / 8)), 1.0,
              0.005);
  in.shard.expert_parallel = 16;  // does not divide 8 experts
  EXPECT_FALSE(ValidateMemoryInputs(in).ok());
  in.shard.expert_parallel = 4;
  in.data_parallel = 2;  // 4 does not divide dp·cp = 2
  EXPECT_THAT(ValidateMemoryInputs(in).message(), HasSubstr("expert_model_parallel_size=4"));
}

}  // namespace
}  // namespace clustersim::models
