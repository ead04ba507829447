// The benchmark modes end to end (resolve, requests, runner) against
// hand-computable expectations: offline, concurrency with warm-up, and the
// server search at MLPerf's limits.
#include "scenarios/serve/serve_mode.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/serve/serve_mode_testing.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;
using serve_mode_testing::Base;
using serve_mode_testing::Serve;

// Offline: every request at time zero is the capacity measurement itself.
TEST(ServeModeTest, OfflineThroughputIsTheBurstCapacity) {
  config::Scenario s = Base("offline");
  s.mutable_inference()->mutable_workload()->set_num_requests(64);
  absl::StatusOr<config::ServeResult> r = Serve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->workload(), "offline");
  EXPECT_EQ(r->num_requests(), 64);
  EXPECT_EQ(r->offered_request_rate_per_s(), 0);
  EXPECT_DOUBLE_EQ(r->requests_per_s(), r->capacity_requests_per_s());
  EXPECT_DOUBLE_EQ(r->output_tokens_per_s(), r->capacity_output_tokens_per_s());
  EXPECT_NEAR(r->output_tokens_per_s() * r->simulated_time_s(), 64 * 32, 1e-6);
  EXPECT_THAT(r->headline(), HasSubstr("queued at time zero"));
  EXPECT_FALSE(r->saturated());
}

// Offline with a duration (MLPerf's Offline query): at least num_requests,
// and enough queued that the run lasts the duration; the longer queue keeps
// the batch full for longer, so the throughput is no lower than the short
// run's.
TEST(ServeModeTest, OfflineWithADurationQueuesEnoughForIt) {
  config::Scenario s = Base("offline");
  s.mutable_inference()->mutable_workload()->set_num_requests(64);
  absl::StatusOr<config::ServeResult> short_run = Serve(s);
  ASSERT_TRUE(short_run.ok()) << short_run.status();
  ASSERT_LT(short_run->simulated_time_s(), 20);
  s.mutable_inference()->mutable_workload()->set_duration_s(20);
  absl::StatusOr<config::ServeResult> r = Serve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->num_requests(), 64);
  EXPECT_GE(r->simulated_time_s(), 20);
  EXPECT_DOUBLE_EQ(r->output_tokens_per_s(), r->capacity_output_tokens_per_s());
  EXPECT_NEAR(r->output_tokens_per_s() * r->simulated_time_s(), r->num_requests() * 32, 1e-3);
  EXPECT_GE(r->output_tokens_per_s(), short_run->output_tokens_per_s());
  EXPECT_EQ(r->scenario().inference().workload().duration_s(), 20);
}

// One client: the requests run back to back, so the run's time is the sum of
// their end-to-end latencies, and every request sees the same latency.
TEST(ServeModeTest, ConcurrencyOneIsSequential) {
  config::Scenario s = Base("concurrency");
  s.mutable_inference()->mutable_workload()->set_concurrency(1);
  s.mutable_inference()->mutable_workload()->set_num_requests(10);
  absl::StatusOr<config::ServeResult> r = Serve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->concurrency(), 1);
  EXPECT_NEAR(r->e2e_ms().mean() * 10, r->simulated_time_s() * 1e3, 1e-6);
  EXPECT_NEAR(r->e2e_ms().max(), r->e2e_ms().mean(), 1e-6);
  EXPECT_EQ(r->peak_running(), 1);
  // More clients batch more: higher throughput, slower tokens.
  s.mutable_inference()->mutable_workload()->set_concurrency(8);
  absl::StatusOr<config::ServeResult> eight = Serve(s);
  ASSERT_TRUE(eight.ok()) << eight.status();
  EXPECT_EQ(eight->peak_running(), 8);
  EXPECT_GT(eight->output_tokens_per_s(), 3 * r->output_tokens_per_s());
  EXPECT_GT(eight->tpot_ms().p50(), r->tpot_ms().p50());
  EXPECT_THAT(eight->headline(), HasSubstr("at 8 clients"));
}

// Warm-up requests load the server but are not measured. One client runs
// identical requests back to back, so the measured time is that of the 10
// measured requests alone (not 15), each with the cold run's latencies; with
// 8 clients the measured count and tokens are the asked ones.
TEST(ServeModeTest, WarmupRequestsAreSentFirstAndNotMeasured) {
  config::Scenario s = Base("concurrency");
  config::InferenceWorkload* w = s.mutable_inference()->mutable_workload();
  w->set_concurrency(1);
  w->set_num_requests(10);
  absl::StatusOr<config::ServeResult> cold = Serve(s);
  ASSERT_TRUE(cold.ok()) << cold.status();
  w->set_warmup_requests(5);
  absl::StatusOr<config::ServeResult> warm = Serve(s);
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_EQ(warm->num_requests(), 10);
  EXPECT_EQ(warm->scenario().inference().workload().warmup_requests(), 5);
  EXPECT_NEAR(warm->simulated_time_s(), cold->simulated_time_s(), 1e-9);
  EXPECT_NEAR(warm->e2e_ms().mean() * 10, warm->simulated_time_s() * 1e3, 1e-6);
  EXPECT_NEAR(warm->ttft_ms().mean(), cold->ttft_ms().mean(), 1e-9);
  w->set_concurrency(8);
  w->set_num_requests(16);
  w->set_warmup_requests(16);
  absl::StatusOr<config::ServeResult> eight = Serve(s);
  ASSERT_TRUE(eight.ok()) << eight.status();
  EXPECT_EQ(eight->num_requests(), 16);
  EXPECT_NEAR(eight->output_tokens_per_s() * eight->simulated_time_s(), 16 * 32, 1e-6);
  // 0 warm-up requests is the default run.
  w->set_warmup_requests(0);
  absl::StatusOr<config::ServeResult> zero = Serve(s);
  w->clear_warmup_requests();
  absl::StatusOr<config::ServeResult> unset = Serve(s);
  ASSERT_TRUE(zero.ok() && unset.ok());
  EXPECT_EQ(zero->num_requests(), 16);
  EXPECT_DOUBLE_EQ(zero->ttft_ms().mean(), unset->ttft_ms().mean());
  EXPECT_DOUBLE_EQ(zero->output_tokens_per_s(), unset->output_tokens_per_s());
}

