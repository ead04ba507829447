// LoRA / QLoRA ops of a training step (finetune_ops.h).
#include "models/finetune_ops.h"

#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/flops.h"

namespace clustersim::models {
namespace {

TransformerConfig Llama7b() {
  TransformerConfig c;
  c.name = "llama2-7b-shape";
  c.num_layers = 32;
  c.hidden_size = 4096;
  c.ffn_hidden_size = 11008;
  c.num_attention_heads = 32;
  c.num_query_groups = 32;
  c.seq_length = 2048;
  c.vocab_size = 32000;
  c.activation = Activation::kSwiglu;
  return c;
}

Workload Build(const TransformerConfig& c, const FinetuneSpec& f, const ShardSpec& s) {
  absl::StatusOr<Workload> w = BuildWorkload(c, s);
  EXPECT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE(ApplyFinetune(c, f, s, &*w).ok());
  return *w;
}

FinetuneSpec Spec(const char* method, std::vector<std::string> targets = {}) {
  absl::StatusOr<FinetuneSpec> f = ParseFinetune(method, 0, targets);
  EXPECT_TRUE(f.ok()) << f.status();
  return *f;
}

int Count(const std::vector<Op>& ops, absl::string_view part) {
  int n = 0;
  for (const Op& op : ops) n += absl::StrContains(op.name, part) ? 1 : 0;
  return n;
}

double Flops(const std::vector<Op>& ops) {
  double f = 0;
  for (const Op& op : ops) f += op.flops.count();
  return f;
}

TEST(FinetuneOpsTest, FullTrainingIsUnchanged) {
  const TransformerConfig c = Llama7b();
  const ShardSpec s{.tensor_parallel = 2};
  const Workload full = Build(c, Spec("full"), s);
  const Workload plain = *BuildWorkload(c, s);
  EXPECT_EQ(full.layer_backward.size(), plain.layer_backward.size());
  EXPECT_EQ(FinetuneModelFlops(c, Spec("full"), 8), MegatronModelFlops(c, 8));
}

TEST(FinetuneOpsTest, LoraDropsBaseWeightGradientsAndKeepsInputGradients) {
  const TransformerConfig c = Llama7b();
  const Workload w = Build(c, Spec("lora"), ShardSpec{});
  for (const char* base : {"qkv_gemm", "out_proj_gemm", "fc1_gemm", "fc2_gemm"}) {
    EXPECT_EQ(Count(w.layer_backward, std::string(base) + "_wgrad"), 0) << base;
    EXPECT_EQ(Count(w.layer_backward, std::string(base) + "_dgrad"), 1) << base;
  }
  EXPECT_EQ(Count(w.head_backward, "lm_head_gemm_wgrad"), 0);
  EXPECT_EQ(Count(w.head_backward, "lm_head_gemm_dgrad"), 1);
  EXPECT_EQ(Count(w.embedding_backward, "embedding_bwd"), 0);
  EXPECT_EQ(Count(w.layer_forward, "nf4_dequant"), 0);  // LoRA keeps a 16-bit base
}

TEST(FinetuneOpsTest, AdapterOpsOnlyOnTargetedModules) {
  const TransformerConfig c = Llama7b();
  const Workload w = Build(c, Spec("lora", {"q_proj", "v_proj"}), ShardSpec{});
  EXPECT_EQ(Count(w.layer_forward, "lora_q_proj_"), 3);  // _a, _b, _add
  EXPECT_EQ(Count(w.layer_forward, "lora_v_proj_"), 3);
  EXPECT_EQ(Count(w.layer_backward, "lora_q_proj_"), 5);  // b/a dgrad, wgrad, bwd_add
  for (const char* m : {"k_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}) {
    EXPECT_EQ(Count(w.layer_forward, m), 0) << m;
    EXPECT_EQ(Count(w.layer_backward, m), 0) << m;
  }
  // All-linear: 7 modules, each 2·r·(in + out) FLOPs per token forward.
  const FinetuneSpec all = Spec("lora");
  const Workload a = Build(c, all, ShardSpec{});
  double adapter_fwd = 0;
  for (const Op& op : a.layer_forward) {
    if (absl::StartsWith(op.name, "lora_")) adapter_fwd += op.flops.count();
  }
  EXPECT_NEAR(adapter_fwd, 2.0 * c.seq_length * LoraParametersPerLayer(c, all, 1, 1),
              1e-9 * adapter_fwd);
}

TEST(FinetuneOpsTest, AdaptersFollowTheTensorParallelSplit) {
  const TransformerConfig c = Llama7b();
  const Workload w = Build(c, Spec("lora", {"q_proj", "o_proj"}), ShardSpec{.tensor_parallel = 4});
  for (const Op& op : w.layer_forward) {
    if (op.name == "lora_q_proj_a") EXPECT_EQ(op.k, 4096);      // A replicated
    if (op.name == "lora_q_proj_b") EXPECT_EQ(op.n, 4096 / 4);  // B split
    if (op.name == "lora_o_proj_a") EXPECT_EQ(op.k, 4096 / 4);  // A split
    if (op.name == "lora_o_proj_b") EXPECT_EQ(op.n, 4096);      // B replicated
  }
}

TEST(FinetuneOpsTest, QloraDequantisesEveryUseOfEveryQuantisedWeight) {
  const TransformerConfig c = Llama7b();
  const Workload w = Build(c, Spec("qlora"), ShardSpec{.recompute = Recompute::kFull});
  // qkv, out, fc1, fc2: once in the forward; the backward list holds the
  // recomputed forward's four and the dgrads' four.
  EXPECT_EQ(Count(w.layer_forward, "nf4_dequant_"), 4);
  EXPECT_EQ(Count(w.layer_backward, "nf4_dequant_"), 8);
  EXPECT_EQ(Count(w.head_forward, "nf4_dequant_") + Count(w.head_backward, "nf4_dequant_"), 0);
  // Bytes: read NF4 + scales, write 16 bits, per weight of the layer.
  double bytes = 0;
  for (const Op& op : w.layer_forward) {
    if (absl::StartsWith(op.name, "nf4_dequant_")) bytes += op.bytes.count();
  }
  const double layer_weights = 4.0 * 4096 * 4096 + 3.0 * 4096 * 11008;
  EXPECT_NEAR(bytes, layer_weights * (kNf4BytesPerParameter + 2), 64);
}

TEST(FinetuneOpsTest, LoraStepRunsFewerFlopsThanFullTraining) {
  const TransformerConfig c = Llama7b();
  const ShardSpec s{};
  const Workload full = Build(c, Spec("full"), s);
  const Workload lora = Build(c, Spec("lora"), s);
  // Per layer: forward and dgrad of the base (4 of its 6 parts) plus adapters.
  const double ratio = Flops(lora.layer_backward) / Flops(full.layer_backward);
  EXPECT_GT(ratio, 0.5);
  EXPECT_LT(ratio, 0.75);
  // The MFU convention drops the same work: ~4N·T + attention + adapters.
  const double model = FinetuneModelFlops(c, Spec("lora"), 1);
  const double megatron = MegatronModelFlops(c, 1);
  EXPECT_GT(model / megatron, 0.66);
  EXPECT_LT(model / megatron, 0.80);
  // ... and drops exactly the work the ops drop (attention, whose backward
  // the ops cost at 2.5x and Megatron at 2x, cancels out).
  auto total = [&](const Workload& w) {
    return c.num_layers * (Flops(w.layer_forward) + Flops(w.layer_backward)) +
           Flops(w.head_forward) + Flops(w.head_backward);
  };
  EXPECT_NEAR((megatron - model) / (total(full) - total(lora)), 1.0, 1e-9);
}

TEST(FinetuneOpsTest, InvalidSpecNamesTheField) {
  FinetuneSpec f = Spec("lora");
  f.lora_rank = 0;
  Workload w;
  EXPECT_THAT(std::string(ApplyFinetune(Llama7b(), f, ShardSpec{}, &w).message()),
              testing::HasSubstr("training.lora_rank"));
}

}  // namespace
}  // namespace clustersim::models
