// Runs the clustersim binary as a user would: exit codes, stderr, and that a
// failed run leaves no output file behind; catalogs, the collective table,
// the sizing examples, validate's tables and the serving-only devices.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/cli_testing.h"

namespace clustersim {
namespace {

TEST_F(CliTest, RunsDefaultScenarioAsJsonWithContractKeys) {
  Outcome o = Run("run " + src_ + "/scenarios/examples/gpt-22b-a100.textproto --format json");
  ASSERT_EQ(o.code, 0) << o.err;
  for (const char* key :
       {"\"step_time_s\"", "\"tokens_per_s\"", "\"tokens_per_s_per_gpu\"",
        "\"model_tflops_per_gpu\"", "\"hardware_tflops_per_gpu\"", "\"mfu\"", "\"bubble_ratio\"",
        "\"exposed_comm_s\"", "\"peak_memory_gib\"", "\"fits_in_memory\"",
        "\"memory_breakdown_gib\"", "\"weights\"", "\"gradients\"", "\"optimizer\"",
        "\"activations\"", "\"other\"", "\"cost\"", "\"usd_per_gpu_hour\"", "\"usd_per_step\"",
        "\"scenario\""}) {
    EXPECT_NE(o.out.find(key), std::string::npos) << key;
  }
}

TEST_F(CliTest, OutputDirGetsResultAndTrace) {
  const std::string out = (dir_ / "out").string();
  Outcome o = Run("run " + src_ + "/scenarios/examples/gpt-22b-a100.textproto --output-dir " + out);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(std::filesystem::exists(out + "/result.json"));
  EXPECT_TRUE(std::filesystem::exists(out + "/trace.json"));
  EXPECT_NE(o.out.find("step time"), std::string::npos);
}

TEST_F(CliTest, MegatronFlagsOverrideTheScenario) {
  Outcome a = Run("run " + src_ + "/scenarios/examples/gpt-22b-a100.textproto --format json");
  Outcome b = Run("run " + src_ +
                  "/scenarios/examples/gpt-22b-a100.textproto --format json --num-layers 24");
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_NE(b.out.find("\"num_layers\": 24"), std::string::npos);
  EXPECT_NE(a.out, b.out);
}

TEST_F(CliTest, FlagsAloneDescribeARun) {
  Outcome o = Run("run --model gpt-22b --gpu h100-sxm5-80gb --num-gpus 8 "
                  "--tensor-model-parallel-size 8 --micro-batch-size 1 --global-batch-size 8");
  EXPECT_EQ(o.code, 0) << o.err;
}

TEST_F(CliTest, BadInputExitsTwoWithOneClearLineAndNoOutput) {
  const std::string out = (dir_ / "bad").string();
  const struct {
    std::string args;
    std::string expect;
  } cases[] = {
      {"run /nonexistent.textproto", "cannot read /nonexistent.textproto"},
      {"run --gpu a100 --model gpt-22b", "cluster.gpu"},
      {"run --gpu a100-sxm4-80gb --model gpt-99b", "model.preset"},
      {"run --gpu a100-sxm4-80gb --model gpt-22b --tensor-model-parallel-size 3 --num-gpus 3",
       "does not divide model.num_attention_heads"},
      {"run --gpu a100-sxm4-80gb --model gpt-22b --num-gpus 12 --tensor-model-parallel-size 8",
       "not a multiple of tp x pp x cp"},
      {"run --gpu a100-sxm4-80gb --model gpt-22b --micro-batch-size 3 --global-batch-size 8",
       "global_batch_size=8 is not divisible"},
      {"run --gpu a100-sxm4-80gb --model gpt-22b --bogus-flag 1", "bogus-flag"},
      {"run --gpu a100-sxm4-80gb --model gpt-22b --format yaml", "--format=yaml"},
  };
  for (const auto& c : cases) {
    Outcome o = Run(c.args + " --output-dir " + out);
    EXPECT_EQ(o.code, 2) << c.args << "\n" << o.err;
    EXPECT_NE(o.err.find(c.expect), std::string::npos) << c.args << "\n" << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_FALSE(std::filesystem::exists(out + "/result.json")) << c.args;
    EXPECT_FALSE(std::filesystem::exists(out + "/trace.json")) << c.args;
  }
}

TEST_F(CliTest, MalformedTextprotoReportsLineAndColumn) {
  const std::string bad = (dir_ / "bad.textproto").string();
  std::ofstream(bad) << "cluster {\n  gpu: \"a100-sxm4-80gb\"\n  nodes 4\n}\n";
  Outcome o = Run("run " + bad);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("line 3, column"), std::string::npos) << o.err;
}

TEST_F(CliTest, ListsCatalogs) {
  Outcome gpus = Run("list gpus");
  EXPECT_EQ(gpus.code, 0);
  EXPECT_NE(gpus.out.find("a100-sxm4-80gb"), std::string::npos);
  Outcome models = Run("list models");
  EXPECT_NE(models.out.find("gpt-22b"), std::string::npos);
  Outcome clusters = Run("list clusters");
  EXPECT_NE(clusters.out.find("dgx-a100"), std::string::npos);
  EXPECT_EQ(Run("list nothing").code, 2);
}

TEST_F(CliTest, CollectiveTableShowsAlgorithmAndProtocolPerSize) {
  Outcome o = Run("collective --node hgx-b200 --num-gpus 8 -b 32K -e 1G -f 32");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("algorithm/protocol"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("ring/ll\n"), std::string::npos) << o.out;     // 32 KiB
  EXPECT_NE(o.out.find("nvls/simple\n"), std::string::npos) << o.out;  // 1 GiB
  Outcome forced = Run("collective --node dgx-h100 --num-gpus 8 --protocol simple -b 8 -e 8");
  ASSERT_EQ(forced.code, 0) << forced.err;
  EXPECT_NE(forced.out.find("ring/simple"), std::string::npos) << forced.out;
  Outcome bad = Run("collective --node dgx-h100 --protocol ll64");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--protocol: unknown protocol 'll64'"), std::string::npos) << bad.err;
  Outcome ineligible = Run("collective --node dgx-h100 --num-gpus 16 --protocol ll128");
  EXPECT_EQ(ineligible.code, 2);
  EXPECT_NE(ineligible.err.find("LL128 needs NVLink on every hop"), std::string::npos)
      << ineligible.err;
}

TEST_F(CliTest, SizingQuestionScenariosRunAndFit) {
  const std::string q = src_ + "/scenarios/examples/questions/";
  Outcome o = Run("compare " + q + "7b-1t-tokens-8xa100-p4d.textproto " + q +
                  "7b-1t-tokens-8xh100.textproto --format json");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.find("\"fits_in_memory\": false"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\"total_usd\""), std::string::npos);
  Outcome sweep = Run("sweep " + q + "7b-1t-tokens-8xh100.sweep.textproto --output " +
                      (dir_ / "q7b").string());
  ASSERT_EQ(sweep.code, 0) << sweep.err;
  EXPECT_NE(sweep.out.find("4 run (0 rejected)"), std::string::npos) << sweep.out;
}

