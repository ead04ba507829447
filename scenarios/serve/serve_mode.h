// File: scenarios/serve/serve_mode.h
//
// The benchmark modes real deployments publish, as `inference.workload.kind`
// (scenarios/proto/inference.proto), resolved for `clustersim serve`:
//
// - "offline" (MLPerf Inference Offline, trtllm-bench throughput): every
//   request is queued at time zero; the headline is output tokens/s and
//   requests/s, the replica's best batching. With duration_s the queue is
//   as long as MLPerf's Offline query (serve_requests.h): loadgen queues
//   max(min_query_count, 1.1 x min_duration x expected QPS) samples, and a
//   valid run lasts at least min_duration (600 s).
// - "server" (MLPerf Inference Server): Poisson arrivals; the headline is
//   the highest request rate whose p99 TTFT and p99 TPOT meet the targets and
//   pass LoadGen's early stopping (loadgen_early_stopping.h), found by the
//   runner's bisection (serve_runner.h), and the latencies are
//   reported at that rate. The targets may be stated as an MLPerf benchmark
//   name (`inference.mlperf_benchmark`), whose limits come from
//   mlcommons/inference loadgen/mlperf.conf (commit 001712e9, 2025):
//     benchmark                  p99 TTFT   p99 TPOT
//     llama2-70b                 2000 ms    200 ms
//     llama2-70b-interactive      450 ms     40 ms
//     mixtral-8x7b               2000 ms    200 ms
//     llama3_1-405b              6000 ms    175 ms
//     llama3_1-405b-interactive  4500 ms     80 ms
//     llama3_1-8b                2000 ms    100 ms
//     llama3_1-8b-interactive     500 ms     30 ms
//     deepseek-r1                2000 ms     80 ms
//     deepseek-r1-interactive    1500 ms     15 ms
//   Each run lasts as long as MLPerf's (loadgen issues queries until both
//   min_duration and min_query_count are met): duration_s of arrivals
//   (default 600 s, mlperf.conf's *.Server.min_duration), at least
//   num_requests requests (serve_requests.h).
// - "concurrency" (benchmark_serving.py --max-concurrency, genai-perf and
//   trtllm-bench --concurrency): N clients in a closed loop
//   (strategies/serving_closed_loop.h), optional think time. With
//   warmup_requests W > 0 (AIPerf / genai-perf --warmup-request-count) the
//   clients send W warm-up requests straight before the num_requests measured
//   ones; only the measured requests are reported.
// - "trace": arrival times and lengths replayed from an Azure LLM inference
//   CSV or a Mooncake JSONL file (strategies/serving_trace_reader.h),
//   optionally time-scaled and cut to its first num_requests records.
//
// Prefix caching (strategies/serving_prefix_cache.h) applies to every kind:
// a hit rate (`inference.prefix_cache_hit_rate`), or an LRU over a trace's
// hash_ids (`inference.enable_prefix_caching`).
//
// Defaults: num_requests 200 (offline, server, concurrency; a trace keeps all
// its records); server duration 600 s; think time 0; trace format from the
// file's extension; time scale 1; hash block 512 tokens.
//
// Example:
//   ServeMode mode;
//   absl::Status s = ResolveServeMode(scenario.inference(), echo.mutable_inference(), &mode,
//                                     &workload);
#ifndef CLUSTERSIM_SCENARIOS_SERVE_SERVE_MODE_H_
#define CLUSTERSIM_SCENARIOS_SERVE_SERVE_MODE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "scenarios/proto/inference.pb.h"
#include "scenarios/proto/serve_result.pb.h"
#include "sim/units.h"
#include "strategies/serving_trace_reader.h"
#include "strategies/serving_workload.h"

namespace clustersim::scenarios {

struct ServeMode {
  // "fixed-batch" | "poisson" | "offline" | "server" | "concurrency" | "trace"
  std::string kind;
  int concurrency = 0;       // "concurrency"
  sim::Duration think_time;  // "concurrency"
  // "concurrency": requests sent before the measured ones (0: none).
  int warmup_requests = 0;
  strategies::RequestTrace trace;  // "trace": the deployment's requests
  std::optional<double> prefix_hit_rate;
  bool prefix_lru = false;            // LRU over trace.hash_ids
  int64_t prefix_block_tokens = 512;  // tokens per hash id
  std::string mlperf_benchmark;       // empty: none
  // "server": seconds of arrivals per run; "offline": the run's length (0:
  // exactly num_requests).
  double duration_s = 0;
  double mlperf_ttft_ms = 0, mlperf_tpot_ms = 0;

  bool prefix_caching() const { return prefix_hit_rate.has_value() || prefix_lru; }
};

// True for the kinds this file resolves (offline, server, concurrency, trace).
bool IsBenchmarkMode(std::string_view kind);

// Resolves a benchmark mode's workload fields into `mode` and `workload`
// (num_requests; for a trace the longest prompt and output as fixed lengths,
// which size memory and the token budget) and echoes them. REQUIRES:
// IsBenchmarkMode(kind).
absl::Status ResolveBenchmarkWorkload(const config::InferenceWorkload& w, std::string_view kind,
                                      config::InferenceWorkload* echo, ServeMode* mode,
                                      strategies::ServingWorkload* workload);

// Resolves the fields every kind shares: prefix caching and the MLPerf
// benchmark (its limits in mode->mlperf_*_ms). Errors name the field: a hit
// rate outside [0, 1], LRU prefix caching without hash ids, both at once, an
// unknown benchmark (listing the known ones), concurrency or trace fields on
// another kind.
absl::Status ResolveServeModeOptions(const config::InferenceConfig& inf,
                                     config::InferenceConfig* echo, ServeMode* mode);

// The mode's headline in words, from a filled result (throughputs, the
// sustainable rate and its targets). REQUIRES: IsBenchmarkMode(mode.kind).
std::string ModeHeadline(const ServeMode& mode, const config::ServeResult& r);

// Why a mode's run cannot be saturated (it has no offered rate of its own):
// offline, server, concurrency, and a trace whose records all arrive at once.
std::string ModeSaturation(const ServeMode& mode);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_SERVE_SERVE_MODE_H_
