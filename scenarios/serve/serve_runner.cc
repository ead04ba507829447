#include "scenarios/serve/serve_runner.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/calibration.h"
#include "models/inference_memory.h"
#include "models/kernel_model.h"
#include "scenarios/serve/serve_goodput.h"
#include "scenarios/serve/serve_requests.h"
#include "scenarios/serve/serve_speculative.h"
#include "scenarios/serve/serve_trace.h"
#include "sim/status_macros.h"
#include "strategies/serving_iteration.h"
#include "strategies/serving_prefix_cache.h"
#include "strategies/serving_speculative.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"

namespace clustersim::scenarios {
namespace {

using strategies::ServingRequest;
using strategies::ServingRun;

// What one simulated replica measured.
struct Measured {
  config::LatencyStats ttft, tpot, e2e;
  double duration_s = 0;  // first arrival to last finish
  double output_tokens = 0, prompt_tokens = 0, requests = 0;
  double OutputPerS() const { return duration_s > 0 ? output_tokens / duration_s : 0; }
};

// The requests of `run` from index `first` on (index = send order; the
// earlier ones are warm-up); the duration runs from the first measured
// request's arrival to the run's end.
Measured Measure(const ServingRun& run, int64_t first = 0) {
  Measured m;
  std::vector<double> ttft, tpot, e2e;
  const int64_t end = static_cast<int64_t>(run.requests.size());
  first = std::min(first, end);
  for (int64_t i = first; i < end; ++i) {
    const strategies::RequestRecord& r = run.requests[i];
    ttft.push_back((r.first_token - r.arrival).ToMilliseconds());
    e2e.push_back((r.finish - r.arrival).ToMilliseconds());
    if (r.output_tokens > 1) {
      tpot.push_back((r.finish - r.first_token).ToMilliseconds() /
                     static_cast<double>(r.output_tokens - 1));
    }
    m.output_tokens += static_cast<double>(r.output_tokens);
    m.prompt_tokens += static_cast<double>(r.prompt_tokens);
  }
  m.requests = static_cast<double>(end - first);
  m.ttft = LatencyOf(std::move(ttft));
  m.tpot = LatencyOf(std::move(tpot));
  m.e2e = LatencyOf(std::move(e2e));
  if (end > first) m.duration_s = (run.end - run.requests[first].arrival).ToSeconds();
  return m;
}

// One replica's simulations of the scenario's requests (serve_requests.h).
class Replica {
 public:
  Replica(const ResolvedServe& s, strategies::IterationCostFn cost,
          strategies::SchedulerConfig scheduler)
      : requests_(s, scheduler.kv_blocks * scheduler.kv_block_size),
        server_(s.mode.kind == "server"),
        duration_s_(s.mode.duration_s),
        think_time_(s.mode.think_time),
        scheduler_(scheduler),
        cost_(std::move(cost)) {}

  // Offered rate of one replica (0 for a fixed batch).
  double OfferedRate() const { return requests_.OfferedRate(); }
  // The asked run's first measured request (serve_requests.h).
  int64_t MeasuredFirst() const { return requests_.MeasuredFirst(); }
  // Whether runs last duration_s ("server", and "offline" with a duration)
  // rather than a fixed number of requests.
  bool Timed() const { return duration_s_ > 0; }
  bool Server() const { return server_; }

