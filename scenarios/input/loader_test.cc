#include "scenarios/input/loader.h"

#include <string>

#include "gtest/gtest.h"

namespace clustersim::scenarios {
namespace {

TEST(LoaderTest, ParsesTextFormat) {
  absl::StatusOr<config::Scenario> s = ParseScenarioText(R"pb(
    name: "t"
    cluster { gpu: "a100-sxm4-80gb" num_gpus: 8 }
    model { preset: "gpt-22b" }
    parallelism { tensor_model_parallel_size: 8 }
    training { micro_batch_size: 4 global_batch_size: 4 recompute_granularity: "full" }
  )pb",
                                                         "inline");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->cluster().num_gpus(), 8);
  EXPECT_TRUE(s->model().has_preset());
  EXPECT_FALSE(s->model().has_hidden_size());
}

TEST(LoaderTest, TextErrorsCarryLineAndColumn) {
  absl::StatusOr<config::Scenario> s =
      ParseScenarioText("name: \"x\"\ncluster { gpus: 3 }\n", "bad.textproto");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("bad.textproto: line 2, column"), std::string::npos)
      << s.status();
  EXPECT_NE(s.status().message().find("gpus"), std::string::npos);
}

TEST(LoaderTest, ParsesJson) {
  absl::StatusOr<config::Scenario> s = ParseScenarioJson(
      R"({"cluster": {"gpu": "h100-sxm5-80gb", "num_gpus": 16},
          "parallelism": {"tensor_model_parallel_size": 8}})",
      "inline.json");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->parallelism().tensor_model_parallel_size(), 8);
}

TEST(LoaderTest, JsonRejectsUnknownFields) {
  absl::StatusOr<config::Scenario> s = ParseScenarioJson(R"({"clutser": {}})", "x.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("x.json"), std::string::npos);
}

TEST(LoaderTest, MissingFileIsNotFound) {
  absl::StatusOr<config::Scenario> s = LoadScenarioFile("/nonexistent/none.textproto");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.status().message().find("/nonexistent/none.textproto"), std::string::npos);
}

TEST(LoaderTest, ShippedScenariosParse) {
  const char* dir = std::getenv("CLUSTERSIM_SOURCE_DIR");
  ASSERT_NE(dir, nullptr);
  for (const char* name : {"gpt-22b-a100.textproto", "llama2-7b-h100.json"}) {
    absl::StatusOr<config::Scenario> s =
        LoadScenarioFile(std::string(dir) + "/scenarios/examples/" + name);
    EXPECT_TRUE(s.ok()) << name << ": " << s.status();
  }
}

}  // namespace
}  // namespace clustersim::scenarios
