// The sizing questions of docs/what-if.md, asked again: each test loads the
// question's scenario from scenarios/examples/questions/, runs it (or searches around
// it) and checks the qualitative answer docs/what-if.md states, so that a model
// change which flips an answer fails here and the table gets rewritten.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scenarios/input/loader.h"
#include "scenarios/input/resolve.h"
#include "scenarios/input/scenario_edit.h"
#include "scenarios/run/runner.h"
#include "scenarios/studies/search.h"

namespace clustersim {
namespace {

std::string SourceDir() {
  const char* d = std::getenv("CLUSTERSIM_SOURCE_DIR");
  return d ? d : ".";
}

config::Scenario Question(const std::string& file) {
  absl::StatusOr<config::Scenario> s =
      scenarios::LoadScenarioFile(SourceDir() + "/scenarios/examples/questions/" + file);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : config::Scenario();
}

// The question's scenario with `assignments` applied (compare --variant syntax).
config::Result Ask(const std::string& file, const std::string& assignments = "") {
  config::Scenario s = Question(file);
  const absl::Status edit = scenarios::ApplyAssignments(assignments, &s);
  EXPECT_TRUE(edit.ok()) << edit;
  absl::StatusOr<scenarios::ResolvedScenario> r = scenarios::Resolve(s);
  EXPECT_TRUE(r.ok()) << assignments << ": " << r.status();
  if (!r.ok()) return config::Result();
  absl::StatusOr<config::Result> result = scenarios::RunScenario(*r, {});
  EXPECT_TRUE(result.ok()) << assignments << ": " << result.status();
  std::printf("%s [%s]: %.3f s, %.2f GiB, %s\n", file.c_str(), assignments.c_str(),
              result.ok() ? result->step_time_s() : 0.0,
              result.ok() ? result->peak_memory_gib() : 0.0,
              result.ok() && result->fits_in_memory() ? "fits" : "does not fit");
  return result.ok() ? *result : config::Result();
}

// How many strategies of `clustersim search` fit in memory (none simulated).
size_t FeasibleStrategies(config::Scenario base, int num_gpus) {
  scenarios::SearchRequest req;
  req.base = std::move(base);
  req.gpu_counts = {num_gpus};
  req.prune_only = true;
  absl::StatusOr<scenarios::SearchReport> r = scenarios::RunSearch(req);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->feasible : 0;
}

// Q1: one 24 GB RTX 4090 and Llama 2 7B.
TEST(QuestionsTest, Rtx4090FitsLoraAndQloraButNotFullTraining) {
  const std::string q = "7b-on-one-rtx4090.textproto";
  const config::Result full = Ask(q);
  const config::Result lora = Ask(q, "training.finetune=lora");
  const config::Result qlora = Ask(q, "training.finetune=qlora");
  EXPECT_FALSE(full.fits_in_memory());
  EXPECT_GT(full.peak_memory_gib(), 4 * 24.0);  // not a near miss: mixed-precision Adam state
  EXPECT_TRUE(lora.fits_in_memory());
  EXPECT_TRUE(qlora.fits_in_memory());
  EXPECT_LT(qlora.peak_memory_gib(), lora.peak_memory_gib() / 2);
  // Step time (models/finetune_ops.h): LoRA drops the base's weight gradients
  // and its optimizer, QLoRA adds the 4-bit weights' dequantisation.
  EXPECT_LT(lora.step_time_s(), full.step_time_s());
  EXPECT_GT(qlora.step_time_s(), lora.step_time_s());
  // MFU counts only the work done: ~4·N·T for the frozen base.
  EXPECT_LT(lora.model_flops_per_step_finetune(), 0.8 * lora.model_flops_per_step_megatron());
  EXPECT_GT(lora.model_flops_per_step_finetune(), 0.6 * lora.model_flops_per_step_megatron());
  EXPECT_EQ(full.model_flops_per_step_finetune(), 0);
  // No strategy on one GPU saves full training; at sequence 4096 LoRA still
  // fits (with full recompute) and QLoRA too.
  config::Scenario s = Question(q);
  EXPECT_EQ(FeasibleStrategies(s, 1), 0u);
  s.mutable_model()->set_seq_length(4096);
  s.mutable_training()->set_finetune("lora");
  EXPECT_GT(FeasibleStrategies(s, 1), 0u);
  EXPECT_TRUE(Ask(q, "training.finetune=lora,model.seq_length=4096,recompute=full").fits_in_memory());
  EXPECT_FALSE(Ask(q, "training.finetune=lora,model.seq_length=4096,recompute=none").fits_in_memory());
  EXPECT_TRUE(Ask(q, "training.finetune=qlora,model.seq_length=4096,recompute=none").fits_in_memory());
}

// The fewest GPUs (powers of two up to 128) on which some strategy fits.
int FewestGpus(const std::string& file, const std::string& gpu, const std::string& model) {
  config::Scenario s = Question(file);
  s.mutable_cluster()->set_gpu(gpu);
  s.mutable_model()->set_preset(model);
  for (int n = 1; n <= 128; n *= 2) {
    if (FeasibleStrategies(s, n) > 0) return n;
  }
  return 0;
}

// Q2: GPUs needed for full training of Llama 2 7B, 13B and 70B.
TEST(QuestionsTest, GpusForFullTrainingGrowWithTheModelAndShrinkWithMemory) {
  const std::string q = "gpus-for-full-training.textproto";
  const std::vector<std::string> models = {"llama2-7b", "llama2-13b", "llama2-70b"};
  std::vector<int> a100, h100;
  for (const std::string& m : models) {
    a100.push_back(FewestGpus(q, "a100-sxm4-40gb", m));
    h100.push_back(FewestGpus(q, "h100-sxm5-80gb", m));
    std::printf("%s: fewest A100 40GB %d, fewest H100 80GB %d\n", m.c_str(), a100.back(),
                h100.back());
  }
  // The docs' table (search at these counts picks the strategy).
  EXPECT_EQ(a100, (std::vector<int>{4, 8, 32}));
  EXPECT_EQ(h100, (std::vector<int>{2, 4, 16}));
  for (size_t i = 0; i < models.size(); ++i) EXPECT_LT(h100[i], a100[i]) << models[i];
}

// Q3: A100 80GB vs RTX 4090, the same strategy on eight of each.
TEST(QuestionsTest, A100IsFasterThanRtx4090AndMoreSoWhenTensorParallelNeedsNvlink) {
  const std::string q = "a100-vs-4090-7b-8gpu.textproto";
  const config::Result rtx = Ask(q);
  const config::Result a100 = Ask(q, "gpu=a100-sxm4-80gb");
  const config::Result rtx_tp8 = Ask(q, "tp=8,pp=1");
  const config::Result a100_tp8 = Ask(q, "gpu=a100-sxm4-80gb,tp=8,pp=1");
  for (const config::Result* r : {&rtx, &a100, &rtx_tp8, &a100_tp8}) {
    EXPECT_TRUE(r->fits_in_memory());
  }
  const double speedup = rtx.step_time_s() / a100.step_time_s();
  const double speedup_tp8 = rtx_tp8.step_time_s() / a100_tp8.step_time_s();
  // More than the 312/165 = 1.9x dense BF16 peak ratio alone: PCIe communication too.
  EXPECT_GT(speedup, 312.0 / 165.2);
  EXPECT_GT(speedup_tp8, speedup);
  EXPECT_GT(rtx.exposed_comm_s(), 2 * a100.exposed_comm_s());
}

// Q4: activation recompute and FlashAttention on Llama 2 7B, sequence 4096.
TEST(QuestionsTest, RecomputeTradesTimeForMemoryAndFlashAttentionSavesBoth) {
  const std::string q = "recompute-attention-7b-8xa100.textproto";
  const config::Result none = Ask(q);
  const config::Result selective = Ask(q, "recompute=selective");
  const config::Result full = Ask(q, "recompute=full");
  const config::Result unfused = Ask(q, "training.attention=unfused");
  const config::Result unfused_selective = Ask(q, "training.attention=unfused,recompute=selective");
  // Full recompute: less memory, more time (one more forward pass).
  EXPECT_LT(full.peak_memory_gib(), none.peak_memory_gib() - 10);
  EXPECT_GT(full.step_time_s(), 1.2 * none.step_time_s());
  // Selective recompute only drops the attention core's activations, which
  // FlashAttention never stores: nothing saved, a little time spent.
  EXPECT_NEAR(selective.peak_memory_gib(), none.peak_memory_gib(), 0.1);
  EXPECT_GT(selective.step_time_s(), none.step_time_s());
  EXPECT_LT(selective.step_time_s(), full.step_time_s());
  // Without FlashAttention the s² scores do not fit on 80 GB; selective
  // recompute brings them back to FlashAttention's footprint, slower.
  EXPECT_FALSE(unfused.fits_in_memory());
  EXPECT_TRUE(none.fits_in_memory());
  EXPECT_GT(unfused.step_time_s(), none.step_time_s());
  EXPECT_TRUE(unfused_selective.fits_in_memory());
  EXPECT_GT(unfused_selective.step_time_s(), selective.step_time_s());
}

}  // namespace
}  // namespace clustersim