// The serving table is recognised by its header; every row is listed
// with its setup or the reason it is not run, and the command exits cleanly.
TEST_F(CliTest, ValidateListsEveryInferenceRow) {
  Outcome o = Run("validate " + src_ + "/tests/validation/inference-runs.csv");
  ASSERT_EQ(o.code, 0) << o.err;
  for (const char* id : {"TRTV08-01", "TRTH200-02", "LCPP-SPARK-04", "TINYCHAT-07", "PPL-03",
                         "VLLM-CI-02", "LCPP-MAC-06", "MLC-02", "JETSON-02", "MEM-06", "CPU-01",
                         "A10-01"}) {
    EXPECT_NE(o.out.find(std::string(id) + " "), std::string::npos) << id;
  }
  EXPECT_NE(o.out.find("rows: 54, mapped to a scenario: 43"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("setup: Llama-2-7B on 1x apple-m2-ultra (tp 1), weights int4-gptq g32"),
            std::string::npos)
      << o.out;
}

// A fit override outside its range is a clear error naming the flag.
TEST_F(CliTest, ValidateRefusesAFitFactorOutsideItsRange) {
  for (const char* bad : {"0", "1.5", "-2"}) {
    Outcome o = Run("validate " + src_ + "/tests/validation/published-runs.csv " +
                    "--framework-attention-factor " + bad);
    EXPECT_EQ(o.code, 2) << bad << ": " << o.err;
    EXPECT_NE(o.err.find("--framework-attention-factor"), std::string::npos) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
    o = Run("validate " + src_ + "/tests/validation/published-runs.csv " +
            "--framework-gemm-factor " + bad);
    EXPECT_EQ(o.code, 2) << bad << ": " << o.err;
    EXPECT_NE(o.err.find("--framework-gemm-factor"), std::string::npos) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
}

// Serving-only devices are listed, and training on them is a clear error.
TEST_F(CliTest, ServingDevicesAreListedAndRefuseTraining) {
  Outcome list = Run("list gpus");
  ASSERT_EQ(list.code, 0) << list.err;
  for (const char* gpu : {"jetson-agx-orin-32gb", "jetson-agx-orin-64gb", "apple-m2-ultra",
                          "xeon-platinum-8480plus"}) {
    EXPECT_NE(list.out.find(gpu), std::string::npos) << gpu;
  }
  Outcome run = Run("run " + src_ + "/scenarios/examples/gpt-22b-a100.textproto --gpu apple-m2-ultra");
  EXPECT_NE(run.code, 0);
  EXPECT_NE(run.err.find("cluster.gpu: apple-m2-ultra"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("training is modelled on discrete GPUs only"), std::string::npos);
}

}  // namespace
}  // namespace clustersim
