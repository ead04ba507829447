// The what-if study commands through the binary: prices and time-to-train,
// compare, search and sweep, their errors naming the flag or case, and the
// deterministic --report page.
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "tests/cli_testing.h"
#include "tests/slurp.h"

namespace clustersim {
namespace {

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

}  // namespace
}  // namespace clustersim
