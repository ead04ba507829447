// The benchmark modes end to end (resolve, requests, runner) against
// hand-computable expectations.
#include "scenarios/serve/serve_mode.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/serve/serve_requests.h"
#include "scenarios/serve/serve_runner.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

// Llama 3 8B BF16 on one H100, the shipped serving example's deployment.
config::Scenario Base(std::string_view kind) {
  config::Scenario s;
  s.set_name("modes");
  s.mutable_cluster()->set_gpu("h100-sxm5-80gb");
  s.mutable_model()->set_preset("llama3-8b");
  config::InferenceWorkload* w = s.mutable_inference()->mutable_workload();
  w->set_kind(std::string(kind));
  if (kind != "trace") {
    w->mutable_prompt_length()->set_value(256);
    w->mutable_output_length()->set_value(32);
  }
  return s;
}

absl::StatusOr<config::ServeResult> Serve(const config::Scenario& s) {
  absl::StatusOr<ResolvedServe> r = ResolveServe(s);
  if (!r.ok()) return r.status();
  return RunServe(*r, {.curve = false});
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path =
      (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name)).string();
  std::ofstream(path) << text;
  return path;
}

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

// An offline run of `requests` requests whose lengths come from `path`.
config::Scenario OfflineFromLengthsFile(const std::string& path, int requests) {
  config::Scenario s = Base("offline");
  config::InferenceWorkload* w = s.mutable_inference()->mutable_workload();
  w->clear_prompt_length();
  w->clear_output_length();
  w->set_lengths_file(path);
  w->set_num_requests(requests);
  return s;
}

// A lengths file: an offline run of as many requests as samples serves each
// sample once with its own pair of lengths.
TEST(ServeModeTest, LengthsFileGivesEveryRequestASamplesLengths) {
  const std::string path =
      WriteTemp("lengths.csv", "input_length,output_length\n100,10\n200,20\n300,30\n700,5\n");
  config::Scenario s = OfflineFromLengthsFile(path, 4);
  absl::StatusOr<ResolvedServe> resolved = ResolveServe(s);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  // Memory is sized for the longest prompt plus the longest output (700 + 30).
  EXPECT_EQ(resolved->memory.sequence_length, 730);
  std::vector<strategies::ServingRequest> asked = ReplicaRequests(*resolved, 1 << 20).Asked();
  ASSERT_EQ(asked.size(), 4u);
  std::sort(asked.begin(), asked.end(),
            [](const auto& a, const auto& b) { return a.prompt_tokens < b.prompt_tokens; });
  const int64_t prompt[] = {100, 200, 300, 700}, output[] = {10, 20, 30, 5};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(asked[i].prompt_tokens, prompt[i]);
    EXPECT_EQ(asked[i].output_tokens, output[i]);
  }
  absl::StatusOr<config::ServeResult> r = RunServe(*resolved, {.curve = false});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR(r->output_tokens_per_s() * r->simulated_time_s(), 10 + 20 + 30 + 5, 1e-6);
  // With prompt_length, or for a trace, the file is refused naming the field.
  config::Scenario both = s;
  both.mutable_inference()->mutable_workload()->mutable_prompt_length()->set_value(8);
  EXPECT_THAT(ResolveServe(both).status().message(), HasSubstr("do not apply with lengths_file"));
  config::Scenario trace = Base("trace");
  trace.mutable_inference()->mutable_workload()->set_trace_file(
      WriteTemp("lengths-trace.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n0,300,20\n"));
  trace.mutable_inference()->mutable_workload()->set_lengths_file(path);
  EXPECT_THAT(std::string(ResolveServe(trace).status().message()),
              HasSubstr("lengths_file does not apply to kind \"trace\""));
  config::Scenario missing = s;
  missing.mutable_inference()->mutable_workload()->set_lengths_file("/nonexistent/l.csv");
  EXPECT_THAT(ResolveServe(missing).status().message(),
              HasSubstr("inference.workload.lengths_file=/nonexistent/l.csv"));
}