  // The asked workload; `server_rate_per_s` is a "server" run's arrival rate,
  // `timed_count` a timed offline run's requests.
  absl::StatusOr<ServingRun> Run(bool keep, double server_rate_per_s, int64_t timed_count) {
    if (server_) return RunTimed(server_rate_per_s, requests_.ServerCount(server_rate_per_s), keep);
    if (Timed()) return RunTimed(0, timed_count, keep);
    strategies::SchedulerConfig asked = scheduler_;
    asked.closed_loop_clients = requests_.Clients();
    asked.think_time = think_time_;
    return strategies::SimulateServing(requests_.Asked(), asked, cost_, keep);
  }
  // rate 0: every request at once.
  absl::StatusOr<ServingRun> RunAt(double rate_per_s) {
    return strategies::SimulateServing(requests_.At(rate_per_s), scheduler_, cost_, false);
  }
  // A rate-search probe: a "server" run as long as the asked one
  // (serve_requests.h), otherwise the re-timed requests of At.
  absl::StatusOr<ServingRun> Probe(double rate_per_s) {
    if (!server_) return RunAt(rate_per_s);
    return RunTimed(rate_per_s, requests_.ServerCount(rate_per_s));
  }
  // A timed run's capacity burst: every request at once, as many as keep the
  // replica busy for duration_s. Sized as loadgen sizes the Offline query,
  // 1.1 x duration_s x the rate expected (here: the rate the previous burst
  // measured), starting from the replica's share of num_requests; a larger
  // burst batches better, so it is resized until it lasts duration_s (at most
  // 5 bursts). `count` gets its requests.
  absl::StatusOr<ServingRun> TimedBurst(int64_t* count) {
    *count = requests_.ServerCount(0);
    absl::StatusOr<ServingRun> burst = RunTimed(0, *count);
    for (int i = 0; i < 4 && burst.ok(); ++i) {
      const double span_s = (burst->end - sim::Time::Zero()).ToSeconds();
      if (span_s >= duration_s_ || span_s <= 0) break;
      *count = static_cast<int64_t>(
          std::ceil(kLoadgenSlack * duration_s_ * static_cast<double>(*count) / span_s));
      burst = RunTimed(0, *count);
    }
    return burst;
  }

 private:
  absl::StatusOr<ServingRun> RunTimed(double rate_per_s, int64_t count, bool keep = false) {
    if (count > kMaxTimedRequests) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "inference.workload.duration_s=%g takes %d requests on one replica (over %d); "
          "shorten the duration",
          duration_s_, count, kMaxTimedRequests));
    }
    return strategies::SimulateServing(requests_.Drawn(rate_per_s, count), scheduler_, cost_,
                                       keep);
  }

  // loadgen's kSlack: the Offline query holds 1.1 x min_duration x the
  // expected QPS samples (loadgen/test_settings_internal.cc).
  static constexpr double kLoadgenSlack = 1.1;
  // The most requests one replica's timed run may hold.
  static constexpr int64_t kMaxTimedRequests = 10'000'000;

  ReplicaRequests requests_;
  const bool server_;
  const double duration_s_;
  sim::Duration think_time_;
  strategies::SchedulerConfig scheduler_;
  strategies::IterationCostFn cost_;
};

void FillMemory(const models::InferenceMemory& m, const models::InferenceVerdict& v, int block_size,
                int64_t sequence_length, config::ServeMemory* out) {
  out->set_capacity_gib(m.capacity.ToGiB());
  out->set_budget_gib(m.budget.ToGiB());
  out->set_weights_gib(m.weights.ToGiB());
  out->set_activations_gib(m.activations.ToGiB());
  out->set_overheads_gib(m.overheads.ToGiB());
  out->set_kv_cache_gib(m.kv_cache.ToGiB());
  out->set_kv_bytes_per_token(m.kv_bytes_per_token.count());
  out->set_kv_block_size(block_size);
  out->set_kv_blocks(m.kv_blocks);
  out->set_sequence_length(sequence_length);
  out->set_max_concurrent_sequences(m.max_concurrent_sequences);
  out->set_fits(m.fits);
  out->set_verdict(v.fits ? v.summary : absl::StrCat(v.summary, "; ", v.remedy));
}

bool MeetsTargets(const ResolvedServe& s, const Measured& m) {
  return (s.target_tpot_ms <= 0 || m.tpot.p99() <= s.target_tpot_ms) &&
         (s.target_ttft_ms <= 0 || m.ttft.p99() <= s.target_ttft_ms);
}

