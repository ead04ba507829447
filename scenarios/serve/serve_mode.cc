#include "scenarios/serve/serve_mode.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace clustersim::scenarios {
namespace {

// MLPerf Inference server-scenario limits on p99 TTFT and p99 TPOT, in ms:
// mlcommons/inference loadgen/mlperf.conf (commit 001712e9daf80386e0dda43f97b8f36981d792c4),
// keys MODEL.Server.ttft_latency and MODEL.Server.tpot_latency.
struct MlperfLimits {
  std::string_view name;
  double ttft_ms, tpot_ms;
};
constexpr MlperfLimits kMlperf[] = {
    {"llama2-70b", 2000, 200},
    {"llama2-70b-interactive", 450, 40},
    {"mixtral-8x7b", 2000, 200},
    {"llama3_1-405b", 6000, 175},
    {"llama3_1-405b-interactive", 4500, 80},
    {"llama3_1-8b", 2000, 100},
    {"llama3_1-8b-interactive", 500, 30},
    {"deepseek-r1", 2000, 80},
    {"deepseek-r1-interactive", 1500, 15},
};

// MLPerf Inference's Server min_duration (loadgen/mlperf.conf,
// *.Server.min_duration = 600000 ms), the default length of a "server" run,
// and the longest duration accepted (a day).
constexpr double kMlperfServerDurationS = 600;
constexpr double kMaxDurationS = 86'400;

// Longest trace a scaled replay may span: simulated time is int64
// picoseconds (about ±106 days, sim/units.h).
constexpr double kMaxTraceSpanS = 100.0 * 86'400;

absl::Status Bad(const std::string& field, const auto& value, const std::string& rule) {
  return absl::InvalidArgumentError(absl::StrCat(field, "=", value, " ", rule));
}

absl::Status NotForKind(const std::string& field, std::string_view kind, const std::string& fix) {
  return absl::InvalidArgumentError(absl::StrCat(
      "inference.workload.", field, " does not apply to kind \"", std::string(kind), "\"; ", fix));
}

absl::Status ResolveTrace(const config::InferenceWorkload& w, config::InferenceWorkload* echo,
                          ServeMode* mode, strategies::ServingWorkload* workload) {
  if (!w.has_trace_file() || w.trace_file().empty()) {
    return absl::InvalidArgumentError(
        "inference.workload.trace_file is required for kind \"trace\"; name an Azure CSV or a "
        "Mooncake JSONL file (e.g. scenarios/examples/serve-modes/azure-sample.csv)");
  }
  const std::string& path = w.trace_file();
  std::string format = w.trace_format();
  if (!w.has_trace_format()) {
    if (absl::EndsWith(path, ".csv")) {
      format = "azure";
    } else if (absl::EndsWith(path, ".jsonl") || absl::EndsWith(path, ".json")) {
      format = "mooncake";
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("inference.workload.trace_format is required for trace_file=", path,
                       " (no .csv or .jsonl extension); set \"azure\" or \"mooncake\""));
    }
  }
  if (format != "azure" && format != "mooncake") {
    return absl::InvalidArgumentError(absl::StrCat("inference.workload.trace_format=\"", format,
                                                   "\" is not known; use azure or mooncake"));
  }
  const double scale = w.has_trace_time_scale() ? w.trace_time_scale() : 1.0;
  if (!(scale > 0 && scale <= 1e6)) {
    return Bad("inference.workload.trace_time_scale", scale,
               "must be > 0 and <= 1000000 (0.5 replays the trace twice as fast)");
  }
  if (w.has_num_requests() && (w.num_requests() < 1 || w.num_requests() > 10'000'000)) {
    return Bad("inference.workload.num_requests", w.num_requests(),
               "must be between 1 and 10000000 (the first records of the trace)");
  }
  absl::StatusOr<strategies::RequestTrace> trace =
      strategies::ReadRequestTrace(path,
                                   format == "azure" ? strategies::RequestTraceFormat::kAzure
                                                     : strategies::RequestTraceFormat::kMooncake,
                                   "inference.workload.trace_file");
  if (!trace.ok()) return trace.status();
  mode->trace = *std::move(trace);
  std::vector<strategies::ServingRequest>& requests = mode->trace.requests;
  if (w.has_num_requests() && static_cast<size_t>(w.num_requests()) < requests.size()) {
    requests.resize(w.num_requests());
    mode->trace.hash_ids.resize(w.num_requests());
  }
  if (requests.back().arrival.ToSeconds() * scale > kMaxTraceSpanS) {
    return Bad("inference.workload.trace_time_scale", scale,
               "stretches the trace past 100 days of simulated time; lower it");
  }
  if (scale != 1.0) {
    for (strategies::ServingRequest& r : requests) {
      const double ps = static_cast<double>((r.arrival - sim::Time::Zero()).picoseconds());
      r.arrival = sim::Time::Zero() + sim::Duration::FromPicoseconds(std::llround(ps * scale));
    }
  }
  int64_t prompt = 0, output = 0;
  for (const strategies::ServingRequest& r : requests) {
    prompt = std::max(prompt, r.prompt_tokens);
    output = std::max(output, r.output_tokens);
  }
  // The longest request sizes memory and the default token budget.
  workload->prompt = {.kind = strategies::LengthSpec::Kind::kFixed, .value = prompt};
  workload->output = {.kind = strategies::LengthSpec::Kind::kFixed, .value = output};
  workload->num_requests = static_cast<int>(requests.size());
  echo->set_trace_file(path);
  echo->set_trace_format(format);
  echo->set_trace_time_scale(scale);
  echo->set_num_requests(workload->num_requests);
  return absl::OkStatus();
}

}  // namespace

