// File: cli/serve_flags.h
//
// Parses `clustersim serve` arguments (Boost.Program_options, vLLM-style flag
// names) into a scenario path, the deployment/scheduler/workload overrides and
// the output options, and applies the overrides to a loaded scenario.
// Program_options exceptions become INVALID_ARGUMENT statuses naming the flag.
//
// Example:
//   absl::StatusOr<ServeFlags> f = ParseServeFlags(args);   // args after "serve"
//   CLUSTERSIM_RETURN_IF_ERROR(ApplyServeFlags(*f, &scenario));
#ifndef CLUSTERSIM_CLI_SERVE_FLAGS_H_
#define CLUSTERSIM_CLI_SERVE_FLAGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "scenarios/proto/scenario.pb.h"

namespace clustersim::cli {

// The flags that override the scenario; each is unset unless given.
struct ServeValues {
  std::optional<std::string> model, model_config, gpu, node, weight_dtype, kv_dtype, price_source,
      trace_file, trace_format, mlperf, lengths_file, frontend;
  std::optional<int> num_gpus, tp, pp, ep, batch, num_requests, prompt, output, max_batch,
      max_tokens, group_size, block_size, concurrency, warmup_requests;
  std::optional<double> rate, memory_utilization, target_tpot, target_ttft, price, think_time,
      trace_time_scale, prefix_hit_rate, duration, output_tokens_mean, frontend_overhead;
  std::optional<uint64_t> seed;
  bool offline = false, server = false, prefix_caching = false;

  // The workload kinds the flags ask for (at most one may be given).
  std::vector<std::string> Kinds() const {
    std::vector<std::string> k;
    if (batch) k.push_back("--batch-size");
    if (rate) k.push_back("--request-rate");
    if (offline) k.push_back("--offline");
    if (server) k.push_back("--server");
    if (concurrency) k.push_back("--concurrency");
    if (trace_file) k.push_back("--trace-file");
    return k;
  }
  std::optional<std::string> speculative_method, draft_model;
  std::optional<int> speculative_tokens;
  std::optional<double> acceptance_rate;
};

// The deployment search's flags (inference.deployment_search).
struct SearchValues {
  bool search = false, aggregated_only = false;
  std::optional<std::string> gpus;
  std::optional<std::string> gpu_prices;
  std::optional<int> max_gpus, top, requests;
  bool Any() const {
    return search || aggregated_only || gpus || gpu_prices || max_gpus || top || requests;
  }
};

struct ServeFlags {
  std::string scenario_path;          // empty: the default scenario and flags only
  ServeValues values;
  SearchValues search;
  bool chunked_prefill = false;       // --chunked-prefill
  std::string format = "text";        // "text" | "json"
  std::string trace_path;             // --trace FILE
  std::string report_path;            // --report FILE.html
  bool no_curve = false;              // skip the latency-vs-throughput curve
  bool disagg_search = false;         // rank prefill:decode instance counts
  std::optional<int> disagg_search_gpus;
  bool help = false;
  std::string help_text;
};

// Parses `args` (after "serve"). With --help, returns at once with help set.
absl::StatusOr<ServeFlags> ParseServeFlags(const std::vector<std::string>& args);

// Writes the flags into `scenario`: a workload kind given as a flag replaces the
// scenario's kind-specific fields, a trace or lengths file its lengths; the
// search flags enable inference.deployment_search and refuse the dimensions
// the search chooses.
absl::Status ApplyServeFlags(const ServeFlags& flags, config::Scenario* scenario);

}  // namespace clustersim::cli

#endif  // CLUSTERSIM_CLI_SERVE_FLAGS_H_