// Returns one replica's rate to run a "server" workload at: the rate found,
// the capacity, or 1% of the capacity when the targets are unreachable (0
// without a target).
absl::StatusOr<double> FindSustainableRate(const ResolvedServe& s, Replica& replica,
                                           double capacity, config::ServeSustainable* out) {
  out->set_target_tpot_ms(s.target_tpot_ms);
  out->set_target_ttft_ms(s.target_ttft_ms);
  out->set_criterion(
      "p99 TPOT <= target and p99 TTFT <= target (MLPerf Inference server scenario)");
  if (s.target_tpot_ms <= 0 && s.target_ttft_ms <= 0) {
    out->set_status("no target");
    out->set_detail(
        "set inference.target_time_per_output_token_ms and/or "
        "target_time_to_first_token_ms (--target-tpot-ms, --target-ttft-ms)");
    return 0.0;
  }
  auto measure = [&](double rate) -> absl::StatusOr<Measured> {
    absl::StatusOr<ServingRun> run = replica.Probe(rate);
    if (!run.ok()) return run.status();
    return Measure(*run);
  };
  double lo = 0.01 * capacity, hi = capacity;
  absl::StatusOr<Measured> at_lo = measure(lo);
  if (!at_lo.ok()) return at_lo.status();
  if (!MeetsTargets(s, *at_lo)) {
    out->set_status("unreachable");
    out->set_detail(absl::StrFormat(
        "even at %.3g req/s (1%% of capacity) p99 TPOT is %.2f ms and p99 TTFT %.1f ms; "
        "quantise, raise tensor parallelism or use a faster GPU",
        lo * s.replicas, at_lo->tpot.p99(), at_lo->ttft.p99()));
    return lo;
  }
  absl::StatusOr<Measured> at_hi = measure(hi);
  if (!at_hi.ok()) return at_hi.status();
  Measured best = *at_lo;
  // A "server" run's capacity burst drains at its end, so its rate lies below
  // the steady state a run of duration_s can sustain: while the targets hold
  // at the bound, raise it by a quarter (at most 8 times; loadgen's peak
  // search likewise raises its rate until a run fails).
  for (int i = 0; i < 8 && replica.Server() && MeetsTargets(s, *at_hi); ++i) {
    lo = hi;
    best = *at_hi;
    hi *= 1.25;
    at_hi = measure(hi);
    if (!at_hi.ok()) return at_hi.status();
  }
  if (MeetsTargets(s, *at_hi)) {
    out->set_status("capacity");
    out->set_detail(replica.Server()
                        ? "the targets hold up to 1.25^8 times the capacity"
                        : "the targets hold up to the capacity; beyond it the queue grows");
    lo = hi;
    best = *at_hi;
  } else {
    out->set_status("found");
    for (int i = 0; i < 14; ++i) {
      const double mid = 0.5 * (lo + hi);
      absl::StatusOr<Measured> m = measure(mid);
      if (!m.ok()) return m.status();
      if (MeetsTargets(s, *m)) {
        lo = mid;
        best = *m;
      } else {
        hi = mid;
      }
    }
    out->set_detail(absl::StrFormat("at that rate p99 TPOT %.2f ms, p99 TTFT %.1f ms",
                                    best.tpot.p99(), best.ttft.p99()));
  }
  out->set_max_request_rate_per_s(lo * s.replicas);
  out->set_output_tokens_per_s(best.OutputPerS() * s.replicas);
  return lo;
}

}  // namespace

