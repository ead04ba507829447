// `clustersim serve` through the binary: the example's latency, throughput
// and cost, speculative decoding and deployment from flags, the trace and
// report files, bad input, and an overloaded deployment.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/cli_testing.h"
#include "tests/slurp.h"

namespace clustersim {
namespace {

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
