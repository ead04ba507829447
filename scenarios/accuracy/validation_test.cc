#include "scenarios/accuracy/validation.h"

#include <atomic>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "scenarios/accuracy/published_row_stack.h"
#include "sim/csv_table.h"

namespace clustersim::scenarios {
namespace {

// One row of `csv` through ValidateTable; the parse must succeed.
ValidationRow OnlyRow(const std::string& csv) {
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(csv, "test.csv");
  EXPECT_TRUE(t.ok()) << t.status();
  absl::StatusOr<ValidationReport> r = ValidateTable(*t, "test.csv", {});
  EXPECT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rows.size(), 1u);
  return r->rows.at(0);
}

constexpr char kVtrainHeader[] =
    "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,"
    "tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)\n";

// The report says which sources miss the target, not only the overall MAPE.
TEST(ValidationTest, ReportMarksEachSourceAboveTheTarget) {
  ValidationReport r;
  r.by_source = {{"GOOD", 3, 4.0, -1.0}, {"BAD", 2, 12.5, 12.5}};
  r.by_group = {{"megatron-core", "h100-sxm5-80gb", 3, 4.0, -1.0},
                {"pytorch-fsdp", "a100-sxm4-40gb", 2, 12.5, -7.5}};
  r.supported = 5;
  r.overall_mape = 7.4;
  const std::string text = FormatValidationReport(r, 10);
  EXPECT_NE(text.find("BAD              12.5%  signed  +12.5%  (2 rows)  above the target\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("GOOD              4.0%  signed   -1.0%  (3 rows)\n"), std::string::npos)
      << text;
  // A stack x GPU group whose mean signed error lies beyond 6% is flagged.
  EXPECT_NE(text.find("megatron-core        h100-sxm5-80gb      4.0%  signed   -1.0%  (3 rows)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pytorch-fsdp         a100-sxm4-40gb     12.5%  signed   -7.5%  (2 rows)  "
                      "bias beyond +-6%\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("overall MAPE 7.4% over 5 rows; target 10%: met"), std::string::npos)
      << text;
}

// Every simulated row carries the run's memory verdict; the report counts the
// rows predicted not to fit, and a row that never ran is not counted.
TEST(ValidationTest, SimulatedRowsCarryTheMemoryVerdict) {
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(
      std::string(kVtrainHeader) +
          // A 2-layer GPT: a few GiB per A100.
          "8,8,1,1024,16,2,1024,1,8,1,100\n"
          // A 175B GPT unsharded on each of 8 A100s: model states alone are
          // terabytes.
          "8,8,1,12288,96,96,2048,1,8,1,100\n"
          // Not run: tp x dp x pp is not the GPU count.
          "8,8,1,1024,16,2,1024,1,4,1,100\n",
      "memory.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<ValidationReport> r = ValidateTable(*t, "memory.csv", {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 3u);
  const ValidationRow& small = r->rows[0];
  EXPECT_TRUE(small.simulated);
  EXPECT_TRUE(small.fits);
  EXPECT_GT(small.memory_gib, 0);
  EXPECT_LT(small.memory_gib, small.memory_capacity_gib);
  EXPECT_GT(small.memory_capacity_gib, 70);  // A100 80 GB
  EXPECT_LT(small.memory_capacity_gib, 81);
  const ValidationRow& big = r->rows[1];
  EXPECT_TRUE(big.simulated);
  EXPECT_FALSE(big.fits);
  EXPECT_GT(big.memory_gib, 1000);
  EXPECT_FALSE(r->rows[2].simulated);
  EXPECT_EQ(r->memory.simulated, 2);
  EXPECT_EQ(r->memory.misfits, std::vector<std::string>{big.id});
  const std::string text = FormatValidationReport(*r, 10);
  EXPECT_NE(text.find(absl::StrFormat(
                "\nmemory: 1 of 2 runs that ran are predicted not to fit their GPU (each is a "
                "miss of the memory model): %s %.1f of %.1f GiB\n",
                big.id, big.memory_gib, big.memory_capacity_gib)),
            std::string::npos)
      << text;
}

// The memory line says so when every run fits, and is absent when none ran.
TEST(ValidationTest, MemoryLineWhenAllFitOrNoneRan) {
  ValidationRow fits;
  fits.id = "A-01";
  fits.simulated = true;
  fits.fits = true;
  EXPECT_EQ(FormatMemoryCheck({fits}),
            "memory: 0 of 1 runs that ran are predicted not to fit their GPU (each is a miss of "
            "the memory model)\n");
  ValidationRow not_run;
  not_run.id = "A-02";
  EXPECT_EQ(FormatMemoryCheck({not_run}), "");
}

// Fuzzing found a vTrain row with tensor parallelism 0 dividing by zero
// (Megatron's vocabulary padding to 128 x tp): SIGFPE.
TEST(ValidationTest, VtrainRowWithZeroTensorParallelIsKeptWithTheColumnNamed) {
  const ValidationRow v = OnlyRow(std::string(kVtrainHeader) + "8,8,1,1024,16,2,1024,0,8,1,100\n");
  EXPECT_FALSE(v.supported);
  EXPECT_NE(v.reason.find("'tensor parallelism' is '0'"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("from 1 to 1024"), std::string::npos) << v.reason;
}

TEST(ValidationTest, VtrainParallelSizesAboveTheLimitAreRefused) {
  const ValidationRow v =
      OnlyRow(std::string(kVtrainHeader) + "8,8,1,1024,16,2,1024,1,8,4096,100\n");
  EXPECT_FALSE(v.supported);
  EXPECT_NE(v.reason.find("'pipeline parallelism' is '4096'"), std::string::npos) << v.reason;
}

constexpr char kPublishedHeader[] =
    "id,source,model,layers,hidden,heads,seq_len,gpu,num_gpus,tp,pp,cp,micro_batch,"
    "global_batch,metric,value\n";

// cp 0 divided by zero deriving the global batch of a memory row.
TEST(ValidationTest, PublishedRowWithZeroContextParallelNamesTheColumn) {
  const ValidationRow v = OnlyRow(std::string(kPublishedHeader) +
                                  "KOR22-9,x,GPT,2,1024,16,2048,A100-SXM4-80GB,8,1,1,0,1,,"
                                  "memory_gb,10\n");
  EXPECT_FALSE(v.supported);
  EXPECT_NE(v.reason.find("'cp' is '0'"), std::string::npos) << v.reason;
}

TEST(ValidationTest, PublishedRowWithNegativeTensorParallelNamesTheColumn) {
  const ValidationRow v = OnlyRow(std::string(kPublishedHeader) +
                                  "NAR21-9,x,GPT,2,1024,16,2048,A100-SXM4-80GB,8,-2,1,,1,8,"
                                  "iteration_time_s,1\n");
  EXPECT_FALSE(v.supported);
  EXPECT_NE(v.reason.find("'tp' is '-2'"), std::string::npos) << v.reason;
}

// 4 x hidden for the default FFN overflowed int (UB) for hidden sizes over
// 2^29; Resolve's check now names the field.
TEST(ValidationTest, HugeHiddenSizeIsAClearErrorNotAnOverflow) {
  const ValidationRow v =
      OnlyRow(std::string(kVtrainHeader) + "1,1,1,1073741824,16,1,1024,1,1,1,100\n");
  EXPECT_FALSE(v.supported);
  EXPECT_NE(v.reason.find("model.hidden_size=1073741824 is too large"), std::string::npos)
      << v.reason;
}

constexpr char kStackHeader[] =
    "id,source,model,layers,hidden,heads,seq_len,vocab,gpu,num_gpus,tp,pp,cp,vp,micro_batch,"
    "global_batch,recompute,metric,value,notes,framework,precision,ep\n";

// A table with a framework column runs each row under its stack's profile and
// recipe; rows the simulator cannot pin down are kept with the reason.
TEST(ValidationTest, RowsNamingTheirStackRunUnderItsProfile) {
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(
      std::string(kStackHeader) +
          "X-01,x,Llama 3 8B,,,,8192,,H100-SXM-80GB (DGX-H100),8,1,1,1,,1,128,,"
          "tokens_per_s_per_gpu,9000,,nemo-25.09 (Megatron-Bridge + Megatron-Core),bf16,\n"
          "Y-01,x,MPT-7B,32,4096,32,2048,50368,A100-40GB (MosaicML),8,1,1,1,,8,256,full,"
          "tokens_per_s_per_gpu,3000,FULL_SHARD,pytorch-fsdp-llm-foundry (Composer),bf16,\n"
          "Z-01,x,Llama 3 8B,,,,8192,,MI300X (8/node),8,1,1,1,,1,128,,"
          "tokens_per_s_per_gpu,9000,,nemo-25.09 (Megatron-Bridge),bf16,\n"
          "W-01,x,Kimi K2,61,7168,64,4096,,H100-SXM-80GB (DGX-H100),256,1,8,1,,1,2048,,"
          "tokens_per_s_per_gpu,900,,nemo-25.09 (Megatron-Bridge),fp8,64\n"
          "V-01,x,Llama 3 8B,,,,8192,,H100-SXM-80GB (DGX-H100),8,1,1,1,,1,128,,"
          "tokens_per_s_per_gpu,9000,,mxnet 1.9,bf16,\n",
      "stacks.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<ValidationReport> r = ValidateTable(*t, "stacks.csv", {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 5u);
  const ValidationRow& core = r->rows[0];
  ASSERT_TRUE(core.supported) << core.reason;
  EXPECT_EQ(core.stack, "megatron-core");
  EXPECT_EQ(core.gpu, "h100-sxm5-80gb");
  EXPECT_NE(core.assumptions.find("NeMo / Megatron-Bridge performance recipe"), std::string::npos);
  // Throughput rows: the implied step time error is measured / predicted - 1.
  EXPECT_NEAR(core.time_error, core.measured / core.predicted - 1, 1e-12);
  const ValidationRow& fsdp = r->rows[1];
  ASSERT_TRUE(fsdp.supported) << fsdp.reason;
  EXPECT_EQ(fsdp.stack, "pytorch-fsdp");
  EXPECT_EQ(fsdp.gpu, "a100-sxm4-40gb");
  EXPECT_FALSE(r->rows[2].supported);
  EXPECT_EQ(r->rows[2].gpu, "MI300X");
  EXPECT_NE(r->rows[2].reason.find("not in the catalog"), std::string::npos);
  EXPECT_FALSE(r->rows[3].supported);
  EXPECT_NE(r->rows[3].reason.find("mixture-of-experts"), std::string::npos);
  EXPECT_FALSE(r->rows[4].supported);
  EXPECT_NE(r->rows[4].reason.find("no framework profile"), std::string::npos);
  ASSERT_EQ(r->by_group.size(), 2u);
  EXPECT_EQ(r->by_group[0].stack, "megatron-core");
  EXPECT_EQ(r->by_group[1].stack, "pytorch-fsdp");
  EXPECT_DOUBLE_EQ(r->by_group[1].mean_signed, 100 * fsdp.time_error);
}

// A set stop flag ends the table between rows with CANCELLED.
// A stated stage layout replaces the even split of the remainder; a layout
// that does not fit the model is refused naming the scenario field.
TEST(ValidationTest, StatedStageLayoutIsUsed) {
  const std::string header =
      "id,source,model,layers,hidden,heads,seq_len,vocab,gpu,num_gpus,tp,pp,cp,vp,micro_batch,"
      "global_batch,recompute,metric,value,notes,framework,precision,ep,first_stage_layers,"
      "last_stage_layers\n";
  const std::string row =
      ",x,GPT,10,1024,16,2048,51200,H100-SXM-80GB (DGX-H100),4,1,4,1,,1,8,,"
      "iteration_time_s,1,,nemo-25.09 (Megatron-Bridge),bf16,,";
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(
      header + "S-01" + row + ",\n" + "S-02" + row + "2,2\n" + "S-03" + row + "9,9\n",
      "layout.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<ValidationReport> r = ValidateTable(*t, "layout.csv", {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 3u);
  ASSERT_TRUE(r->rows[0].supported) << r->rows[0].reason;
  EXPECT_NE(r->rows[0].assumptions.find("uneven stages (first 3, last 3"), std::string::npos)
      << r->rows[0].assumptions;
  ASSERT_TRUE(r->rows[1].supported) << r->rows[1].reason;
  EXPECT_EQ(r->rows[1].assumptions.find("uneven stages"), std::string::npos);
  // 2-3-3-2 keeps the embedding and the loss off the stages with 3 layers,
  // where 3-2-2-3 puts them on: the slowest stage, and so the step, is shorter.
  EXPECT_LT(r->rows[1].predicted, r->rows[0].predicted);
  EXPECT_FALSE(r->rows[2].supported);
  EXPECT_NE(r->rows[2].reason.find("first_pipeline_num_layers"), std::string::npos)
      << r->rows[2].reason;
}

// torchtitan with a pipeline gathers parameters once per step (ZeRO-2), not
// once per micro-batch: with 8 micro-batches over 16 nodes the same row runs
// faster than under NeMo AutoModel's ZeRO-3 (which also reduces in bf16, the
// cheaper of the two gradient reductions).
TEST(ValidationTest, TorchtitanPipelineKeepsParametersGathered) {
  const std::string header =
      "id,source,model,layers,hidden,heads,seq_len,vocab,gpu,num_gpus,tp,pp,cp,vp,micro_batch,"
      "global_batch,recompute,metric,value,notes,framework,precision,ep\n";
  const std::string row =
      ",x,GPT,16,4096,32,2048,51200,H100-SXM-80GB (DGX-H100),128,8,2,1,,1,64,full,"
      "iteration_time_s,1,,";
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(
      header + "T-01" + row + "torchtitan 9dec370,bf16,\n" + "A-01" + row +
          "nemo-automodel (FSDP2),bf16,\n",
      "pipeline.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<ValidationReport> r = ValidateTable(*t, "pipeline.csv", {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 2u);
  ASSERT_TRUE(r->rows[0].supported) << r->rows[0].reason;
  ASSERT_TRUE(r->rows[1].supported) << r->rows[1].reason;
  EXPECT_NE(r->rows[0].assumptions.find("ZeRO-2"), std::string::npos) << r->rows[0].assumptions;
  EXPECT_LT(r->rows[0].predicted, r->rows[1].predicted);
}

// NeMo AutoModel's MoE models with enable_fsdp_optimizations stated gather
// parameters once per step and reduce gradients once (ZeRO-2): with 8
// micro-batches the row runs faster than the same row without the setting;
// a dense model with the setting keeps the per-micro-batch ZeRO-3.
TEST(ValidationTest, AutomodelMoeWithFsdpOptimizationsSyncsOncePerStep) {
  const std::string moe =
      ",x,Qwen3 MoE 30B,48,2048,32,4096,151936,H100-SXM-80GB (DGX-H100),8,1,1,1,,4,256,full,"
      "iteration_time_s,1,";
  const std::string dense = ",x,GPT,8,4096,32,2048,51200,H100-SXM-80GB (DGX-H100),8,1,1,1,,1,64,"
                            "full,iteration_time_s,1,";
  const std::string stated = "enable_fsdp_optimizations: true,nemo-automodel (FSDP2),bf16,";
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(
      std::string(kStackHeader) + "M-01" + moe + stated + "8\n" + "M-02" + moe +
          ",nemo-automodel (FSDP2),bf16,8\n" + "D-01" + dense + stated + "\n",
      "automodel.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<ValidationReport> r = ValidateTable(*t, "automodel.csv", {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 3u);
  for (const ValidationRow& row : r->rows) ASSERT_TRUE(row.supported) << row.id << row.reason;
  EXPECT_NE(r->rows[0].assumptions.find("ZeRO-2"), std::string::npos) << r->rows[0].assumptions;
  EXPECT_EQ(r->rows[1].assumptions.find("ZeRO-2"), std::string::npos) << r->rows[1].assumptions;
  EXPECT_EQ(r->rows[2].assumptions.find("ZeRO-2"), std::string::npos) << r->rows[2].assumptions;
  EXPECT_LT(r->rows[0].predicted, r->rows[1].predicted);
}

// NeMo AutoModel's fake balanced gate hands each token k neighbouring
// experts: with DeepEP over 8 ranks a Qwen3-30B-A3B token goes to one rank,
// not about five, so the row stating it runs faster; a dense model ignores it.
TEST(ValidationTest, AutomodelFakeBalancedGateRoutesRoundRobin) {
  const std::string moe =
      ",x,Qwen3 MoE 30B,48,2048,32,4096,151936,H100-SXM-80GB (DGX-H100),8,1,1,1,,4,256,full,"
      "iteration_time_s,1,";
  const std::string kernels = "kernel optimizations 'TE + DeepEP'";
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(
      std::string(kStackHeader) + "M-01" + moe + "\"" + kernels +
          ", fake_balanced_gate: true\",nemo-automodel (FSDP2),bf16,8\n" + "M-02" + moe +
          kernels + ",nemo-automodel (FSDP2),bf16,8\n",
      "automodel.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<ValidationReport> r = ValidateTable(*t, "automodel.csv", {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 2u);
  for (const ValidationRow& row : r->rows) ASSERT_TRUE(row.supported) << row.id << row.reason;
  EXPECT_NE(r->rows[0].assumptions.find("fake_balanced_gate"), std::string::npos)
      << r->rows[0].assumptions;
  EXPECT_EQ(r->rows[1].assumptions.find("fake_balanced_gate"), std::string::npos);
  EXPECT_LT(r->rows[0].predicted, 0.95 * r->rows[1].predicted);
}

TEST(ValidationTest, StopFlagCancelsBetweenRows) {
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(
      std::string(kStackHeader) +
          "X-01,x,Llama 3 8B,,,,8192,,H100-SXM-80GB (DGX-H100),8,1,1,1,,1,128,,"
          "tokens_per_s_per_gpu,9000,,nemo-25.09 (Megatron-Bridge + Megatron-Core),bf16,\n",
      "stacks.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  std::atomic<bool> stop{true};
  absl::StatusOr<ValidationReport> r = ValidateTable(*t, "stacks.csv", {.cancel = &stop});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled);
}

// A Megatron-Bridge row whose notes state a Megatron-FSDP size runs ZeRO-3
// (parameters gathered per layer); a size of 0 is plain data parallelism.
TEST(ValidationTest, MegatronFsdpRowsShardParameters) {
  EXPECT_EQ(validation_internal::MegatronFsdpSize("GA = 8; FSDP column = 64 (>0: ...)"), 64);
  EXPECT_EQ(validation_internal::MegatronFsdpSize("FSDP column = 0 (>0: ...)"), 0);
  EXPECT_EQ(validation_internal::MegatronFsdpSize("no such column"), 0);
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(
      std::string(kStackHeader) +
          "F-01,x,Llama 3 8B,,,,8192,,H100-SXM-80GB (DGX-H100),8,1,1,1,,1,128,,"
          "tokens_per_s_per_gpu,9000,FSDP column = 8 (>0: Megatron-FSDP),"
          "nemo-25.09 (Megatron-Bridge + Megatron-Core),fp8,\n"
          "F-02,x,Llama 3 8B,,,,8192,,H100-SXM-80GB (DGX-H100),8,1,1,1,,1,128,,"
          "tokens_per_s_per_gpu,9000,FSDP column = 0 (0: DDP),"
          "nemo-25.09 (Megatron-Bridge + Megatron-Core),fp8,\n",
      "stacks.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<ValidationReport> r = ValidateTable(*t, "stacks.csv", {.keep_scenarios = true});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 2u);
  const ValidationRow& fsdp = r->rows[0];
  ASSERT_TRUE(fsdp.supported) << fsdp.reason;
  EXPECT_NE(fsdp.scenario.find("zero_stage: 3"), std::string::npos) << fsdp.scenario;
  EXPECT_NE(fsdp.assumptions.find("Megatron-FSDP over 8 GPUs"), std::string::npos)
      << fsdp.assumptions;
  const ValidationRow& ddp = r->rows[1];
  ASSERT_TRUE(ddp.supported) << ddp.reason;
  EXPECT_EQ(ddp.scenario.find("zero_stage"), std::string::npos) << ddp.scenario;
  // Sharded parameters, gradients and optimizer states: less memory per GPU.
  EXPECT_LT(fsdp.memory_gib, ddp.memory_gib);
  EXPECT_TRUE(fsdp.fits) << fsdp.memory_gib;
}

// torchtitan rows: "selective (layer)" recomputes every second block whole
// (block recompute of half the layers); Float8 with TP all-gathers in float8
// unless the row states rowwise scaling.
TEST(ValidationTest, TorchtitanLayerCheckpointingAndFloat8TensorParallel) {
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(
      std::string(kStackHeader) +
          "T-01,x,Llama 3 8B,32,4096,32,8192,128256,A100-80GB,64,1,1,1,,1,64,selective (layer),"
          "tokens_per_s_per_gpu,2900,FSDP2,torchtitan 9dec370,bf16,\n"
          "T-02,x,Llama 3 8B,32,4096,32,8192,128256,H100-SXM-80GB (DGX-H100),64,8,1,1,,12,96,"
          "full,tokens_per_s_per_gpu,5000,float8 tensorwise,torchtitan 820504e,fp8,\n"
          "T-03,x,Llama 3 8B,32,4096,32,8192,128256,H100-SXM-80GB (DGX-H100),64,8,1,1,,12,96,"
          "full,tokens_per_s_per_gpu,5000,float8 rowwise,torchtitan 820504e,fp8,\n",
      "stacks.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<ValidationReport> r = ValidateTable(*t, "stacks.csv", {.keep_scenarios = true});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 3u);
  for (const ValidationRow& row : r->rows) ASSERT_TRUE(row.supported) << row.reason;
  EXPECT_NE(r->rows[0].scenario.find("recompute_num_layers: 16"), std::string::npos)
      << r->rows[0].scenario;
  EXPECT_NE(r->rows[1].scenario.find("fp8_tp_gather: true"), std::string::npos)
      << r->rows[1].scenario;
  EXPECT_EQ(r->rows[2].scenario.find("fp8_tp_gather"), std::string::npos) << r->rows[2].scenario;
  EXPECT_GT(r->rows[1].predicted, r->rows[2].predicted);  // tokens per second
}

// A long-context NeMo row that states only its global batch runs one sequence
// per micro-batch, as NeMo's long-context recipes do (not the whole batch of
// 16K-token sequences in one micro-batch).
TEST(ValidationTest, LongContextRowsRunOneSequencePerMicroBatch) {
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(
      std::string(kStackHeader) +
          "NEMOLONG25-10,x,Llama 2 7B,32,4096,32,16384,32000,H100-SXM-80GB (DGX-H100),16,2,1,1,,,"
          "256,,tflops_per_gpu,660,,nemo-24.03.01.framework (Megatron-Core),fp8,\n",
      "stacks.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<ValidationReport> r = ValidateTable(*t, "stacks.csv", {.keep_scenarios = true});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 1u);
  const ValidationRow& long_context = r->rows[0];
  ASSERT_TRUE(long_context.supported) << long_context.reason;
  EXPECT_NE(long_context.scenario.find("micro_batch_size: 1\n"), std::string::npos)
      << long_context.scenario;
  EXPECT_NE(long_context.assumptions.find("NeMo's long-context recipes"), std::string::npos)
      << long_context.assumptions;
  EXPECT_TRUE(long_context.fits) << long_context.memory_gib;
}

}  // namespace
}  // namespace clustersim::scenarios