// output_tokens_mean scales a lengths file's outputs to the served model's
// mean (sizing memory for the scaled longest); without a lengths file, for a
// trace, or outside (0, 1e7] it is refused naming the field.
TEST(ServeModeTest, OutputTokensMeanScalesALengthsFilesOutputs) {
  const std::string path = WriteTemp("scaled.csv", "input_length,output_length\n100,10\n200,30\n");
  config::Scenario s = OfflineFromLengthsFile(path, 2);
  s.mutable_inference()->mutable_workload()->set_output_tokens_mean(40);  // the file's mean: 20
  absl::StatusOr<ResolvedServe> resolved = ResolveServe(s);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->memory.sequence_length, 200 + 60);
  std::vector<strategies::ServingRequest> asked = ReplicaRequests(*resolved, 1 << 20).Asked();
  ASSERT_EQ(asked.size(), 2u);
  std::sort(asked.begin(), asked.end(),
            [](const auto& a, const auto& b) { return a.prompt_tokens < b.prompt_tokens; });
  EXPECT_EQ(asked[0].output_tokens, 20);
  EXPECT_EQ(asked[1].output_tokens, 60);
  config::Scenario zero = s;
  zero.mutable_inference()->mutable_workload()->set_output_tokens_mean(0);
  EXPECT_THAT(std::string(ResolveServe(zero).status().message()),
              HasSubstr("inference.workload.output_tokens_mean"));
  config::Scenario no_file = Base("offline");
  no_file.mutable_inference()->mutable_workload()->set_output_tokens_mean(40);
  EXPECT_THAT(std::string(ResolveServe(no_file).status().message()),
              HasSubstr("set inference.workload.lengths_file"));
  config::Scenario trace = Base("trace");
  trace.mutable_inference()->mutable_workload()->set_trace_file(
      WriteTemp("scaled-trace.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n0,300,20\n"));
  trace.mutable_inference()->mutable_workload()->set_output_tokens_mean(40);
  EXPECT_THAT(std::string(ResolveServe(trace).status().message()),
              HasSubstr("output_tokens_mean does not apply to kind \"trace\""));
}

// A trace's arrivals are the file's times since its first record, scaled by
// trace_time_scale; its offered rate is records / span.
TEST(ServeModeTest, TraceReplaysTheFilesArrivals) {
  const std::string path = WriteTemp("replay.csv",
                                     "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                     "2024-05-10 00:00:10.0,300,20\n"
                                     "2024-05-10 00:00:10.5,400,30\n"
                                     "2024-05-10 00:00:10.5,500,40\n"
                                     "2024-05-10 00:00:12.0,600,50\n");
  config::Scenario s = Base("trace");
  s.mutable_inference()->mutable_workload()->set_trace_file(path);
  s.mutable_inference()->mutable_workload()->set_trace_time_scale(0.5);
  absl::StatusOr<ResolvedServe> resolved = ResolveServe(s);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  const std::vector<strategies::ServingRequest> asked =
      ReplicaRequests(*resolved, 1 << 20).Asked();
  ASSERT_EQ(asked.size(), 4u);
  const double expected_ms[] = {0, 250, 250, 1000};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(asked[i].arrival.ToSeconds() * 1e3, expected_ms[i], 1e-9) << i;
    EXPECT_EQ(asked[i].prompt_tokens, 300 + 100 * i);
    EXPECT_EQ(asked[i].output_tokens, 20 + 10 * i);
  }
  // The longest request (600 + 50) sizes memory.
  EXPECT_EQ(resolved->memory.sequence_length, 650);
  // Re-timed for the curve: the same order at a mean rate of 2 req/s.
  const std::vector<strategies::ServingRequest> slow = ReplicaRequests(*resolved, 1 << 20).At(2);
  EXPECT_NEAR(slow[3].arrival.ToSeconds(), 2.0, 1e-9);
  absl::StatusOr<config::ServeResult> r = RunServe(*resolved, {.curve = false});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->num_requests(), 4);
  EXPECT_NEAR(r->offered_request_rate_per_s(), 4.0, 1e-9);  // 4 records over 1 s
  // Two replicas: the first takes records 0 and 2.
  s.mutable_cluster()->set_num_gpus(2);
  resolved = ResolveServe(s);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  const std::vector<strategies::ServingRequest> share =
      ReplicaRequests(*resolved, 1 << 20).Asked();
  ASSERT_EQ(share.size(), 2u);
  EXPECT_EQ(share[1].prompt_tokens, 500);
  EXPECT_NEAR(share[1].arrival.ToSeconds(), 0.25, 1e-9);
  std::filesystem::remove(path);
}

