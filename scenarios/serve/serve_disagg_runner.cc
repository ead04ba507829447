#include "scenarios/serve/serve_disagg_runner.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scenarios/serve/serve_disagg_model.h"
#include "scenarios/serve/serve_disagg_search.h"
#include "scenarios/serve/serve_goodput.h"
#include "sim/status_macros.h"

namespace clustersim::scenarios {
namespace {

using strategies::DisaggRun;

std::string GpuRange(int first, int count) {
  return count == 1 ? absl::StrCat(first) : absl::StrCat(first, "-", first + count - 1);
}

void FillPool(const ResolvedPool& p, const strategies::DisaggPoolRun& run, double span_s,
              config::DisaggPoolResult* out) {
  const models::ReplicaModel& r = p.memory.replica;
  out->set_gpu(p.gpu->name);
  out->set_instances(p.instances);
  out->set_tensor_parallel(r.tensor_parallel);
  out->set_pipeline_parallel(r.pipeline_parallel);
  out->set_num_gpus(p.NumGpus());
  out->set_gpu_indices(GpuRange(p.first_gpu, p.NumGpus()));
  const models::InferenceMemory m =
      models::EstimateInferenceMemory(p.memory, p.gpu->cuda_total_memory);
  config::ServeMemory* mem = out->mutable_memory();
  mem->set_capacity_gib(m.capacity.ToGiB());
  mem->set_budget_gib(m.budget.ToGiB());
  mem->set_weights_gib(m.weights.ToGiB());
  mem->set_activations_gib(m.activations.ToGiB());
  mem->set_overheads_gib(m.overheads.ToGiB());
  mem->set_kv_cache_gib(m.kv_cache.ToGiB());
  mem->set_kv_bytes_per_token(m.kv_bytes_per_token.count());
  mem->set_kv_block_size(p.scheduler.kv_block_size);
  mem->set_kv_blocks(m.kv_blocks);
  mem->set_sequence_length(p.memory.sequence_length);
  mem->set_max_concurrent_sequences(m.max_concurrent_sequences);
  mem->set_fits(m.fits);
  if (span_s > 0) {
    out->set_busy_fraction(run.busy.ToSeconds() / (p.instances * span_s) / r.pipeline_parallel);
    const double peak = p.gpu->PeakFlops(models::ComputeDtype(r.weight_format));
    out->set_model_flops_utilisation(run.flops / (span_s * p.NumGpus() * peak));
  }
  out->set_iterations(run.iterations);
  if (run.iterations > 0) {
    out->set_mean_batch_size(run.batch_sum / static_cast<double>(run.iterations));
  }
  out->set_preemptions(run.preemptions);
}

void FillTransfer(const DisaggRun& run, const DisaggModel& model, bool layerwise,
                  config::DisaggKvTransfer* out) {
  out->set_layerwise(layerwise);
  out->set_transfers(run.transfers);
  const double bytes = static_cast<double>(model.KvBytesPerToken().count()) *
                       static_cast<double>(run.transferred_tokens);
  out->set_total_gib(bytes / (1024.0 * 1024 * 1024));
  if (run.transfers > 0) {
    out->set_mean_mib_per_request(bytes / static_cast<double>(run.transfers) / (1024.0 * 1024));
  }
  std::vector<double> time, wait;
  for (size_t i = 0; i < run.requests.size(); ++i) {
    if (run.paths[i].decode_instance < 0) continue;
    time.push_back((run.paths[i].transfer_end - run.paths[i].transfer_start).ToMilliseconds());
    wait.push_back((run.paths[i].transfer_start - run.requests[i].first_token).ToMilliseconds());
  }
  *out->mutable_time_ms() = LatencyOf(std::move(time));
  *out->mutable_wait_ms() = LatencyOf(std::move(wait));
  out->set_path(model.Path());
}

double UsdPerHour(const ResolvedDisagg& d) {
  return d.prefill.pricing.usd_per_gpu_hour * d.prefill.NumGpus() +
         d.decode.pricing.usd_per_gpu_hour * d.decode.NumGpus();
}

double UsdPerMillion(double usd_per_hour, double output_per_s) {
  return output_per_s > 0 ? usd_per_hour / (output_per_s * 3600) * 1e6 : 0;
}

void FillGoodput(const ResolvedDisagg& d, const GoodputFound& g, double attainment_offered,
                 config::DisaggGoodput* out) {
  out->set_target_ttft_ms(d.base.target_ttft_ms);
  out->set_target_tpot_ms(d.base.target_tpot_ms);
  out->set_attainment(d.attainment);
  out->set_definition(absl::StrFormat(
      "the largest request rate at which >= %.0f%% of requests meet both the TTFT and the TPOT "
      "target (DistServe, OSDI 2024)",
      100 * d.attainment));
  out->set_status(g.status);
  out->set_max_request_rate_per_s(g.rate_per_s);
  out->set_per_gpu(g.rate_per_s / d.NumGpus());
  out->set_attainment_at_offered(attainment_offered);
  if (g.status == "no target") {
    out->set_detail(
        "set inference.target_time_to_first_token_ms and/or target_time_per_output_token_ms "
        "(--target-ttft-ms, --target-tpot-ms)");
  } else if (g.status == "unreachable") {
    out->set_detail(absl::StrFormat(
        "only %.1f%% of requests meet the targets at 1%% of the capacity; add GPUs to the pool "
        "that misses (TTFT: prefill, TPOT: decode) or relax the targets",
        100 * g.attainment_at_rate));
  } else {
    out->set_detail(absl::StrFormat(
        "%.1f%% attain at that rate; %.1f output tokens/s, $%.3f per million output tokens",
        100 * g.attainment_at_rate, g.output_tokens_per_s,
        UsdPerMillion(UsdPerHour(d), g.output_tokens_per_s)));
  }
}

}  // namespace

absl::StatusOr<config::ServeResult> RunDisaggServe(const ResolvedDisagg& d,
                                                   const config::Scenario& scenario,
                                                   const DisaggServeOptions& options) {
  const ResolvedServe& b = d.base;
  const models::ReplicaModel& replica = d.decode.memory.replica;
  config::ServeResult result;
  result.set_name(b.name);
  result.set_model(replica.model.name);
  result.set_gpu(d.prefill.gpu == d.decode.gpu
                     ? d.prefill.gpu->name
                     : absl::StrCat(d.prefill.gpu->name, " + ", d.decode.gpu->name));
  result.set_num_gpus(d.NumGpus());
  result.set_weight_dtype(std::string(models::WeightFormatName(replica.weight_format)));
  result.set_kv_cache_dtype(std::string(models::DtypeName(replica.kv_cache_dtype)));
  result.set_workload(b.workload.poisson ? "poisson" : "fixed-batch");
  *result.mutable_scenario() = b.echo;

  absl::StatusOr<std::unique_ptr<DisaggModel>> model = DisaggModel::Create(d);
  if (!model.ok()) return model.status();
  const std::atomic<bool>* cancel = options.control ? &options.control->cancel : nullptr;
  if (options.control != nullptr) options.control->Report(0, 3);

  const double offered = b.workload.poisson ? b.workload.rate_per_s : 0;
  absl::StatusOr<DisaggRun> run = (*model)->Simulate(offered, cancel);
  if (!run.ok()) return run.status();
  const RequestFigures m = MeasureRequests(run->requests);
  result.set_num_requests(static_cast<int32_t>(m.requests));
  result.set_offered_request_rate_per_s(offered);
  result.set_simulated_time_s(m.duration_s);
  *result.mutable_ttft_ms() = m.ttft;
  *result.mutable_tpot_ms() = m.tpot;
  *result.mutable_e2e_ms() = m.e2e;
  const double output_per_s = m.OutputPerS();
  result.set_output_tokens_per_s(output_per_s);
  if (m.duration_s > 0) {
    result.set_total_tokens_per_s((m.output_tokens + m.prompt_tokens) / m.duration_s);
    result.set_requests_per_s(m.requests / m.duration_s);
  }
  result.set_output_tokens_per_s_per_gpu(output_per_s / d.NumGpus());
  result.set_iterations(run->prefill.iterations + run->decode.iterations);
  result.set_preemptions(run->decode.preemptions);
  result.set_peak_running(run->decode.peak_running);

  config::DisaggServeResult* dr = result.mutable_disaggregated();
  FillPool(d.prefill, run->prefill, m.duration_s, dr->mutable_prefill());
  FillPool(d.decode, run->decode, m.duration_s, dr->mutable_decode());
  *result.mutable_memory() = dr->decode().memory();
  result.set_mean_batch_size(dr->decode().mean_batch_size());
  const double gpus = d.NumGpus();
  result.set_gpu_busy_fraction((dr->prefill().busy_fraction() * d.prefill.NumGpus() +
                                dr->decode().busy_fraction() * d.decode.NumGpus()) /
                               gpus);
  result.set_model_flops_utilisation(
      (dr->prefill().model_flops_utilisation() * d.prefill.NumGpus() +
       dr->decode().model_flops_utilisation() * d.decode.NumGpus()) /
      gpus);
  FillTransfer(*run, **model, d.layerwise, dr->mutable_kv_transfer());
  dr->set_routing(d.routing == strategies::DisaggRouting::kLeastLoaded ? "least-loaded"
                                                                       : "round-robin");
  if (options.control != nullptr) options.control->Report(1, 3);

  // Capacity, saturation and goodput.
  absl::StatusOr<DisaggRun> burst = (*model)->Simulate(0, cancel);
  if (!burst.ok()) return burst.status();
  const double capacity = BurstCapacity(*burst);
  result.set_capacity_requests_per_s(capacity);
  result.set_capacity_output_tokens_per_s(MeasureRequests(burst->requests).OutputPerS());
  if (!b.workload.poisson) {
    result.set_saturation("fixed batch: every request starts at time zero");
  } else if (offered >= capacity) {
    result.set_saturated(true);
    result.set_saturation(absl::StrFormat(
        "saturated: the offered %.3g req/s exceed the capacity of %.3g req/s; the queue and "
        "TTFT grow for as long as requests arrive; lower inference.workload.request_rate_per_s "
        "or add instances to the pool that is busiest",
        offered, capacity));
  } else {
    result.set_saturation(
        absl::StrFormat("not saturated: %.0f%% of the capacity", 100.0 * offered / capacity));
  }
  absl::StatusOr<GoodputFound> g = DisaggGoodput(d, **model, capacity, 12, cancel);
  if (!g.ok()) return g.status();
  FillGoodput(d, *g, SloAttainment(run->requests, DisaggTargets(d)), dr->mutable_goodput());
  if (options.control != nullptr) options.control->Report(2, 3);

  // Money and energy.
  config::ServeCost* cost = result.mutable_cost();
  const double usd_per_hour = UsdPerHour(d);
  cost->set_usd_per_gpu_hour(usd_per_hour / gpus);
  cost->set_price_source(d.prefill.pricing.name == d.decode.pricing.name
                             ? d.prefill.pricing.name
                             : absl::StrCat(d.prefill.pricing.name, " + ", d.decode.pricing.name));
  cost->set_usd_per_hour(usd_per_hour);
  cost->set_usd_per_million_output_tokens(UsdPerMillion(usd_per_hour, output_per_s));
  const double power =
      (d.prefill.NumGpus() * d.prefill.gpu->tdp_w + d.decode.NumGpus() * d.decode.gpu->tdp_w) *
      b.pricing.utilisation * b.pricing.pue;
  cost->set_power_w(power);
  cost->set_energy_kwh(power * m.duration_s / 3.6e6);
  if (output_per_s > 0) cost->set_joules_per_output_token(power / output_per_s);

  if (d.search) CLUSTERSIM_RETURN_IF_ERROR(SearchDisaggRatios(d, scenario, cancel, dr));
  if (options.control != nullptr) options.control->Report(3, 3);

  result.set_sources(absl::StrCat(
      "memory: models/inference_memory (vLLM accounting); kernels: models/kernel_model; "
      "network and KV transfer: topology/analytic_network (alpha-beta send/recv over the route); "
      "scheduler: strategies/serving_disaggregated (prefill-only and decode-only continuous "
      "batching); goodput: DistServe's SLO-attainment definition; price: ",
      cost->price_source()));
  return result;
}

}  // namespace clustersim::scenarios
