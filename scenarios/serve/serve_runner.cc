#include "scenarios/serve/serve_runner.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/calibration.h"
#include "models/inference_memory.h"
#include "models/kernel_model.h"
#include "scenarios/serve/serve_replica.h"
#include "scenarios/serve/serve_speculative.h"
#include "scenarios/serve/serve_trace.h"
#include "sim/status_macros.h"
#include "strategies/serving_dynamic_batch.h"
#include "strategies/serving_iteration.h"
#include "strategies/serving_prefix_cache.h"
#include "strategies/serving_speculative.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"

namespace clustersim::scenarios {
namespace {

using strategies::ServingRun;

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

// The mean of one request length: the samples' when the workload has them,
// else the distribution's (the tuner averages the lengths requests ask for).
int64_t MeanLength(const strategies::ServingWorkload& w, bool prompt) {
  if (!w.samples.empty()) {
    double sum = 0;
    for (const strategies::LengthSample& x : w.samples) {
      sum += static_cast<double>(prompt ? x.prompt_tokens : x.output_tokens);
    }
    return std::llround(sum / static_cast<double>(w.samples.size()));
  }
  const strategies::LengthSpec& l = prompt ? w.prompt : w.output;
  switch (l.kind) {
    case strategies::LengthSpec::Kind::kFixed:
      return l.value;
    case strategies::LengthSpec::Kind::kUniform:
      return (l.min + l.max) / 2;
    case strategies::LengthSpec::Kind::kNormal:
      return std::llround(l.mean);
  }
  return l.Longest();
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
  const models::InferenceMemory memory =
      models::EstimateInferenceMemory(s.memory, s.gpu->cuda_total_memory);
  const models::InferenceVerdict verdict = models::JudgeInferenceMemory(s.memory, *s.gpu);
  FillMemory(memory, verdict, s.scheduler.kv_block_size, longest, result.mutable_memory());
  if (!verdict.fits) {
    return absl::InvalidArgumentError(absl::StrCat(verdict.summary, "; ", verdict.remedy));
  }

  // The replica's hardware and cost model.
  absl::StatusOr<topology::Cluster> cluster = topology::BuildCluster(s.cluster);
  if (!cluster.ok()) return cluster.status();
  const topology::AnalyticNetwork network(*cluster);
  const models::KernelModel kernels(*s.gpu, ServingKernelParams(*s.gpu),
                                    models::Calibration::Shipped(s.gpu->name));
  const int gpus_per_replica = replica.tensor_parallel * replica.pipeline_parallel;
  strategies::ServingModelSpec spec{
      .replica = replica,
      .host_per_iteration = s.host_per_iteration,
      .host_per_sequence = s.host_per_sequence,
      .host_overlapped = s.host_overlapped,
      .eager_dispatch_per_kernel = s.eager_dispatch_per_kernel,
      .decode_attention_flops_per_sm_cycle = s.decode_attention_flops_per_sm_cycle,
      .decode_attention_grouped_gqa = s.decode_attention_grouped_gqa};
  for (int g = 0; g < gpus_per_replica; ++g) spec.gpus.push_back(g);
  absl::StatusOr<strategies::ServingCostModel> model =
      strategies::ServingCostModel::Create(spec, kernels, network);
  if (!model.ok()) return model.status();
  strategies::SchedulerConfig scheduler = s.scheduler;
  scheduler.kv_blocks = memory.kv_blocks;
  scheduler.sliding_window = replica.model.sliding_window;
  scheduler.SetKvWeights(memory.kv_footprint);
  if (s.dynamic_batch_size_tuning) {
    // TensorRT-LLM's executor caps its batch at the tuner's size for the KV
    // capacity in requests of the mean lengths (strategies/serving_dynamic_batch.h);
    // under data-parallel attention each rank tunes its own share.
    const int64_t tuned = strategies::TunedReplicaBatchSize(
        memory.kv_blocks, scheduler.KvFootprint(), MeanLength(s.workload, /*prompt=*/true),
        MeanLength(s.workload, /*prompt=*/false), std::max(1, scheduler.attention_dp_ranks));
    scheduler.max_batch_size =
        static_cast<int>(std::min<int64_t>(scheduler.max_batch_size, tuned));
  }
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
