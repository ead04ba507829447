// Runs the clustersim binary as a user would: exit codes, stderr, and that a
// failed run leaves no output file behind.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace clustersim {
namespace {

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = std::getenv("CLUSTERSIM_SOURCE_DIR");
    bin_ = std::string(std::getenv("CLUSTERSIM_BINARY_DIR")) + "/cli/clustersim";
    dir_ = std::filesystem::temp_directory_path() /
           ("clustersim_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Outcome Run(const std::string& args) {
    const std::string out = (dir_ / "stdout").string();
    const std::string err = (dir_ / "stderr").string();
    const std::string cmd = bin_ + " " + args + " >" + out + " 2>" + err;
    const int status = std::system(cmd.c_str());
    return Outcome{WEXITSTATUS(status), Slurp(out), Slurp(err)};
  }

  std::string src_, bin_;
  std::filesystem::path dir_;
};

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

// --- What-if studies: money, compare, search ----------------------

TEST_F(CliTest, ListsPricesWithDatesAndSources) {
  Outcome o = Run("list prices");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("aws-p5 "), std::string::npos);
  EXPECT_NE(o.out.find("12.290"), std::string::npos);
  EXPECT_NE(o.out.find("[AWS-CB]"), std::string::npos);
  EXPECT_NE(o.out.find("owned-rtx-4090"), std::string::npos);
}

TEST_F(CliTest, TrainTokensAddTimeToTrainAndDollars) {
  Outcome o = Run("run " + src_ +
                  "/scenarios/examples/gpt-22b-a100.textproto --train-tokens 1e9 --usd-per-gpu-hour 2");
  ASSERT_EQ(o.code, 0) << o.err;
  for (const char* line : {"time to train", "GPU-hours", "total cost", "energy", "per million"}) {
    EXPECT_NE(o.out.find(line), std::string::npos) << line << "\n" << o.out;
  }
  Outcome j = Run("run " + src_ +
                  "/scenarios/examples/gpt-22b-a100.textproto --train-steps 100 --format json");
  ASSERT_EQ(j.code, 0) << j.err;
  for (const char* key : {"\"time_to_train_s\"", "\"gpu_hours\"", "\"total_usd\"",
                          "\"usd_per_million_tokens\"", "\"energy_kwh\"", "\"price_name\""}) {
    EXPECT_NE(j.out.find(key), std::string::npos) << key;
  }
}

TEST_F(CliTest, PriceErrorsNameTheField) {
  const std::string scenario = src_ + "/scenarios/examples/gpt-22b-a100.textproto";
  Outcome wrong_gpu = Run("run " + scenario + " --price-source aws-p5");
  EXPECT_EQ(wrong_gpu.code, 2);
  EXPECT_NE(wrong_gpu.err.find("pricing.price_source"), std::string::npos) << wrong_gpu.err;
  EXPECT_NE(wrong_gpu.err.find("specialty-a100-80gb"), std::string::npos) << wrong_gpu.err;
  Outcome both = Run("run " + scenario + " --train-tokens 1e9 --train-steps 3");
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("keep one"), std::string::npos) << both.err;
  Outcome pue = Run("run " + scenario + " --pue 0.5");
  EXPECT_EQ(pue.code, 2);
  EXPECT_NE(pue.err.find("pricing.pue"), std::string::npos) << pue.err;
}

TEST_F(CliTest, CompareVariantsSideBySide) {
  const std::string scenario = src_ + "/scenarios/examples/gpt-22b-a100.textproto";
  Outcome o = Run("compare " + scenario +
                  " --variant recompute=selective --set train_tokens=1e10 --format csv");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("label,strategy,step_time_s"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\ngpt-22b-a100,tp8 pp1 dp1 mbs4 gbs4 rc-full,"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\ngpt-22b-a100 [recompute=selective],tp8 pp1 dp1 mbs4 gbs4 rc-selective,"),
            std::string::npos)
      << o.out;
  Outcome text = Run("compare " + scenario + " " + scenario);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("time_to_train_days"), std::string::npos);
  Outcome json = Run("compare " + scenario + " --variant tp=4,gbs=8 --format json");
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_EQ(json.out.front(), '[');
  EXPECT_NE(json.out.find("\"label\": \"gpt-22b-a100 [tp=4,gbs=8]\""), std::string::npos) << json.out;
}

