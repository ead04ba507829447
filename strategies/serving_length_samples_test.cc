#include "strategies/serving_length_samples.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "strategies/serving_workload.h"

namespace clustersim::strategies {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(LengthSamplesTest, ReadsPairsInAnyColumnOrder) {
  absl::StatusOr<std::vector<LengthSample>> s =
      ParseLengthSamples("output_length,note,input_length\n7,a,100\n1,b,2\n", "d.csv");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].prompt_tokens, 100);
  EXPECT_EQ((*s)[0].output_tokens, 7);
  EXPECT_EQ((*s)[1].prompt_tokens, 2);
  EXPECT_EQ((*s)[1].output_tokens, 1);
}

// Scaling to a served model's mean output keeps each sample's share of it:
// outputs 100, 200, 300 (mean 200) to mean 300 are 150, 300, 450; a short
// output never rounds to 0, and the prompts stay.
TEST(LengthSamplesTest, ScalingOutputsMovesTheirMeanAndKeepsTheirSpread) {
  std::vector<LengthSample> s = {{10, 100}, {20, 200}, {30, 300}};
  ScaleOutputLengths(300, s);
  EXPECT_EQ(s[0].output_tokens, 150);
  EXPECT_EQ(s[1].output_tokens, 300);
  EXPECT_EQ(s[2].output_tokens, 450);
  EXPECT_EQ(s[2].prompt_tokens, 30);
  std::vector<LengthSample> tiny = {{5, 1}, {5, 999}};
  ScaleOutputLengths(1, tiny);
  EXPECT_EQ(tiny[0].output_tokens, 1);
  EXPECT_EQ(tiny[1].output_tokens, 2);
}

TEST(LengthSamplesTest, BadInputNamesTheLineAndColumn) {
  absl::StatusOr<std::vector<LengthSample>> zero =
      ParseLengthSamples("input_length,output_length\n5,5\n5,0\n", "d.csv");
  EXPECT_THAT(zero.status().message(),
              AllOf(HasSubstr("d.csv line 3"), HasSubstr("output_length '0'")));
  absl::StatusOr<std::vector<LengthSample>> missing =
      ParseLengthSamples("input_length,tokens\n5,5\n", "d.csv");
  EXPECT_THAT(missing.status().message(), HasSubstr("column 'output_length' is missing"));
  absl::StatusOr<std::vector<LengthSample>> empty =
      ParseLengthSamples("input_length,output_length\n", "d.csv");
  EXPECT_THAT(empty.status().message(), HasSubstr("no samples"));
  EXPECT_EQ(
      ReadLengthSamples("/nonexistent/d.csv", "inference.workload.lengths_file").status().code(),
      absl::StatusCode::kNotFound);
}

std::vector<std::pair<int64_t, int64_t>> Lengths(const std::vector<ServingRequest>& r) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const ServingRequest& q : r) out.emplace_back(q.prompt_tokens, q.output_tokens);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(LengthSamplesTest, AsManyRequestsAsSamplesTakeEverySampleOnceAndTheirPairs) {
  ServingWorkload w{.poisson = true, .num_requests = 4, .seed = 3};
  w.samples = {{10, 1}, {20, 2}, {30, 3}, {40, 4}};
  const std::vector<ServingRequest> r = GenerateRequests(w, 0);
  EXPECT_EQ(Lengths(r),
            (std::vector<std::pair<int64_t, int64_t>>{{10, 1}, {20, 2}, {30, 3}, {40, 4}}));
  // Twice as many requests: every sample twice.
  w.num_requests = 8;
  EXPECT_EQ(Lengths(GenerateRequests(w, 0)),
            (std::vector<std::pair<int64_t, int64_t>>{
                {10, 1}, {10, 1}, {20, 2}, {20, 2}, {30, 3}, {30, 3}, {40, 4}, {40, 4}}));
}

TEST(LengthSamplesTest, TheOrderIsASeededShuffle) {
  ServingWorkload w{.poisson = true, .num_requests = 64, .seed = 1};
  for (int i = 1; i <= 64; ++i) w.samples.push_back({i, 1});
  const std::vector<ServingRequest> a = GenerateRequests(w, 0);
  EXPECT_EQ(Lengths(a), Lengths(GenerateRequests(w, 0)));
  int in_file_order = 0;
  for (int i = 0; i < 64; ++i) in_file_order += a[i].prompt_tokens == i + 1 ? 1 : 0;
  EXPECT_LT(in_file_order, 64);  // not the file's order
  // The same seed gives the same order; another seed another one.
  const std::vector<ServingRequest> b = GenerateRequests(w, 0);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(a[i].prompt_tokens, b[i].prompt_tokens);
  w.seed = 2;
  const std::vector<ServingRequest> c = GenerateRequests(w, 0);
  int same = 0;
  for (int i = 0; i < 64; ++i) same += a[i].prompt_tokens == c[i].prompt_tokens ? 1 : 0;
  EXPECT_LT(same, 64);
}

}  // namespace
}  // namespace clustersim::strategies
