#include "cli/run_flags.h"

#include "gtest/gtest.h"

namespace clustersim::cli {
namespace {

TEST(RunFlagsTest, MapsMegatronFlagsToScenarioFields) {
  absl::StatusOr<RunFlags> f = ParseRunFlags(
      {"s.textproto", "--tensor-model-parallel-size", "8", "--seq-length", "4096",
       "--sequence-parallel", "--recompute-granularity", "selective", "--gpu", "h100-sxm5-80gb",
       "--format", "json", "--attention", "unfused", "--precision", "fp8", "--fp8-recipe",
       "current"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->scenario_path, "s.textproto");
  EXPECT_EQ(f->overrides.parallelism().tensor_model_parallel_size(), 8);
  EXPECT_TRUE(f->overrides.parallelism().sequence_parallel());
  EXPECT_EQ(f->overrides.model().seq_length(), 4096);
  EXPECT_EQ(f->overrides.training().recompute_granularity(), "selective");
  EXPECT_EQ(f->overrides.cluster().gpu(), "h100-sxm5-80gb");
  EXPECT_EQ(f->format, "json");
  EXPECT_EQ(f->overrides.training().attention(), "unfused");
  EXPECT_EQ(f->overrides.training().precision(), "fp8");
  EXPECT_EQ(f->overrides.training().fp8_recipe(), "current");
}

TEST(RunFlagsTest, UnsetFlagsLeaveFieldsUnset) {
  absl::StatusOr<RunFlags> f = ParseRunFlags({"--num-layers", "2"});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->overrides.model().has_num_layers());
  EXPECT_FALSE(f->overrides.model().has_hidden_size());
  EXPECT_FALSE(f->overrides.parallelism().has_sequence_parallel());
  EXPECT_FALSE(f->overrides.cluster().has_gpu());
}

TEST(RunFlagsTest, BadValuesAreErrorsNotExceptions) {
  absl::StatusOr<RunFlags> f = ParseRunFlags({"--num-layers", "many"});
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("num-layers"), std::string::npos) << f.status();
  EXPECT_FALSE(ParseRunFlags({"--no-such-flag"}).ok());
  EXPECT_FALSE(ParseRunFlags({"--format", "xml"}).ok());
}

}  // namespace
}  // namespace clustersim::cli