absl::StatusOr<config::ServeResult> RunServe(const ResolvedServe& s, const ServeOptions& options) {
  const models::ReplicaModel& replica = s.memory.replica;
  config::ServeResult result;
  result.set_name(s.name);
  result.set_model(replica.model.name);
  result.set_gpu(s.gpu->name);
  result.set_num_gpus(s.num_gpus);
  result.set_tensor_parallel(replica.tensor_parallel);
  result.set_pipeline_parallel(replica.pipeline_parallel);
  result.set_replicas(s.replicas);
  result.set_weight_dtype(std::string(models::WeightFormatName(replica.weight_format)));
  result.set_kv_cache_dtype(std::string(models::DtypeName(replica.kv_cache_dtype)));
  result.set_workload(s.mode.kind);
  *result.mutable_scenario() = s.echo;

  // Memory.
  const int64_t longest = s.memory.sequence_length;
  const models::InferenceMemory memory = models::EstimateInferenceMemory(s.memory, s.gpu->memory);
  const models::InferenceVerdict verdict = models::JudgeInferenceMemory(s.memory, *s.gpu);
  FillMemory(memory, verdict, s.scheduler.kv_block_size, longest, result.mutable_memory());
  if (!verdict.fits) {
    return absl::InvalidArgumentError(absl::StrCat(verdict.summary, "; ", verdict.remedy));
  }

  // The replica's hardware and cost model.
  absl::StatusOr<topology::Cluster> cluster = topology::BuildCluster(s.cluster);
  if (!cluster.ok()) return cluster.status();
  const topology::AnalyticNetwork network(*cluster);
  const models::KernelModel kernels(*s.gpu, {}, models::Calibration::Shipped(s.gpu->name));
  const int gpus_per_replica = replica.tensor_parallel * replica.pipeline_parallel;
  strategies::ServingModelSpec spec{
      .replica = replica,
      .host_per_iteration = s.host_per_iteration,
      .decode_attention_flops_per_sm_cycle = s.decode_attention_flops_per_sm_cycle,
      .decode_attention_grouped_gqa = s.decode_attention_grouped_gqa};
  for (int g = 0; g < gpus_per_replica; ++g) spec.gpus.push_back(g);
  absl::StatusOr<strategies::ServingCostModel> model =
      strategies::ServingCostModel::Create(spec, kernels, network);
  if (!model.ok()) return model.status();
  strategies::SchedulerConfig scheduler = s.scheduler;
  scheduler.kv_blocks = memory.kv_blocks;
  sim::RunControl* control = options.control;
  constexpr int kCurvePoints = 10;
  const size_t simulations = options.curve ? 1 + kCurvePoints : 1;
  if (control != nullptr) {
    scheduler.cancel = &control->cancel;
    control->Report(0, simulations);
  }
  strategies::IterationCostFn iteration_cost = [&model](const strategies::IterationTotals& t) {
    return model->Cost(t);
  };
  std::optional<strategies::SpeculativeCostModel> speculative;
  if (s.speculative) {
    absl::StatusOr<strategies::SpeculativeCostModel> m =
        strategies::SpeculativeCostModel::Create(*s.speculative, *model, kernels, network);
    if (!m.ok()) return m.status();
    speculative.emplace(*std::move(m));
    iteration_cost = [&speculative](const strategies::IterationTotals& t) {
      return speculative->Cost(t);
    };
  }
  Replica server(s, std::move(iteration_cost), scheduler);

  // Capacity: every request at once.
  int64_t timed_count = 0;
  absl::StatusOr<ServingRun> burst =
      server.Timed() ? server.TimedBurst(&timed_count) : server.RunAt(0);
  if (!burst.ok()) return burst.status();
  const Measured at_burst = Measure(*burst);
  const double capacity = at_burst.duration_s > 0 ? at_burst.requests / at_burst.duration_s : 0;
  result.set_capacity_requests_per_s(capacity * s.replicas);
  result.set_capacity_output_tokens_per_s(at_burst.OutputPerS() * s.replicas);

  // The sustainable rate: the headline and the arrival rate of a "server" run.
  absl::StatusOr<double> sustainable =
      FindSustainableRate(s, server, capacity, result.mutable_sustainable());
  if (!sustainable.ok()) return sustainable.status();

  // The asked workload.
  absl::StatusOr<ServingRun> run =
      server.Run(!options.trace_path.empty(), *sustainable, timed_count);
  if (!run.ok()) return run.status();
  if (control != nullptr) control->Report(1, simulations);
  const Measured m = Measure(*run, server.MeasuredFirst());
  const std::string& kind = s.mode.kind;
  const double offered = kind == "poisson"  ? s.workload.rate_per_s
                         : kind == "server" ? *sustainable * s.replicas
                                            : server.OfferedRate() * s.replicas;
  result.set_num_requests(static_cast<int32_t>(m.requests) * s.replicas);
  result.set_offered_request_rate_per_s(offered);
  result.set_simulated_time_s(m.duration_s);
  *result.mutable_ttft_ms() = m.ttft;
  *result.mutable_tpot_ms() = m.tpot;
  *result.mutable_e2e_ms() = m.e2e;
  const double output_per_s = m.OutputPerS() * s.replicas;
  result.set_output_tokens_per_s(output_per_s);
  result.set_total_tokens_per_s(
      m.duration_s > 0 ? (m.output_tokens + m.prompt_tokens) / m.duration_s * s.replicas : 0);
  result.set_requests_per_s(m.duration_s > 0 ? m.requests / m.duration_s * s.replicas : 0);
  result.set_output_tokens_per_s_per_gpu(output_per_s / s.num_gpus);
  // Busy time and FLOPs cover the whole run, warm-up included.
  const double whole_s = Measure(*run).duration_s;
  const double busy = whole_s > 0 ? run->busy.ToSeconds() / whole_s : 0;
  result.set_gpu_busy_fraction(busy / replica.pipeline_parallel);
  const double peak = s.gpu->PeakFlops(models::ComputeDtype(replica.weight_format));
  result.set_model_flops_utilisation(whole_s > 0 ? run->flops / (whole_s * gpus_per_replica * peak)
                                                 : 0);
  if (run->busy > sim::Duration::Zero()) {
    result.set_communication_fraction(run->communication.ToSeconds() / run->busy.ToSeconds());
    result.set_host_fraction(run->host.ToSeconds() / run->busy.ToSeconds());
  }
  result.set_mean_batch_size(run->mean_batch);
  result.set_peak_running(run->peak_running);
  result.set_iterations(run->num_iterations);
  result.set_preemptions(run->preemptions);

  // Saturation: only an open loop at a given rate can exceed the capacity.
  if (kind == "fixed-batch") {
    result.set_saturation("fixed batch: every request starts at time zero");
  } else if (kind != "poisson" && !(kind == "trace" && server.OfferedRate() > 0)) {
    result.set_saturation(ModeSaturation(s.mode));
  } else if (server.OfferedRate() >= capacity) {
    result.set_saturated(true);
    result.set_saturation(absl::StrFormat(
        "saturated: the offered %.3g req/s exceed the capacity of %.3g req/s (%d replica(s)); "
        "the queue and TTFT grow for as long as requests arrive (p99 TTFT %.1f s over %d "
        "requests); %s or add GPUs (cluster.num_gpus)",
        offered, capacity * s.replicas, s.replicas, m.ttft.p99() / 1e3, result.num_requests(),
        kind == "trace" ? "stretch the trace (raise inference.workload.trace_time_scale)"
                        : "lower inference.workload.request_rate_per_s"));
  } else {
    result.set_saturation(absl::StrFormat("not saturated: %.0f%% of the capacity",
                                          100.0 * server.OfferedRate() / capacity));
  }
  if (s.mode.prefix_caching()) {
    result.set_prefix_cache_hit_rate(strategies::PrefixHitRate(run->requests));
  }
  if (s.mode.concurrency > 0) result.set_concurrency(s.mode.concurrency);
  if (!s.mode.mlperf_benchmark.empty()) result.set_mlperf_benchmark(s.mode.mlperf_benchmark);
  if (IsBenchmarkMode(kind)) result.set_headline(ModeHeadline(s.mode, result));

  // The latency-vs-throughput curve.
  if (options.curve) {
    for (int i = 1; i <= kCurvePoints; ++i) {
      const double rate = capacity * i / kCurvePoints;
      absl::StatusOr<ServingRun> r = server.RunAt(rate);
      if (!r.ok()) return r.status();
      if (control != nullptr) control->Report(1 + i, simulations);
      const Measured c = Measure(*r);
      config::ServeCurvePoint* p = result.add_curve();
      p->set_request_rate_per_s(rate * s.replicas);
      p->set_output_tokens_per_s(c.OutputPerS() * s.replicas);
      p->set_ttft_p99_ms(c.ttft.p99());
      p->set_tpot_p50_ms(c.tpot.p50());
      p->set_tpot_p99_ms(c.tpot.p99());
      p->set_e2e_p50_ms(c.e2e.p50());
    }
  }

  // Money and energy.
  config::ServeCost* cost = result.mutable_cost();
  cost->set_usd_per_gpu_hour(s.pricing.usd_per_gpu_hour);
  cost->set_price_source(s.pricing.name);
  cost->set_usd_per_hour(s.pricing.usd_per_gpu_hour * s.num_gpus);
  if (output_per_s > 0) {
    cost->set_usd_per_million_output_tokens(cost->usd_per_hour() / (output_per_s * 3600) * 1e6);
  }
  const double power = s.num_gpus * s.gpu->tdp_w * s.pricing.utilisation * s.pricing.pue;
  cost->set_power_w(power);
  cost->set_energy_kwh(power * m.duration_s / 3.6e6);
  if (output_per_s > 0) cost->set_joules_per_output_token(power / output_per_s);

  result.set_sources(absl::StrCat(
      "memory: models/inference_memory (vLLM accounting); kernels: models/kernel_model (",
      s.gpu->name,
      models::Calibration::Shipped(s.gpu->name) != nullptr ? ", shipped calibration"
                                                           : ", spec-sheet fallback",
      "); network: topology/analytic_network (alpha-beta); scheduler: "
      "strategies/serving_scheduler (vLLM continuous batching); price: ",
      s.pricing.name, " (", s.pricing.source, ")"));

  if (s.speculative) CLUSTERSIM_RETURN_IF_ERROR(ReportSpeculative(s, *run, &result));
  if (!options.trace_path.empty()) {
    CLUSTERSIM_RETURN_IF_ERROR(WriteServeTrace(options.trace_path, *run, s));
  }
  return result;
}

}  // namespace clustersim::scenarios