TEST_F(CliTest, CompareErrorsNameTheCase) {
  const std::string scenario = src_ + "/scenarios/examples/gpt-22b-a100.textproto";
  Outcome one = Run("compare " + scenario);
  EXPECT_EQ(one.code, 2);
  EXPECT_NE(one.err.find("two or more cases"), std::string::npos) << one.err;
  Outcome field = Run("compare " + scenario + " --variant tpp=2");
  EXPECT_EQ(field.code, 2);
  EXPECT_NE(field.err.find("--variant \"tpp=2\""), std::string::npos) << field.err;
  Outcome invalid = Run("compare " + scenario + " --variant tp=3");
  EXPECT_EQ(invalid.code, 2);
  EXPECT_NE(invalid.err.find("gpt-22b-a100 [tp=3]: "), std::string::npos) << invalid.err;
  EXPECT_EQ(Run("compare " + scenario + " --variant tp=4 --format xml").code, 2);
  EXPECT_TRUE(invalid.out.empty());
}

TEST_F(CliTest, SearchPrintsTopKAndRejectionsDeterministically) {
  const std::string args =
      "search --model gpt3-1.3b --gpu a100-sxm4-80gb --num-gpus 4 --global-batch-size 8 "
      "--top-k 3 --no-progress";
  Outcome one = Run(args + " --threads 1");
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_NE(one.out.find("#1 "), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("#3 "), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("#4 "), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("rejections by reason"), std::string::npos) << one.out;
  EXPECT_NE(one.err.find("strategies/s"), std::string::npos) << one.err;  // timing on stderr
  Outcome two = Run(args + " --threads 2");
  ASSERT_EQ(two.code, 0) << two.err;
  EXPECT_EQ(one.out, two.out);
  Outcome explain = Run(args + " --explain tp=3");
  ASSERT_EQ(explain.code, 0) << explain.err;
  EXPECT_NE(explain.out.find("rejected (invalid)"), std::string::npos) << explain.out;
}

TEST_F(CliTest, SearchSetEditsTheBaseScenario) {
  // Full training of 7B does not fit one RTX 4090; QLoRA does (docs/what-if.md).
  const std::string args = "search " + src_ +
                           "/scenarios/examples/questions/7b-on-one-rtx4090.textproto --num-gpus 1 "
                           "--top-k 1 --no-progress";
  Outcome full = Run(args);
  ASSERT_EQ(full.code, 0) << full.err;
  EXPECT_EQ(full.out.find("#1 "), std::string::npos) << full.out;
  Outcome qlora = Run(args + " --set training.finetune=qlora");
  ASSERT_EQ(qlora.code, 0) << qlora.err;
  EXPECT_NE(qlora.out.find("#1 "), std::string::npos) << qlora.out;
}

TEST_F(CliTest, SearchErrorsNameTheFlag) {
  struct Case {
    std::string args, expected;
  } cases[] = {
      {"search --gpu a100-sxm4-80gb --num-gpus 8", "--model"},
      {"search --model gpt3-1.3b --num-gpus 8", "--gpu"},
      {"search --model gpt3-1.3b --gpu a100-sxm4-80gb", "--num-gpus"},
      {"search --model gpt3-1.3b --gpu a100-sxm4-80gb --num-gpus 8 --rank-by speed", "--rank-by"},
      {"search --model gpt3-1.3b --gpu a100-sxm4-80gb --num-gpus 8 --rank-by time-to-train",
       "--train-tokens"},
      {"search --model gpt3-1.3b --gpu a100-sxm4-80gb --num-gpus-range 16:8", "--num-gpus-range"},
      {"search --model gpt3-1.3b --gpu a100-sxm4-80gb --num-gpus 8 --explain tpp=2", "tpp"},
      {"search --model nope --gpu a100-sxm4-80gb --num-gpus 8", "model.preset"},
      {"search --model gpt3-1.3b --gpu a100-sxm4-80gb --num-gpus 8 --set training.finetun=lora",
       "training.finetun"},
      {"search --model gpt3-1.3b --gpu h100-sxm5-80gb --num-gpus 8 --search-precisions bf16,fp4",
       "--search-precisions"},
      {"search --model gpt3-1.3b --gpu h100-sxm5-80gb --num-gpus 8 --search-precisions auto,fp8",
       "--search-precisions"},
  };
  for (const Case& c : cases) {
    Outcome o = Run(c.args);
    EXPECT_EQ(o.code, 2) << c.args;
    EXPECT_NE(o.err.find(c.expected), std::string::npos) << c.args << "\n" << o.err;
    EXPECT_TRUE(o.out.empty()) << c.args;
  }
}