bool IsBenchmarkMode(std::string_view kind) {
  return kind == "offline" || kind == "server" || kind == "concurrency" || kind == "trace";
}

absl::Status ResolveBenchmarkWorkload(const config::InferenceWorkload& w, std::string_view kind,
                                      config::InferenceWorkload* echo, ServeMode* mode,
                                      strategies::ServingWorkload* workload) {
  mode->kind = std::string(kind);
  if (w.has_batch_size()) {
    return NotForKind("batch_size", kind, "use num_requests, or kind \"fixed-batch\"");
  }
  if (w.has_request_rate_per_s()) {
    return NotForKind("request_rate_per_s", kind,
                      kind == "server"  ? "server mode finds the highest rate meeting the targets"
                      : kind == "trace" ? "the trace sets the arrivals; scale them with "
                                          "trace_time_scale"
                                        : "use kind \"poisson\" for a given rate");
  }
  if (kind != "concurrency" &&
      (w.has_concurrency() || w.has_think_time_ms() || w.has_warmup_requests())) {
    return NotForKind(w.has_concurrency()     ? "concurrency"
                      : w.has_think_time_ms() ? "think_time_ms"
                                              : "warmup_requests",
                      kind, "set kind \"concurrency\" or remove it");
  }
  if (kind != "trace" && (w.has_trace_file() || w.has_trace_format() || w.has_trace_time_scale())) {
    return NotForKind("trace_file", kind, "set kind \"trace\" or remove the trace fields");
  }
  const bool timed = kind == "server" || kind == "offline";
  if (!timed && w.has_duration_s()) {
    return NotForKind("duration_s", kind,
                      "set kind \"server\" or \"offline\", or use num_requests");
  }
  if (kind == "server" || w.has_duration_s()) {
    mode->duration_s = w.has_duration_s() ? w.duration_s() : kMlperfServerDurationS;
    if (!(mode->duration_s > 0 && mode->duration_s <= kMaxDurationS)) {
      return Bad("inference.workload.duration_s", mode->duration_s,
                 "must be > 0 and <= 86400 seconds (MLPerf's runs last at least 600)");
    }
    echo->set_duration_s(mode->duration_s);
  }
  workload->poisson = true;  // num_requests requests; the runner places their arrivals
  workload->rate_per_s = 0;
  if (kind == "trace") return ResolveTrace(w, echo, mode, workload);
  workload->num_requests = w.has_num_requests() ? w.num_requests() : 200;
  if (workload->num_requests < 1 || workload->num_requests > 1'000'000) {
    return Bad("inference.workload.num_requests", workload->num_requests,
               "must be between 1 and 1000000");
  }
  echo->set_num_requests(workload->num_requests);
  if (kind == "concurrency") {
    if (!w.has_concurrency()) {
      return absl::InvalidArgumentError(
          "inference.workload.concurrency is required for kind \"concurrency\"; e.g. 8 clients");
    }
    mode->concurrency = w.concurrency();
    if (mode->concurrency < 1 || mode->concurrency > 1'000'000) {
      return Bad("inference.workload.concurrency", mode->concurrency,
                 "must be between 1 and 1000000 clients");
    }
    const double think_ms = w.think_time_ms();
    if (!(think_ms >= 0 && think_ms <= 1e7)) {
      return Bad("inference.workload.think_time_ms", think_ms, "must be between 0 and 10000000 ms");
    }
    mode->think_time = sim::Duration::FromSecondsDouble(think_ms * 1e-3);
    echo->set_concurrency(mode->concurrency);
    echo->set_think_time_ms(think_ms);
    if (w.has_warmup_requests()) {
      if (w.warmup_requests() < 0 || w.warmup_requests() > 1'000'000) {
        return Bad("inference.workload.warmup_requests", w.warmup_requests(),
                   "must be between 0 and 1000000 (0: measure every request)");
      }
      mode->warmup_requests = w.warmup_requests();
      echo->set_warmup_requests(mode->warmup_requests);
    }
  }
  return absl::OkStatus();
}

