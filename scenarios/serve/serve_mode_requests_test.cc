// The requests a benchmark mode serves (serve_requests.h) end to end: lengths
// from a lengths file and their output scaling, a trace's arrivals, and
// prefix caching by hit rate or by the trace's hash ids.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/serve/serve_mode_testing.h"
#include "scenarios/serve/serve_requests.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;
using serve_mode_testing::Base;
using serve_mode_testing::Serve;
using serve_mode_testing::WriteTemp;

// One Mooncake-style trace line: arrival (ms), prompt and output lengths, and
// the prompt's hash blocks.
std::string HashLine(int timestamp_ms, int input_length, const std::string& hash_ids) {
  return absl::StrCat("{\"timestamp\": ", timestamp_ms, ", \"input_length\": ", input_length,
                      ", \"output_length\": 8, \"hash_ids\": [", hash_ids, "]}\n");
}

// A KV pool of 2^16 blocks of 16 tokens (2^20 tokens), no windowed layers.
strategies::SchedulerConfig Pool() {
  strategies::SchedulerConfig c;
  c.kv_blocks = 1 << 16;
  return c;
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
  std::vector<strategies::ServingRequest> asked = ReplicaRequests(*resolved, Pool()).Asked();
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
  std::vector<strategies::ServingRequest> asked = ReplicaRequests(*resolved, Pool()).Asked();
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
      ReplicaRequests(*resolved, Pool()).Asked();
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
  const std::vector<strategies::ServingRequest> slow = ReplicaRequests(*resolved, Pool()).At(2);
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
      ReplicaRequests(*resolved, Pool()).Asked();
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
  const std::string path =
      WriteTemp("lru.jsonl", HashLine(0, 1024, "1, 2") + HashLine(500, 1536, "1, 2, 3") +
                                 HashLine(900, 1536, "1, 2, 3"));
  config::Scenario s = Base("trace");
  s.mutable_inference()->mutable_workload()->set_trace_file(path);
  s.mutable_inference()->set_enable_prefix_caching(true);
  absl::StatusOr<config::ServeResult> r = Serve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->prefix_cache_hit_rate(), 2559.0 / 4096.0);
  EXPECT_EQ(r->scenario().inference().prefix_hash_block_tokens(), 512);
  std::filesystem::remove(path);
}

// The LRU's capacity is the pool in hash blocks: 64 blocks of 16 tokens hold
// two of 512 tokens, so the second [1 2 3] finds 1 and 2 (3 was evicted by
// 1, touched last). With half the KV bytes in 128-token windowed layers a
// hash block keeps 640 of 1,024 token-units and the pool holds three: the
// second prompt is cached whole, less its last token.
TEST(ServeModeTest, LruCapacityCountsWindowedLayersTailOnly) {
  const std::string path = WriteTemp(
      "lru-window.jsonl", HashLine(0, 1536, "1, 2, 3") + HashLine(500, 1536, "1, 2, 3"));
  config::Scenario s = Base("trace");
  s.mutable_inference()->mutable_workload()->set_trace_file(path);
  s.mutable_inference()->set_enable_prefix_caching(true);
  absl::StatusOr<ResolvedServe> resolved = ResolveServe(s);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  strategies::SchedulerConfig pool;
  pool.kv_blocks = 64;
  EXPECT_EQ(ReplicaRequests(*resolved, pool).Asked()[1].cached_tokens, 1024);
  pool.sliding_window = 128;
  pool.kv_window_weight = 1;
  EXPECT_EQ(ReplicaRequests(*resolved, pool).Asked()[1].cached_tokens, 1535);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace clustersim::scenarios
