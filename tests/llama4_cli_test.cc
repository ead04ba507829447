// Llama 4 Maverick (interleaved dense and mixture-of-experts layers) through
// the binary: served from its preset, trained from its preset and from its
// Hugging Face config.json, the two giving the same step.
#include <string>

#include "gtest/gtest.h"
#include "tests/cli_testing.h"

namespace clustersim {
namespace {

using Llama4CliTest = CliTest;

TEST_F(Llama4CliTest, ServesMaverickFromItsPreset) {
  const Outcome o = Run(
      "serve --model llama4-maverick-400b --gpu h200-sxm-141gb --tp 8 --weight-dtype fp8 "
      "--kv-cache-dtype fp8 --num-requests 32 --request-rate 4 --no-curve");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("llama4-maverick-400b on 8 x h200-sxm-141gb"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("TPOT p50/p90/p99"), std::string::npos) << o.out;
}

TEST_F(Llama4CliTest, TrainsTheSameFromThePresetAndTheHuggingFaceConfig) {
  const std::string shard =
      " --gpu h100-sxm5-80gb --num-gpus 512 --tensor-model-parallel-size 4 --sequence-parallel "
      "--expert-model-parallel-size 128 --micro-batch-size 1 --global-batch-size 1024 "
      "--use-distributed-optimizer --format json";
  const Outcome preset = Run("run --model llama4-maverick-400b" + shard);
  ASSERT_EQ(preset.code, 0) << preset.err;
  const std::string config = src_ + "/models/testdata/Llama-4-Maverick-17B-128E.config.json";
  const Outcome hf = Run("run --model-config " + config + " --seq-length 8192" + shard);
  ASSERT_EQ(hf.code, 0) << hf.err;
  auto step = [](const std::string& json) {
    const size_t at = json.find("\"step_time_s\": ");
    return at == std::string::npos ? std::string() : json.substr(at, json.find(',', at) - at);
  };
  EXPECT_FALSE(step(preset.out).empty()) << preset.out;
  EXPECT_EQ(step(preset.out), step(hf.out));
}

}  // namespace
}  // namespace clustersim