TEST_F(CliTest, SweepWritesResumableTablesAndAParetoFront) {
  const std::string sweep = src_ + "/scenarios/examples/sweeps/gpt-22b-grid.textproto";
  const std::string prefix = (dir_ / "grid").string();
  Outcome first = Run("sweep " + sweep + " --output " + prefix + " --shard 0/2");
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_NE(first.out.find("8 points in shard 0/2: 0 already done, 8 run"), std::string::npos)
      << first.out;
  Outcome rest = Run("sweep " + sweep + " --output " + prefix);
  ASSERT_EQ(rest.code, 0) << rest.err;
  EXPECT_NE(rest.out.find("16 points in shard 0/1: 8 already done, 8 run"), std::string::npos)
      << rest.out;
  EXPECT_NE(rest.out.find("Pareto front (days to train vs total $)"), std::string::npos);
  EXPECT_NE(Slurp(prefix + ".csv").find("label,strategy,step_time_s"), std::string::npos);
  EXPECT_EQ(Run("sweep " + sweep + " --output " + prefix + " --shard 3/2").code, 2);
  EXPECT_EQ(Run("sweep " + sweep).code, 2);  // no --output
  EXPECT_EQ(Run("sweep /nonexistent.textproto --output " + prefix).code, 2);
}

// --report FILE.html on the study commands: the table and the scatter with its
// Pareto front (the markers viz/study_report_test.cc checks), the same bytes on
// a rerun, and exit 2 with no file where the path cannot be written.
TEST_F(CliTest, StudyCommandsWriteADeterministicReport) {
  const std::string scenario = src_ + "/scenarios/examples/gpt-22b-a100.textproto";
  const std::string sweep = src_ + "/scenarios/examples/sweeps/gpt-22b-grid.textproto";
  struct Case {
    std::string args, summary, axis;
  } cases[] = {
      {"compare " + scenario + " --variant recompute=selective --set train_tokens=1e10",
       "2 candidates, 2 fit in memory", "time to train (days)"},
      {"compare " + scenario + " --variant tp=4,gbs=8", "2 candidates, 1 fit in memory",
       "step time (seconds)"},
      {"search --model gpt3-1.3b --gpu a100-sxm4-80gb --num-gpus 4 --global-batch-size 8 "
       "--top-k 3 --no-progress",
       "3 candidates, 3 fit in memory", "step time (seconds)"},
      {"sweep " + sweep + " --output " + (dir_ / "grid").string(),
       "16 candidates, 8 fit in memory", "time to train (days)"},
  };
  for (const Case& c : cases) {
    const std::string path = (dir_ / "study.html").string();
    Outcome o = Run(c.args + " --report " + path);
    ASSERT_EQ(o.code, 0) << c.args << "\n" << o.err;
    const std::string html = Slurp(path);
    EXPECT_NE(html.find("<table id=\"study-table\""), std::string::npos) << c.args;
    EXPECT_NE(html.find("<svg id=\"study-scatter\""), std::string::npos) << c.args;
    EXPECT_NE(html.find("<path class=\"front\""), std::string::npos) << c.args;
    EXPECT_NE(html.find("<tr class=\"front\">"), std::string::npos) << c.args;
    EXPECT_NE(html.find(c.summary), std::string::npos) << c.args << "\n" << html;
    EXPECT_NE(html.find(c.axis), std::string::npos) << c.args;
    // The sweep's rerun skips every point and draws the same lines again.
    ASSERT_EQ(Run(c.args + " --report " + path).code, 0) << c.args;
    EXPECT_EQ(Slurp(path), html) << c.args;
    std::filesystem::remove(path);
  }
  const std::string bad = (dir_ / "missing-dir" / "study.html").string();
  Outcome o = Run("compare " + scenario + " --variant tp=4,gbs=8 --report " + bad);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--report"), std::string::npos) << o.err;
  EXPECT_FALSE(std::filesystem::exists(bad));
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

TEST_F(CliTest, ServeExamplePrintsLatencyThroughputAndCost) {
  const std::string scenario = src_ + "/scenarios/examples/serve-llama3-8b-h100.textproto";
  Outcome text = Run("serve " + scenario + " --no-curve");
  ASSERT_EQ(text.code, 0) << text.err;
  for (const char* line : {"TTFT p50/p90/p99", "TPOT p50/p90/p99", "end-to-end p50/p90/p99",
                           "output tokens/s", "sustainable rate", "$ / million output tokens",
                           "energy", "KV cache"}) {
    EXPECT_NE(text.out.find(line), std::string::npos) << line << "\n" << text.out;
  }
  Outcome json = Run("serve " + scenario + " --no-curve --format json");
  ASSERT_EQ(json.code, 0) << json.err;
  for (const char* key : {"\"ttft_ms\"", "\"tpot_ms\"", "\"p99\"", "\"output_tokens_per_s\"",
                          "\"gpu_busy_fraction\"", "\"usd_per_million_output_tokens\"",
                          "\"max_concurrent_sequences\"", "\"saturated\""}) {
    EXPECT_NE(json.out.find(key), std::string::npos) << key;
  }
}

// Speculative decoding from flags: the summary's two lines; a bad acceptance
// rate exits 2 naming the field.
TEST_F(CliTest, ServeSpeculativeFlags) {
  Outcome o = Run(
      "serve --model llama3-8b --gpu h100-sxm5-80gb --batch-size 1 --output-len 64 --no-curve "
      "--speculative-method eagle --num-speculative-tokens 3 --acceptance-rate 0.7");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("speculative decoding        eagle, k 3"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("vs without"), std::string::npos) << o.out;
  o = Run("serve --model llama3-8b --gpu h100-sxm5-80gb --acceptance-rate 1.4");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("inference.speculative.acceptance_rate=1.4 must be in [0, 1]"),
            std::string::npos)
      << o.err;
}

