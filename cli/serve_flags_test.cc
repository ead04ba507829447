#include "cli/serve_flags.h"

#include <string>

#include "gtest/gtest.h"

namespace clustersim::cli {
namespace {

TEST(ServeFlagsTest, MapsFlagsToInferenceFields) {
  absl::StatusOr<ServeFlags> f =
      ParseServeFlags({"s.textproto", "--tp", "4", "--kv-cache-dtype", "fp8", "--offline",
                       "--num-requests", "500", "--chunked-prefill", "--format", "json"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->scenario_path, "s.textproto");
  EXPECT_EQ(f->format, "json");
  config::Scenario s;
  ASSERT_TRUE(ApplyServeFlags(*f, &s).ok());
  EXPECT_EQ(s.inference().tensor_parallel_size(), 4);
  EXPECT_EQ(s.inference().kv_cache_dtype(), "fp8");
  EXPECT_TRUE(s.inference().chunked_prefill());
  EXPECT_EQ(s.inference().workload().kind(), "offline");
  EXPECT_EQ(s.inference().workload().num_requests(), 500);
  EXPECT_FALSE(s.inference().has_deployment_search());
}

TEST(ServeFlagsTest, FrontendFlagsSetTheRequestPath) {
  absl::StatusOr<ServeFlags> f =
      ParseServeFlags({"--frontend", "openai-http", "--frontend-overhead-ms", "4.5"});
  ASSERT_TRUE(f.ok()) << f.status();
  config::Scenario s;
  ASSERT_TRUE(ApplyServeFlags(*f, &s).ok());
  EXPECT_EQ(s.inference().frontend().name(), "openai-http");
  EXPECT_DOUBLE_EQ(s.inference().frontend().request_overhead_ms(), 4.5);
}

TEST(ServeFlagsTest, AWorkloadKindFlagReplacesTheScenariosKind) {
  config::Scenario s;
  config::InferenceWorkload* w = s.mutable_inference()->mutable_workload();
  w->set_kind("poisson");
  w->set_request_rate_per_s(3.0);
  w->set_duration_s(60);
  absl::StatusOr<ServeFlags> f = ParseServeFlags({"--concurrency", "8"});
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_TRUE(ApplyServeFlags(*f, &s).ok());
  EXPECT_EQ(s.inference().workload().kind(), "concurrency");
  EXPECT_EQ(s.inference().workload().concurrency(), 8);
  EXPECT_FALSE(s.inference().workload().has_request_rate_per_s());
  EXPECT_FALSE(s.inference().workload().has_duration_s());
}

TEST(ServeFlagsTest, TwoWorkloadKindsAreRefused) {
  absl::StatusOr<ServeFlags> f = ParseServeFlags({"--offline", "--request-rate", "2"});
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("--request-rate, --offline"), std::string::npos)
      << f.status();
}

TEST(ServeFlagsTest, SearchFlagsEnableTheSearchAndRefuseWhatItChooses) {
  absl::StatusOr<ServeFlags> f = ParseServeFlags(
      {"--search", "--search-gpus", "h100-sxm5-80gb,h200-sxm-141gb", "--search-gpu-prices",
       "h100-sxm5-80gb=2.49", "--search-max-gpus", "8"});
  ASSERT_TRUE(f.ok()) << f.status();
  config::Scenario s;
  ASSERT_TRUE(ApplyServeFlags(*f, &s).ok());
  const config::DeploymentSearchConfig& ds = s.inference().deployment_search();
  EXPECT_TRUE(ds.enabled());
  ASSERT_EQ(ds.gpus_size(), 2);
  EXPECT_EQ(ds.gpus(1), "h200-sxm-141gb");
  EXPECT_DOUBLE_EQ(ds.gpu_prices().at("h100-sxm5-80gb"), 2.49);
  EXPECT_EQ(ds.max_gpus(), 8);

  f = ParseServeFlags({"--search", "--tp", "2"});
  ASSERT_TRUE(f.ok()) << f.status();
  absl::Status st = ApplyServeFlags(*f, &s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--tp is chosen by --search"), std::string::npos) << st;

  f = ParseServeFlags({"--search", "--search-gpu-prices", "h100=cheap"});
  ASSERT_TRUE(f.ok()) << f.status();
  st = ApplyServeFlags(*f, &s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("is not NAME=USD"), std::string::npos) << st;
}

TEST(ServeFlagsTest, HelpSkipsTheChecksAndCarriesTheText) {
  absl::StatusOr<ServeFlags> f = ParseServeFlags({"--help", "--format", "xml"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->help);
  EXPECT_NE(f->help_text.find("usage: clustersim serve [SCENARIO] [flags]"), std::string::npos);
  EXPECT_NE(f->help_text.find("--acceptance-rate"), std::string::npos);
  EXPECT_FALSE(ParseServeFlags({"--format", "xml"}).ok());
  EXPECT_FALSE(ParseServeFlags({"--tp", "two"}).ok());
}

}  // namespace
}  // namespace clustersim::cli
