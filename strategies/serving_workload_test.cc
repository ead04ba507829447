#include "strategies/serving_workload.h"

#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

ServingWorkload Poisson(double rate, int n) {
  ServingWorkload w;
  w.poisson = true;
  w.rate_per_s = rate;
  w.num_requests = n;
  w.seed = 7;
  w.prompt = {.kind = LengthSpec::Kind::kUniform, .min = 100, .max = 200};
  w.output = {.kind = LengthSpec::Kind::kNormal, .min = 1, .max = 500, .mean = 128, .stddev = 30};
  return w;
}

TEST(ServingWorkloadTest, PoissonArrivalsHaveTheAskedRate) {
  const std::vector<ServingRequest> r = GenerateRequests(Poisson(10, 20000), 10);
  ASSERT_EQ(r.size(), 20000u);
  // Mean gap 1/rate: 20000 gaps of 0.1 s, within ~3 standard errors (0.7%).
  EXPECT_NEAR(r.back().arrival.ToSeconds(), 2000, 2000 * 0.025);
  for (size_t i = 1; i < r.size(); ++i) ASSERT_GE(r[i].arrival, r[i - 1].arrival);
}

TEST(ServingWorkloadTest, LengthsStayInTheirRangeAndMean) {
  const std::vector<ServingRequest> r = GenerateRequests(Poisson(10, 20000), 10);
  double prompt = 0, output = 0;
  for (const ServingRequest& q : r) {
    ASSERT_GE(q.prompt_tokens, 100);
    ASSERT_LE(q.prompt_tokens, 200);
    ASSERT_GE(q.output_tokens, 1);
    ASSERT_LE(q.output_tokens, 500);
    prompt += q.prompt_tokens;
    output += q.output_tokens;
  }
  EXPECT_NEAR(prompt / r.size(), 150, 1.5);
  EXPECT_NEAR(output / r.size(), 128, 1.5);
}

TEST(ServingWorkloadTest, SameSeedSameRequestsAndRatesOnlyScaleGaps) {
  const ServingWorkload w = Poisson(10, 50);
  const std::vector<ServingRequest> a = GenerateRequests(w, 10), b = GenerateRequests(w, 10);
  const std::vector<ServingRequest> c = GenerateRequests(w, 20);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].arrival, b[i].arrival);
    EXPECT_EQ(a[i].prompt_tokens, c[i].prompt_tokens);
    EXPECT_NEAR(c[i].arrival.ToSeconds() * 2, a[i].arrival.ToSeconds(), 1e-9);
  }
  ServingWorkload other = w;
  other.seed = 8;
  EXPECT_NE(GenerateRequests(other, 10)[0].arrival, a[0].arrival);
  // Rate 0: a burst, everything at time zero.
  for (const ServingRequest& q : GenerateRequests(w, 0)) EXPECT_EQ(q.arrival, sim::Time::Zero());
}

TEST(ServingWorkloadTest, FixedBatchStartsTogether) {
  ServingWorkload w;
  w.batch_size = 8;
  w.prompt.value = 128;
  w.output.value = 64;
  const std::vector<ServingRequest> r = GenerateRequests(w, 0);
  ASSERT_EQ(r.size(), 8u);
  for (const ServingRequest& q : r) {
    EXPECT_EQ(q.arrival, sim::Time::Zero());
    EXPECT_EQ(q.prompt_tokens, 128);
  }
}

}  // namespace
}  // namespace clustersim::strategies
