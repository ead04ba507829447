#include "models/memory_model.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/activation_memory.h"
#include "models/workload_testing.h"

namespace clustersim::models {
namespace {

using testing::Preset;
using ::testing::HasSubstr;

double Gib(sim::Bytes b) { return b.ToGiB(); }

double Activations(const MemoryInputs& in) { return Gib(EstimateMemory(in).activations); }

// A Korthikanti et al. 2022 Table 3 configuration (models.md §3 and
// published-runs.csv KOR22-15..22): tp 8, sequence parallel + selective
// recompute, data-parallel size 1, micro-batches = global batch / micro batch,
// interleaving as Calculon encodes it (22B: 1, 175B: 3, 530B: 3, 1T: 1).
struct Kor22Row {
  const char* id_states;
  const char* id_activations;
  const char* model;
  int pp, micro_batch, global_batch, vp;
  double states_gib, activations_gib;
};
constexpr Kor22Row kKor22[] = {
    {"KOR22-15", "KOR22-16", "gpt-22b", 1, 4, 4, 1, 45.56, 9.56},
    {"KOR22-17", "KOR22-18", "gpt3-175b", 8, 1, 64, 3, 45.56, 12.35},
    {"KOR22-19", "KOR22-20", "mt-nlg-530b", 35, 1, 280, 3, 31.64, 23.08},
    {"KOR22-21", "KOR22-22", "gpt-1t", 64, 1, 512, 1, 32.96, 26.56},
};

MemoryInputs Kor22Inputs(const Kor22Row& row) {
  MemoryInputs in;
  in.model = Preset(row.model);
  // Korthikanti et al. 2022 predate FlashAttention in Megatron-LM: Table 2's
  // 5·a·s/h attention terms are the unfused softmax and dropout.
  in.model.attention_backend = AttentionBackend::kUnfused;
  in.shard = {.tensor_parallel = 8, .sequence_parallel = true,
              .micro_batch_size = row.micro_batch, .recompute = Recompute::kSelective};
  in.pipeline_parallel = row.pp;
  in.virtual_pipeline = row.vp;
  in.num_microbatches = row.global_batch / row.micro_batch;
  EXPECT_TRUE(ValidateMemoryInputs(in).ok()) << ValidateMemoryInputs(in);
  return in;
}

// Figure 1 "parameters + optimizer" = 18 bytes x the transformer layers'
// parameters per GPU (12·L·h²/(t·p)): it leaves the embedding out. The
// middle stage holds no embedding, so it is compared there; the first stage
// holds more (checked below), by 1.5% (22B) to 9% (1T).
TEST(MemoryModelTest, Korthikanti2022ModelStatesWithinFivePercent) {
  for (const Kor22Row& row : kKor22) {
    MemoryInputs in = Kor22Inputs(row);
    in.pipeline_stage = row.pp / 2;
    const double got = Gib(EstimateMemory(in).ModelStates());
    std::printf("%s %-12s model states %6.2f GiB (paper %6.2f, %+.1f%%)\n", row.id_states,
                row.model, got, row.states_gib, 100 * (got - row.states_gib) / row.states_gib);
    EXPECT_NEAR(got / row.states_gib, 1.0, 0.05) << row.id_states;
    in.pipeline_stage = 0;
    EXPECT_GE(Gib(EstimateMemory(in).ModelStates()), got) << row.id_states;
  }
}

TEST(MemoryModelTest, Korthikanti2022ActivationsWithinFivePercent) {
  for (const Kor22Row& row : kKor22) {
    const double got = Gib(EstimateMemory(Kor22Inputs(row)).activations);
    std::printf("%s %-12s activations  %6.2f GiB (paper %6.2f, %+.1f%%)\n", row.id_activations,
                row.model, got, row.activations_gib,
                100 * (got - row.activations_gib) / row.activations_gib);
    EXPECT_NEAR(got / row.activations_gib, 1.0, 0.05) << row.id_activations;
  }
}

// Korthikanti Figure 1 (models.md §3): 22B without recompute or sequence
// parallelism needs 59.25 GiB of activations; Figure 7 gives the share of each
// technique: none 100, sequence 66.84, selective 49.42, both 16.18, full 7.64 %.
TEST(MemoryModelTest, Korthikanti2022Figure7Shares) {
  MemoryInputs in = Kor22Inputs(kKor22[0]);
  auto activations = [&](bool sp, Recompute r) {
    MemoryInputs x = in;
    x.shard.sequence_parallel = sp;
    x.shard.recompute = r;
    return Gib(EstimateMemory(x).activations);
  };
  const double none = activations(false, Recompute::kNone);
  EXPECT_NEAR(none / 59.25, 1.0, 0.05);
  const std::pair<double, double> shares[] = {
      {activations(true, Recompute::kNone), 66.84},
      {activations(false, Recompute::kSelective), 49.42},
      {activations(true, Recompute::kSelective), 16.18},
      {activations(false, Recompute::kFull), 7.64}};
  for (const auto& [gib, percent] : shares) {
    EXPECT_NEAR(100 * gib / none, percent, 1.0);  // percentage points
  }
}

// The flash / unfused split (training.attention). Llama 3 8B, seq 8192, tp 1,
// no recompute: unfused keeps Korthikanti's 5·a·s²·b bytes per layer of
// softmax output, dropout mask and dropout output; FlashAttention keeps only
// an fp32 logsumexp per head and token instead, so its activations grow
// linearly with the sequence and the unfused ones quadratically.
TEST(MemoryModelTest, FlashAttentionDropsTheQuadraticTerms) {
  MemoryInputs in;
  in.model = Preset("llama3-8b");
  ASSERT_EQ(in.model.seq_length, 8192);
  ASSERT_EQ(in.model.attention_backend, AttentionBackend::kFlash);  // the default
  auto activations = [&](AttentionBackend backend, int seq) {
    MemoryInputs x = in;
    x.model.attention_backend = backend;
    x.model.seq_length = seq;
    return static_cast<double>(EstimateMemory(x).activations.count());
  };
  const double flash = activations(AttentionBackend::kFlash, 8192);
  const double unfused = activations(AttentionBackend::kUnfused, 8192);
  std::printf("llama3-8b seq 8192 tp 1 activations: flash %.1f GiB, unfused %.1f GiB\n",
              flash / (1 << 30), unfused / (1 << 30));
  const TransformerConfig& c = in.model;
  const double s = 8192, layers = c.num_layers, a = c.num_attention_heads;
  const double scores = 5.0 * a * s * s * layers;  // Korthikanti Table 2, b = 1
  const double logsumexp = 4.0 * a * s * layers;
  EXPECT_NEAR(unfused - flash, scores - logsumexp, 1e-6 * unfused);
  EXPECT_LT(flash / (1 << 30), 60.0);  // the unfused count is ~495 GiB
  // Linear in the sequence under flash, superlinear unfused.
  EXPECT_NEAR(activations(AttentionBackend::kFlash, 16384) / flash, 2.0, 1e-6);
  EXPECT_GT(activations(AttentionBackend::kUnfused, 16384) / unfused, 3.0);
  // Selective recompute drops the attention core either way.
  in.shard.recompute = Recompute::kSelective;
  EXPECT_EQ(activations(AttentionBackend::kFlash, 8192),
            activations(AttentionBackend::kUnfused, 8192));
}

// ZeRO paper worked example (Rajbhandari et al. 2020; formulas.md §5.3):
// Ψ = 7.5B, N_d = 64, fp16 gradients: 120 GB -> 31.4 -> 16.6 -> 1.9 GB.
TEST(MemoryModelTest, ZeroPaperWorkedExample) {
  const double expected_gb[] = {120.0, 31.4, 16.6, 1.9};
  for (int stage = 0; stage <= 3; ++stage) {
    const MemoryBreakdown m = ModelStateMemory(7.5e9, Dtype::kFp16, Dtype::kFp16, stage, 64);
    EXPECT_NEAR(m.ModelStates().count() / 1e9, expected_gb[stage], 0.05) << "stage " << stage;
  }
}

// Megatron accounting: 18 bytes/param, 6 + 12/d with the distributed optimizer.
TEST(MemoryModelTest, MegatronBytesPerParameter) {
  MemoryInputs in;
  in.model = Preset("llama3-8b");
  in.data_parallel = 8;
  const double params = CountParameters(in.model).Total(in.model.num_layers);
  EXPECT_NEAR(EstimateMemory(in).ModelStates().count() / params, 18.0, 1e-6);
  in.distributed_optimizer = true;
  EXPECT_NEAR(EstimateMemory(in).ModelStates().count() / params, 6.0 + 12.0 / 8, 1e-6);
  in.distributed_optimizer = false;
  in.zero_stage = 3;
  EXPECT_NEAR(EstimateMemory(in).ModelStates().count() / params, 18.0 / 8, 1e-6);
}

// Megatron's theoretical_memory_usage.py: with fewer micro-batches than
// stages, 1F1B keeps only m in flight (min(1, m/p)).
TEST(MemoryModelTest, FewMicrobatchesLimitInFlightActivations) {
  MemoryInputs in = Kor22Inputs(kKor22[1]);  // 175B, pp 8
  in.virtual_pipeline = 1;
  in.num_microbatches = 64;
  const double all_in_flight = Activations(in);
  in.num_microbatches = 2;
  EXPECT_NEAR(Activations(in) / all_in_flight, 2.0 / 8, 1e-6);
}

TEST(MemoryModelTest, RecomputeOrdersActivationMemory) {
  MemoryInputs in = Kor22Inputs(kKor22[0]);
  in.shard.recompute = Recompute::kNone;
  const sim::Bytes none = EstimateMemory(in).activations;
  in.shard.recompute = Recompute::kSelective;
  const sim::Bytes selective = EstimateMemory(in).activations;
  in.shard.recompute = Recompute::kFull;
  const sim::Bytes full = EstimateMemory(in).activations;
  EXPECT_LT(full, selective);
  EXPECT_LT(selective, none);
  EXPECT_GT(EstimateMemory(in).other, sim::MiB(100));
  EXPECT_EQ(EstimateMemory(in).Total(), EstimateMemory(in).ModelStates() + full +
                                            EstimateMemory(in).other);
}

// Replaying the MLP's input side (recompute_mlp_up) drops, per layer and
// micro-batch, the fc1 input (2·s·b·h, whole on every TP rank without
// sequence parallelism), fc1's output and the activation's (2·(f + f)·s·b/t
// for GeLU): between full and selective recompute.
TEST(MemoryModelTest, MlpUpRecomputeDropsTheMlpInputSide) {
  MemoryInputs in = Kor22Inputs(kKor22[0]);  // GPT 22B, tp 8, one stage
  in.shard.sequence_parallel = false;
  const double selective = static_cast<double>(EstimateMemory(in).activations.count());
  in.shard.recompute_mlp_up = true;
  const double mlp_up = static_cast<double>(EstimateMemory(in).activations.count());
  const TransformerConfig& c = in.model;
  const double sbh = static_cast<double>(in.shard.micro_batch_size) * c.seq_length * c.hidden_size;
  const double per_layer = (2.0 + 4.0 * c.ffn_hidden_size / c.hidden_size / 8) * sbh;
  // 1F1B on one stage keeps one micro-batch of every layer.
  EXPECT_NEAR(selective - mlp_up, per_layer * c.num_layers, 1e-6 * selective);
  in.shard.recompute = Recompute::kFull;
  EXPECT_LT(static_cast<double>(EstimateMemory(in).activations.count()), mlp_up);
}

TEST(MemoryModelTest, ValidationNamesTheField) {
  MemoryInputs in = Kor22Inputs(kKor22[1]);
  in.zero_stage = 4;
  EXPECT_THAT(ValidateMemoryInputs(in).message(), HasSubstr("zero_stage"));
  in = Kor22Inputs(kKor22[1]);
  in.pipeline_stage = 8;
  EXPECT_THAT(ValidateMemoryInputs(in).message(), HasSubstr("pipeline_stage=8"));
  in = Kor22Inputs(kKor22[1]);
  in.virtual_pipeline = 13;  // 8 x 13 chunks > 96 layers
  EXPECT_THAT(ValidateMemoryInputs(in).message(), HasSubstr("model.num_layers=96"));
  in = Kor22Inputs(kKor22[1]);
  in.shard.tensor_parallel = 7;
  EXPECT_THAT(ValidateMemoryInputs(in).message(), HasSubstr("tensor_model_parallel_size=7"));
}

}  // namespace
// MoE (Mixtral 8x7B): expert weights, gradients and optimizer states split
// over ep; the dense parts and the activations do not change.
TEST(MemoryModelTest, ExpertParallelDividesOnlyTheExpertStates) {
  MemoryInputs in;
  in.model = Preset("mixtral-8x7b");
  in.shard = {.tensor_parallel = 2, .sequence_parallel = true};
  in.pipeline_parallel = 4;
  in.data_parallel = 8;
  in.num_microbatches = 8;
  in.distributed_optimizer = true;
  const MemoryBreakdown ep1 = EstimateMemory(in);
  in.shard.expert_parallel = 4;
  ASSERT_TRUE(ValidateMemoryInputs(in).ok());
  const MemoryBreakdown ep4 = EstimateMemory(in);
  const ParameterCounts pc = CountParameters(in.model);
  const double experts = 8 * pc.expert_per_layer / 2;  // 8 layers on stage 0, / tp
  // 16-bit weights; fp32 gradients; optimizer 12 B sharded over dp 8 (ep 1)
  // or over the expert-data-parallel group dp / ep = 2 (ep 4).
  const double saved = experts * (2 + 4) * (1 - 1.0 / 4) + experts * 12 * (1.0 / 8 - 1.0 / 4 / 2);
  EXPECT_NEAR(ep1.ModelStates().count() - ep4.ModelStates().count(), saved, 1e3);
  // Experts are 96% of Mixtral's parameters: the model states more than halve.
  EXPECT_GT(static_cast<double>(ep1.ModelStates().count()) / ep4.ModelStates().count(), 2.0);
  EXPECT_EQ(ep1.activations, ep4.activations);
  in.shard.expert_parallel = 3;
  EXPECT_THAT(ValidateMemoryInputs(in).message(), HasSubstr("expert_model_parallel_size=3"));
}

// ZeRO-3 keeps two gathered 16-bit layers and one unsharded gradient.
TEST(MemoryModelTest, ZeroThreeCountsItsGatherBuffers) {
  MemoryInputs in;
  in.model = Preset("llama3-8b");
  in.data_parallel = 8;
  in.pipeline_parallel = 4;
  const sim::Bytes base = EstimateMemory(in).other;
  in.zero_stage = 3;
  const double layer = CountParameters(in.model).per_layer;
  EXPECT_NEAR(static_cast<double>((EstimateMemory(in).other - base).count()), layer * (4 + 4), 1);
}

// Hybrid sharding over groups of 2 of 8 data-parallel ranks holds the model
// states of ZeRO-3 over 2 ranks.
TEST(MemoryModelTest, HybridShardingShardsOverTheShardGroup) {
  MemoryInputs in;
  in.model = Preset("llama3-8b");
  in.data_parallel = 8;
  in.zero_stage = 3;
  in.data_parallel_shard = 2;
  const MemoryBreakdown hybrid = EstimateMemory(in);
  in.data_parallel = 2;
  in.data_parallel_shard = 0;
  const MemoryBreakdown two = EstimateMemory(in);
  EXPECT_EQ(hybrid.ModelStates(), two.ModelStates());
  EXPECT_EQ(hybrid.Total(), two.Total());
  in.data_parallel = 8;
  EXPECT_LT(EstimateMemory(in).ModelStates(), hybrid.ModelStates());
  in.data_parallel_shard = 3;
  EXPECT_THAT(ValidateMemoryInputs(in).message(), HasSubstr("data_parallel_shard_size=3"));
}

// Megatron-FSDP keeps the embedding (first stage) and output layer (last
// stage) gathered whole in 16 bits across the step.
TEST(MemoryModelTest, KeptNonLayerParametersAreHeldWhole) {
  MemoryInputs in;
  in.model = Preset("llama3-8b");
  in.data_parallel = 8;
  in.pipeline_parallel = 4;
  in.zero_stage = 3;
  const sim::Bytes per_layer_only = EstimateMemory(in).other;
  in.keep_non_layer_gathered = true;
  const ParameterCounts pc = CountParameters(in.model);
  EXPECT_NEAR(static_cast<double>((EstimateMemory(in).other - per_layer_only).count()),
              pc.embedding * 2, 1);
  in.pipeline_stage = 3;
  const sim::Bytes last = EstimateMemory(in).other;
  in.keep_non_layer_gathered = false;
  EXPECT_NEAR(static_cast<double>((last - EstimateMemory(in).other).count()),
              (pc.final_norm + pc.lm_head) * 2, 1);
  in.pipeline_stage = 1;  // no embedding or head
  const sim::Bytes middle = EstimateMemory(in).other;
  in.keep_non_layer_gathered = true;
  EXPECT_EQ(EstimateMemory(in).other, middle);
  in.zero_stage = 1;  // parameters whole anyway
  const sim::Bytes zero1 = EstimateMemory(in).other;
  in.keep_non_layer_gathered = false;
  EXPECT_EQ(EstimateMemory(in).other, zero1);
}

}  // namespace clustersim::models

