// Bad benchmark-mode input to `clustersim serve`: each case is refused with
// an error that names the inference field and a fix.
#include <functional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/serve/serve_mode_testing.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;
using serve_mode_testing::Base;
using serve_mode_testing::Serve;

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
        BadCase{"UnknownKvAccounting", "offline",
                [](config::InferenceConfig* i) { i->set_kv_cache_accounting("vllm-v0"); },
                "inference.kv_cache_accounting='vllm-v0' is not an engine accounting: use "
                "\"vllm-v1\""},
        BadCase{"KvAccountingWithTrtllmFraction", "offline",
                [](config::InferenceConfig* i) {
                  i->set_kv_cache_accounting("sglang");
                  i->set_kv_cache_free_memory_fraction(0.9);
                },
                "kv_cache_free_memory_fraction (TensorRT-LLM's accounting) both size the KV "
                "cache; keep one"},
        BadCase{"UnknownKind", "closed-loop", [](config::InferenceConfig*) {},
                "use poisson, fixed-batch, offline, server, concurrency or trace"}),
    [](const ::testing::TestParamInfo<BadCase>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace clustersim::scenarios