TEST_F(CliTest, ServeFlagsAloneWriteTraceAndReport) {
  const std::string trace = (dir_ / "serve.json").string();
  const std::string report = (dir_ / "serve.html").string();
  Outcome o = Run("serve --model llama3-8b --gpu h100-sxm5-80gb --request-rate 5 "
                  "--num-requests 50 --prompt-len 512 --output-len 64 --weight-dtype int4-awq "
                  "--chunked-prefill --target-tpot-ms 20 --trace " + trace + " --report " + report);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("weights int4-awq"), std::string::npos) << o.out;
  EXPECT_NE(Slurp(trace).find("\"traceEvents\""), std::string::npos);
  const std::string html = Slurp(report);
  EXPECT_NE(html.find("<svg id=\"serve-curve-tpot\""), std::string::npos);
  EXPECT_NE(html.find("class=\"target\""), std::string::npos);
}

TEST_F(CliTest, ServeBadInputExitsTwoWithTheFieldAndNoFiles) {
  const std::string trace = (dir_ / "bad.json").string();
  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{
           {"--model llama3-8b --gpu a100-sxm4-80gb --weight-dtype fp8",
            "inference.weight_dtype=fp8"},
           {"--model llama3-8b --gpu h100-sxm5-80gb --prompt-len 0",
            "inference.workload.prompt_length.value=0"},
           {"--model llama3-8b --gpu h100-sxm5-80gb --output-len -3",
            "inference.workload.output_length.value=-3"},
           {"--model llama3-405b --gpu h100-sxm5-80gb", "does not fit"},
           {"--model llama3-8b --gpu h100-sxm5-80gb --request-rate -1",
            "inference.workload.request_rate_per_s=-1"},
           {"--model llama3-8b --gpu h100-sxm5-80gb --tp 3 --num-gpus 3",
            "inference.tensor_parallel_size=3"},
       }) {
    Outcome o = Run("serve " + c.args + " --trace " + trace);
    EXPECT_EQ(o.code, 2) << c.args << "\n" << o.err;
    EXPECT_NE(o.err.find(c.message), std::string::npos) << c.args << "\n" << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_FALSE(std::filesystem::exists(trace)) << c.args;
  }
}

TEST_F(CliTest, ServeOverloadReportsSaturationNotAHang) {
  Outcome o = Run("serve --model llama3-8b --gpu h100-sxm5-80gb --request-rate 500 "
                  "--num-requests 100 --no-curve");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("saturated: the offered 500 req/s exceed the capacity"),
            std::string::npos) << o.out;
}

}  // namespace
}  // namespace clustersim