// Prefix caching by hit rate: half of every 256-token prompt is cached, so
// the achieved rate is exactly 0.5 and the prefills are shorter.
TEST(ServeModeTest, PrefixHitRateIsReportedAndShortensPrefill) {
  config::Scenario s = Base("offline");
  s.mutable_inference()->mutable_workload()->set_num_requests(32);
  absl::StatusOr<config::ServeResult> none = Serve(s);
  s.mutable_inference()->set_prefix_cache_hit_rate(0.5);
  absl::StatusOr<config::ServeResult> half = Serve(s);
  ASSERT_TRUE(none.ok() && half.ok()) << none.status() << half.status();
  EXPECT_FALSE(none->has_prefix_cache_hit_rate());
  EXPECT_DOUBLE_EQ(half->prefix_cache_hit_rate(), 0.5);
  EXPECT_LT(half->ttft_ms().p50(), none->ttft_ms().p50());
}

// The LRU over hash_ids, by hand: prompts of 1024, 1536 and 1536 tokens with
// blocks [1 2], [1 2 3], [1 2 3] hit 0, 2 and 3 blocks of 512 tokens; the
// last is capped at its prompt - 1: (0 + 1024 + 1535) / 4096.
TEST(ServeModeTest, LruPrefixCacheHitsComeFromTheTraceHistory) {
  const std::string path = WriteTemp(
      "lru.jsonl",
      "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 8, \"hash_ids\": [1, 2]}\n"
      "{\"timestamp\": 500, \"input_length\": 1536, \"output_length\": 8, \"hash_ids\": [1, 2, "
      "3]}\n"
      "{\"timestamp\": 900, \"input_length\": 1536, \"output_length\": 8, \"hash_ids\": [1, 2, "
      "3]}\n");
  config::Scenario s = Base("trace");
  s.mutable_inference()->mutable_workload()->set_trace_file(path);
  s.mutable_inference()->set_enable_prefix_caching(true);
  absl::StatusOr<config::ServeResult> r = Serve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->prefix_cache_hit_rate(), 2559.0 / 4096.0);
  EXPECT_EQ(r->scenario().inference().prefix_hash_block_tokens(), 512);
  std::filesystem::remove(path);
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

// A server run under llama2-70b's limits lasting `duration_s`.
std::function<void(config::InferenceConfig*)> ServerFor(double duration_s) {
  return [duration_s](config::InferenceConfig* i) {
    i->set_mlperf_benchmark("llama2-70b");
    i->mutable_workload()->set_duration_s(duration_s);
  };
}

struct BadCase {
  const char* name;
  std::string kind;
  std::function<void(config::InferenceConfig*)> edit;
  std::string expected;
};

class ServeModeBadInputTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ServeModeBadInputTest, NamesTheFieldAndAFix) {
  config::Scenario s = Base(GetParam().kind);
  GetParam().edit(s.mutable_inference());
  absl::StatusOr<config::ServeResult> r = Serve(s);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().code(),
              ::testing::AnyOf(absl::StatusCode::kInvalidArgument, absl::StatusCode::kNotFound));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(GetParam().expected));
}

