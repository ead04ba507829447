// --recompute-method and --recompute-num-layers through the clustersim binary:
// both reach the resolved scenario, block recompute runs between no recompute
// and full recompute, and bad input exits 2 naming the field.
#include <string>

#include "absl/strings/match.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "scenarios/proto/result.pb.h"
#include "tests/cli_testing.h"

namespace clustersim {
namespace {

class RecomputeMethodCliTest : public CliTest {
 protected:
  // GPT 22B on 8 A100s, tp 8 (the shipped example), with `flags`.
  Outcome RunExample(const std::string& flags) {
    return Run("run " + src_ + "/scenarios/examples/gpt-22b-a100.textproto --format json " +
               flags);
  }
  config::Result Result(const std::string& flags) {
    const Outcome o = RunExample(flags);
    EXPECT_EQ(o.code, 0) << o.err;
    config::Result r;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(o.out, &r).ok()) << o.out;
    return r;
  }
};

TEST_F(RecomputeMethodCliTest, BlockRunsBetweenNoneAndFull) {
  const config::Result full = Result("");
  const config::Result none = Result("--recompute-granularity none");
  const config::Result block =
      Result("--recompute-method block --recompute-num-layers 24");  // of 48 layers
  EXPECT_EQ(block.scenario().training().recompute_method(), "block");
  EXPECT_EQ(block.scenario().training().recompute_num_layers(), 24);
  EXPECT_FALSE(full.scenario().training().has_recompute_method());
  EXPECT_LT(none.step_time_s(), block.step_time_s());
  EXPECT_LT(block.step_time_s(), full.step_time_s());
  EXPECT_LT(full.memory_breakdown_gib().activations(), block.memory_breakdown_gib().activations());
  EXPECT_LT(block.memory_breakdown_gib().activations(), none.memory_breakdown_gib().activations());
  // Every layer in the block: full recompute.
  const config::Result all = Result("--recompute-method block --recompute-num-layers 48");
  EXPECT_EQ(all.step_time_s(), full.step_time_s());
  EXPECT_EQ(all.hardware_tflops_per_gpu(), full.hardware_tflops_per_gpu());
}

TEST_F(RecomputeMethodCliTest, BadInputNamesTheField) {
  for (const auto& [flags, field] :
       {std::pair<std::string, std::string>{"--recompute-method blok", "recompute_method"},
        {"--recompute-method block --recompute-num-layers 0", "recompute_num_layers"},
        {"--recompute-granularity selective --recompute-num-layers 2", "recompute_num_layers"},
        {"--recompute-granularity none --recompute-method block", "recompute_method"}}) {
    const Outcome o = RunExample(flags);
    EXPECT_EQ(o.code, 2) << flags;
    EXPECT_TRUE(absl::StrContains(o.err, "training." + field)) << flags << ": " << o.err;
  }
}

}  // namespace
}  // namespace clustersim
