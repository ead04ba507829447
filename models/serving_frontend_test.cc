#include "models/serving_frontend.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::models {
namespace {

using ::testing::HasSubstr;

TEST(ServingFrontendTest, ShippedTableHasTheNamedFrontends) {
  absl::StatusOr<const ServingFrontend*> none = FindServingFrontend("none");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ((*none)->request_overhead_ms, 0);
  // genai-perf's GPT-2 tutorial: TTFT - one inter-token latency.
  absl::StatusOr<const ServingFrontend*> triton = FindServingFrontend("triton-trtllm");
  ASSERT_TRUE(triton.ok()) << triton.status();
  EXPECT_DOUBLE_EQ((*triton)->request_overhead_ms, 13.27 - 2.07);
  absl::StatusOr<const ServingFrontend*> openai = FindServingFrontend("openai-http");
  ASSERT_TRUE(openai.ok()) << openai.status();
  EXPECT_NEAR((*openai)->request_overhead_ms, 13.547 - 2.561, 0.005);
}

TEST(ServingFrontendTest, UnknownNameNamesTheFieldAndTheChoices) {
  absl::StatusOr<const ServingFrontend*> f = FindServingFrontend("grpc");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("inference.frontend.name='grpc'"));
  EXPECT_THAT(f.status().message(), HasSubstr("triton-trtllm"));
}

TEST(ServingFrontendTest, ParseRejectsRowsWithoutSourceOrWithBadValues) {
  EXPECT_THAT(ParseServingFrontends("frontend { name: 'a' request_overhead_ms: 1 }", "f")
                  .status()
                  .message(),
              HasSubstr("derivation and source"));
  EXPECT_THAT(ParseServingFrontends(
                  "frontend { name: 'a' request_overhead_ms: -1 derivation: 'd' source: 's' }",
                  "f")
                  .status()
                  .message(),
              HasSubstr("request_overhead_ms=-1"));
  EXPECT_THAT(ParseServingFrontends("frontend { name: 'a' derivation: 'd' source: 's' } "
                                    "frontend { name: 'a' derivation: 'd' source: 's' }",
                                    "f")
                  .status()
                  .message(),
              HasSubstr("duplicate name"));
  EXPECT_THAT(ParseServingFrontends("frontend { bogus: 1 }", "f").status().message(),
              HasSubstr("not a ServingFrontendFile"));
}

}  // namespace
}  // namespace clustersim::models