INSTANTIATE_TEST_SUITE_P(
    All, ServeModeBadInputTest,
    ::testing::Values(
        BadCase{"ServerWithoutTarget", "server", [](config::InferenceConfig*) {},
                "needs a latency target"},
        BadCase{"UnknownMlperf", "server",
                [](config::InferenceConfig* i) { i->set_mlperf_benchmark("gpt5"); },
                "inference.mlperf_benchmark=\"gpt5\" is not known; use one of llama2-70b"},
        BadCase{"ServerWithRate", "server",
                [](config::InferenceConfig* i) {
                  i->set_mlperf_benchmark("llama2-70b");
                  i->mutable_workload()->set_request_rate_per_s(3);
                },
                "request_rate_per_s does not apply to kind \"server\""},
        BadCase{"ServerZeroDuration", "server", ServerFor(0),
                "inference.workload.duration_s=0 must be > 0 and <= 86400"},
        BadCase{"ServerNegativeDuration", "server", ServerFor(-600),
                "inference.workload.duration_s=-600 must be > 0"},
        BadCase{"ServerAbsurdDuration", "server", ServerFor(1e9),
                "inference.workload.duration_s=1e+09 must be > 0 and <= 86400"},
        BadCase{"ServerNanDuration", "server", ServerFor(std::nan("")),
                "inference.workload.duration_s=nan"},
        BadCase{"DurationOnConcurrency", "concurrency",
                [](config::InferenceConfig* i) {
                  i->mutable_workload()->set_concurrency(2);
                  i->mutable_workload()->set_duration_s(60);
                },
                "inference.workload.duration_s does not apply to kind \"concurrency\""},
        BadCase{"OfflineZeroDuration", "offline",
                [](config::InferenceConfig* i) { i->mutable_workload()->set_duration_s(0); },
                "inference.workload.duration_s=0 must be > 0"},
        BadCase{"DurationOnPoisson", "poisson",
                [](config::InferenceConfig* i) {
                  i->mutable_workload()->set_request_rate_per_s(2);
                  i->mutable_workload()->set_duration_s(60);
                },
                "inference.workload.duration_s does not apply to kind \"poisson\""},
        BadCase{"ConcurrencyMissing", "concurrency", [](config::InferenceConfig*) {},
                "inference.workload.concurrency is required"},
        BadCase{"ConcurrencyZero", "concurrency",
                [](config::InferenceConfig* i) { i->mutable_workload()->set_concurrency(0); },
                "inference.workload.concurrency=0"},
        BadCase{"NegativeThinkTime", "concurrency",
                [](config::InferenceConfig* i) {
                  i->mutable_workload()->set_concurrency(2);
                  i->mutable_workload()->set_think_time_ms(-1);
                },
                "inference.workload.think_time_ms=-1"},
        BadCase{"NegativeWarmup", "concurrency",
                [](config::InferenceConfig* i) {
                  i->mutable_workload()->set_concurrency(2);
                  i->mutable_workload()->set_warmup_requests(-1);
                },
                "inference.workload.warmup_requests=-1"},
        BadCase{"WarmupOnOffline", "offline",
                [](config::InferenceConfig* i) { i->mutable_workload()->set_warmup_requests(4); },
                "inference.workload.warmup_requests does not apply to kind \"offline\""},
        BadCase{"WarmupOnPoisson", "poisson",
                [](config::InferenceConfig* i) { i->mutable_workload()->set_warmup_requests(4); },
                "inference.workload.warmup_requests does not apply to kind \"poisson\""},
        BadCase{"ConcurrencyOnPoisson", "offline",
                [](config::InferenceConfig* i) { i->mutable_workload()->set_concurrency(2); },
                "inference.workload.concurrency does not apply to kind \"offline\""},
        BadCase{"TraceMissingFile", "trace", [](config::InferenceConfig*) {},
                "inference.workload.trace_file is required"},
        BadCase{"TraceUnreadable", "trace",
                [](config::InferenceConfig* i) {
                  i->mutable_workload()->set_trace_file("/nonexistent/t.csv");
                },
                "inference.workload.trace_file=/nonexistent/t.csv"},
        BadCase{"TraceUnknownFormat", "trace",
                [](config::InferenceConfig* i) { i->mutable_workload()->set_trace_file("t.txt"); },
                "inference.workload.trace_format is required"},
        BadCase{"TraceZeroScale", "trace",
                [](config::InferenceConfig* i) {
                  i->mutable_workload()->set_trace_file("t.csv");
                  i->mutable_workload()->set_trace_time_scale(0);
                },
                "inference.workload.trace_time_scale=0"},
        BadCase{"HitRateAboveOne", "offline",
                [](config::InferenceConfig* i) { i->set_prefix_cache_hit_rate(1.5); },
                "inference.prefix_cache_hit_rate=1.5 must be in [0, 1]"},
        BadCase{"LruWithoutHashIds", "offline",
                [](config::InferenceConfig* i) { i->set_enable_prefix_caching(true); },
                "inference.enable_prefix_caching needs requests with hash_ids"},
        BadCase{"UnknownKind", "closed-loop", [](config::InferenceConfig*) {},
                "use poisson, fixed-batch, offline, server, concurrency or trace"}),
    [](const ::testing::TestParamInfo<BadCase>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace clustersim::scenarios