namespace clustersim::models {
namespace {

// ZeRO-3 on Mixtral 8x7B: the dense states shard over dp x cp, the experts
// over the expert-data-parallel group (dp / ep); the gather buffers hold the
// dense layer and the rank's experts, the experts only while they are sharded.
TEST(MemoryModelTest, ZeroThreeOnMoeShardsExpertsOverTheExpertDataGroup) {
  MemoryInputs in;
  in.model = Preset("mixtral-8x7b");
  in.shard = {.tensor_parallel = 2, .sequence_parallel = true, .expert_parallel = 4};
  in.pipeline_parallel = 4;
  in.data_parallel = 8;
  in.num_microbatches = 8;
  const MemoryBreakdown unsharded = EstimateMemory(in);
  in.zero_stage = 3;
  ASSERT_TRUE(ValidateMemoryInputs(in).ok());
  const MemoryBreakdown zero3 = EstimateMemory(in);
  const ParameterCounts pc = CountParameters(in.model);
  const double experts = 8 * pc.expert_per_layer / (2 * 4);  // 8 layers on stage 0, / tp·ep
  const double dense = unsharded.weights.count() / 2.0 - experts;  // 16-bit weights
  // 18 B per parameter: dense ones over dp 8, experts over dp / ep = 2.
  EXPECT_NEAR(zero3.ModelStates().count(), dense * 18 / 8 + experts * 18 / 2, 1e3);
  const double layer = (pc.per_layer - pc.expert_per_layer) / 2 + pc.expert_per_layer / 8;
  EXPECT_NEAR(static_cast<double>((zero3.other - unsharded.other).count()), layer * (4 + 4), 1);
  // ep 8: expert-data groups of one rank keep the experts whole, ungathered.
  in.shard.expert_parallel = 8;
  const MemoryBreakdown ep8 = EstimateMemory(in);
  in.zero_stage = 0;
  const MemoryBreakdown ep8_unsharded = EstimateMemory(in);
  const double dense_layer = (pc.per_layer - pc.expert_per_layer) / 2;
  EXPECT_NEAR(static_cast<double>((ep8.other - ep8_unsharded.other).count()), dense_layer * 8, 1);
}

// FP8 under ZeRO-3: the FP8 weight copy (2 B per linear-layer parameter) is
// cast from the rank's shard, so it divides by the data-parallel group like the
// 16-bit weights; without ZeRO-3 every rank holds it whole.
TEST(MemoryModelTest, ZeroThreeShardsTheFp8WeightCopy) {
  MemoryInputs in;
  in.model = Preset("llama3-8b");
  in.data_parallel = 8;
  in.shard.dtype = Dtype::kBf16;
  const double bf16_weights = static_cast<double>(EstimateMemory(in).weights.count());
  in.shard.dtype = Dtype::kFp8;
  const double linear = in.model.num_layers * CountParameters(in.model).linear_per_layer;
  EXPECT_NEAR(static_cast<double>(EstimateMemory(in).weights.count()) - bf16_weights,
              2.0 * linear, 1e3);
  in.zero_stage = 3;
  in.shard.dtype = Dtype::kBf16;
  const double bf16_sharded = static_cast<double>(EstimateMemory(in).weights.count());
  in.shard.dtype = Dtype::kFp8;
  EXPECT_NEAR(static_cast<double>(EstimateMemory(in).weights.count()) - bf16_sharded,
              2.0 * linear / 8, 1e3);
}


// Activation offload of N layers (Megatron-Core cpu_offloading_num_layers):
// the peak keeps the L - N other layers and the one being reloaded.
TEST(MemoryModelTest, OffloadedLayersLeaveTheGpuButTheOneReloaded) {
  MemoryInputs in;
  in.model = Preset("llama3-70b");
  in.shard.micro_batch_size = 2;
  in.shard.dtype = Dtype::kFp8;
  in.data_parallel = 64;
  in.zero_stage = 3;
  const MemoryBreakdown base = EstimateMemory(in);
  const double layer = MeanLayerActivationBytes(in.model, in.shard);
  in.cpu_offload_layers = 40;
  ASSERT_TRUE(ValidateMemoryInputs(in).ok());
  const MemoryBreakdown off = EstimateMemory(in);
  EXPECT_NEAR(static_cast<double>((base.activations - off.activations).count()), 39 * layer, 1.0);
  EXPECT_EQ(off.ModelStates(), base.ModelStates());
  EXPECT_EQ(off.other, base.other);
  in.cpu_offload_layers = 1;  // the one layer is back before its backward
  EXPECT_EQ(EstimateMemory(in).activations, base.activations);
  // Megatron-Core: fewer layers than the model's, no pipeline, no recompute.
  in.cpu_offload_layers = 80;
  EXPECT_THAT(std::string(ValidateMemoryInputs(in).message()),
              HasSubstr("cpu_offload_layers=80 must be in [0, num_layers=80)"));
  in.cpu_offload_layers = 40;
  in.pipeline_parallel = 2;
  EXPECT_FALSE(ValidateMemoryInputs(in).ok());
  in.pipeline_parallel = 1;
  in.shard.recompute = Recompute::kSelective;
  EXPECT_FALSE(ValidateMemoryInputs(in).ok());
}

}  // namespace
}  // namespace clustersim::models