// Server: the headline rate is the sustainable rate, the run happens at it,
// and MLPerf's llama3_1-8b limits (2000 ms TTFT, 100 ms TPOT, loadgen
// mlperf.conf) are the targets; an explicit target overrides its half.
TEST(ServeModeTest, ServerRunsAtTheHighestRateMeetingMlperfLimits) {
  config::Scenario s = Base("server");
  s.mutable_inference()->set_mlperf_benchmark("llama3_1-8b");
  s.mutable_inference()->mutable_workload()->set_duration_s(20);  // MLPerf's 600 s: slower
  s.mutable_inference()->set_target_time_per_output_token_ms(12);
  absl::StatusOr<config::ServeResult> r = Serve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->sustainable().target_ttft_ms(), 2000);
  EXPECT_EQ(r->sustainable().target_tpot_ms(), 12);
  EXPECT_EQ(r->mlperf_benchmark(), "llama3_1-8b");
  ASSERT_EQ(r->sustainable().status(), "found");
  EXPECT_EQ(r->offered_request_rate_per_s(), r->sustainable().max_request_rate_per_s());
  EXPECT_LE(r->tpot_ms().p99(), 12);
  EXPECT_LE(r->ttft_ms().p99(), 2000);
  EXPECT_DOUBLE_EQ(r->output_tokens_per_s(), r->sustainable().output_tokens_per_s());
  EXPECT_THAT(r->headline(), HasSubstr("MLPerf llama3_1-8b"));
}

// Server: a run issues rate x duration_s requests, as MLPerf's loadgen issues
// queries until min_duration has passed, and at least num_requests (its
// min_query_count); every request counts, so the last arrival is near the
// end of the duration. The rate found is the edge of the limits (p99 TTFT <=
// 2000 ms and p99 TPOT <= 100 ms for llama3_1-8b): the same requests arriving
// 10% faster over the same 30 s miss at least one of them.
TEST(ServeModeTest, ServerRunLastsTheDurationAtTheEdgeOfTheP99Limits) {
  config::Scenario s = Base("server");
  s.mutable_inference()->set_mlperf_benchmark("llama3_1-8b");
  s.mutable_inference()->mutable_workload()->set_duration_s(30);
  absl::StatusOr<config::ServeResult> r = Serve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->sustainable().status(), "found");
  const double rate = r->offered_request_rate_per_s();
  EXPECT_EQ(r->num_requests(), static_cast<int>(std::ceil(rate * 30)));
  EXPECT_GT(r->num_requests(), 200);  // the duration, not the minimum, sets the count
  EXPECT_GT(r->simulated_time_s(), 27);
  EXPECT_EQ(r->scenario().inference().workload().duration_s(), 30);
  EXPECT_LE(r->ttft_ms().p99(), 2000);
  EXPECT_LE(r->tpot_ms().p99(), 100);
  const double faster = 1.1 * rate;
  config::Scenario p = Base("poisson");
  p.mutable_inference()->mutable_workload()->set_request_rate_per_s(faster);
  p.mutable_inference()->mutable_workload()->set_num_requests(
      static_cast<int>(std::ceil(faster * 30)));
  absl::StatusOr<config::ServeResult> q = Serve(p);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_TRUE(q->ttft_ms().p99() > 2000 || q->tpot_ms().p99() > 100)
      << "p99 TTFT " << q->ttft_ms().p99() << " ms, p99 TPOT " << q->tpot_ms().p99() << " ms";
  // Too short a duration for the rate: the minimum query count (default 200).
  s.mutable_inference()->mutable_workload()->set_duration_s(0.01);
  absl::StatusOr<config::ServeResult> short_run = Serve(s);
  ASSERT_TRUE(short_run.ok()) << short_run.status();
  EXPECT_EQ(short_run->num_requests(), 200);
  // Unset, the duration is MLPerf's 600 s.
  absl::StatusOr<ResolvedServe> resolved = ResolveServe(Base("offline"));
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_FALSE(resolved->echo.inference().workload().has_duration_s());
  config::Scenario unset = Base("server");
  unset.mutable_inference()->set_mlperf_benchmark("llama3_1-8b");
  resolved = ResolveServe(unset);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->mode.duration_s, 600);
}

// The kinds that existed before the benchmark modes set none of the new
// result fields, so their outputs keep their bytes.
TEST(ServeModeTest, OtherKindsSetNoNewFields) {
  config::Scenario s = Base("poisson");
  s.mutable_inference()->mutable_workload()->set_request_rate_per_s(5);
  s.mutable_inference()->mutable_workload()->set_num_requests(20);
  absl::StatusOr<config::ServeResult> r = Serve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->has_headline());
  EXPECT_FALSE(r->has_concurrency());
  EXPECT_FALSE(r->has_prefix_cache_hit_rate());
  EXPECT_FALSE(r->has_mlperf_benchmark());
}

}  // namespace
}  // namespace clustersim::scenarios