absl::Status ResolveServeModeOptions(const config::InferenceConfig& inf,
                                     config::InferenceConfig* echo, ServeMode* mode) {
  if (inf.has_prefix_cache_hit_rate()) {
    const double h = inf.prefix_cache_hit_rate();
    if (!(h >= 0 && h <= 1)) {
      return Bad("inference.prefix_cache_hit_rate", h,
                 "must be in [0, 1] (the fraction of each prompt already cached)");
    }
    if (inf.enable_prefix_caching()) {
      return absl::InvalidArgumentError(
          "inference.prefix_cache_hit_rate and enable_prefix_caching are both set; keep one (a "
          "stated hit rate, or an LRU cache over the trace's hash_ids)");
    }
    mode->prefix_hit_rate = h;
    echo->set_prefix_cache_hit_rate(h);
  }
  if (inf.has_prefix_hash_block_tokens() && !inf.enable_prefix_caching()) {
    return absl::InvalidArgumentError(
        "inference.prefix_hash_block_tokens applies with enable_prefix_caching only; remove it");
  }
  if (inf.enable_prefix_caching()) {
    if (!mode->trace.has_hash_ids) {
      return absl::InvalidArgumentError(
          "inference.enable_prefix_caching needs requests with hash_ids (inference.workload.kind "
          "\"trace\" with a Mooncake file); otherwise state inference.prefix_cache_hit_rate");
    }
    mode->prefix_lru = true;
    mode->prefix_block_tokens =
        inf.has_prefix_hash_block_tokens() ? inf.prefix_hash_block_tokens() : 512;
    if (mode->prefix_block_tokens < 1 || mode->prefix_block_tokens > 1'000'000) {
      return Bad("inference.prefix_hash_block_tokens", mode->prefix_block_tokens,
                 "must be between 1 and 1000000 tokens (Mooncake: 512)");
    }
    echo->set_enable_prefix_caching(true);
    echo->set_prefix_hash_block_tokens(static_cast<int32_t>(mode->prefix_block_tokens));
  }
  if (inf.has_mlperf_benchmark()) {
    const auto it =
        std::find_if(std::begin(kMlperf), std::end(kMlperf),
                     [&](const MlperfLimits& m) { return m.name == inf.mlperf_benchmark(); });
    if (it == std::end(kMlperf)) {
      std::vector<std::string> names;
      for (const MlperfLimits& m : kMlperf) names.emplace_back(m.name);
      return absl::InvalidArgumentError(
          absl::StrCat("inference.mlperf_benchmark=\"", inf.mlperf_benchmark(),
                       "\" is not known; use one of ", absl::StrJoin(names, ", ")));
    }
    mode->mlperf_benchmark = std::string(it->name);
    mode->mlperf_ttft_ms = it->ttft_ms;
    mode->mlperf_tpot_ms = it->tpot_ms;
    echo->set_mlperf_benchmark(mode->mlperf_benchmark);
  }
  return absl::OkStatus();
}

std::string ModeHeadline(const ServeMode& mode, const config::ServeResult& r) {
  if (mode.kind == "server") {
    const config::ServeSustainable& st = r.sustainable();
    std::vector<std::string> targets;
    if (st.target_ttft_ms() > 0)
      targets.push_back(absl::StrCat("TTFT <= ", st.target_ttft_ms(), " ms"));
    if (st.target_tpot_ms() > 0)
      targets.push_back(absl::StrCat("TPOT <= ", st.target_tpot_ms(), " ms"));
    const std::string limits = absl::StrCat(
        "p99 ", absl::StrJoin(targets, " and p99 "),
        mode.mlperf_benchmark.empty() ? "" : absl::StrCat(", MLPerf ", mode.mlperf_benchmark));
    if (st.status() == "unreachable") {
      return absl::StrCat("no rate meets ", limits, "; ", st.detail());
    }
    return absl::StrFormat("%.3f req/s, %.1f output tokens/s within %s",
                           st.max_request_rate_per_s(), st.output_tokens_per_s(), limits);
  }
  const std::string throughput = absl::StrFormat("%.1f output tokens/s, %.3f req/s",
                                                 r.output_tokens_per_s(), r.requests_per_s());
  if (mode.kind == "offline") {
    return absl::StrCat(throughput, " with all ", r.num_requests(),
                        " requests queued at time zero");
  }
  if (mode.kind == "concurrency") {
    return absl::StrFormat("%s at %d clients (end-to-end p50 %.1f ms)", throughput,
                           mode.concurrency, r.e2e_ms().p50());
  }
  return absl::StrFormat("%s replaying %d requests offered at %.3f req/s", throughput,
                         r.num_requests(), r.offered_request_rate_per_s());
}

std::string ModeSaturation(const ServeMode& mode) {
  if (mode.kind == "offline") return "offline: every request is queued at time zero";
  if (mode.kind == "server")
    return "server: Poisson arrivals at the highest rate meeting the targets";
  if (mode.kind == "concurrency") {
    return absl::StrCat("closed loop: ", mode.concurrency,
                        " clients, each with one request in flight");
  }
  return "trace: every record arrives at the same time";
}

}  // namespace clustersim::scenarios
