#include "scenarios/serve/serve_disagg_resolve.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "sim/status_macros.h"

namespace clustersim::scenarios {
namespace {

struct PoolShape {
  int instances = 1, tp = 1, pp = 1;
  const models::GpuSpec* gpu = nullptr;
};

absl::StatusOr<PoolShape> ResolveShape(const config::DisaggPool& p, const std::string& field,
                                       const models::GpuSpec* cluster_gpu) {
  PoolShape s;
  s.tp = p.has_tensor_parallel_size() ? p.tensor_parallel_size() : 1;
  s.pp = p.has_pipeline_parallel_size() ? p.pipeline_parallel_size() : 1;
  if (s.tp < 1 || s.tp > 1024) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".tensor_parallel_size=", s.tp,
                                                   " must be between 1 and 1024; e.g. 1, 2, 4"));
  }
  if (s.pp < 1 || s.pp > 1024) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".pipeline_parallel_size=", s.pp,
                                                   " must be between 1 and 1024; e.g. 1"));
  }
  const int per = s.tp * s.pp;
  if (p.has_num_instances() && p.has_num_gpus()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".num_instances and ", field, ".num_gpus are both set; keep one"));
  }
  if (p.has_num_gpus()) {
    if (p.num_gpus() < per || p.num_gpus() % per != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".num_gpus=", p.num_gpus(), " must be a positive multiple of tp x pp = ", per,
          "; use ", per, " or a multiple"));
    }
    s.instances = p.num_gpus() / per;
  } else {
    s.instances = p.has_num_instances() ? p.num_instances() : 1;
  }
  if (s.instances < 1 || s.instances > 4096) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".num_instances=", s.instances,
                                                   " must be between 1 and 4096; a pool needs at "
                                                   "least one instance"));
  }
  s.gpu = cluster_gpu;
  if (p.has_gpu()) {
    absl::StatusOr<const models::GpuSpec*> gpu = models::GpuCatalog::Default().Find(p.gpu());
    if (!gpu.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".gpu=\"", p.gpu(), "\" is not known: ", gpu.status().message()));
    }
    s.gpu = *gpu;
  }
  return s;
}

// The smallest tp (a power of two dividing the heads and the ffn size, above
// `from`) at which the pool's GPU holds the model; 0 if none up to 64.
int TpThatFits(models::InferenceMemoryInputs in, const models::GpuSpec& gpu, int from) {
  const models::TransformerConfig& m = in.replica.model;
  for (int tp = from * 2; tp <= 64; tp *= 2) {
    if (!TensorParallelSplits(m, tp)) continue;
    in.replica.tensor_parallel = tp;
    if (models::EstimateInferenceMemory(in, gpu.cuda_total_memory).fits) return tp;
  }
  return 0;
}

absl::Status ResolvePool(const ResolvedServe& base, const PoolShape& shape, std::string role,
                         const config::DisaggPool& p, const config::Scenario& in,
                         ResolvedPool* out) {
  const std::string field = absl::StrCat("inference.disaggregated.", role);
  out->role = role;
  out->gpu = shape.gpu;
  out->instances = shape.instances;
  models::InferenceMemoryInputs& mem = out->memory;
  mem = base.memory;
  mem.replica.tensor_parallel = shape.tp;
  mem.replica.pipeline_parallel = shape.pp;
  const models::TransformerConfig& m = mem.replica.model;
  if (!TensorParallelSplits(m, shape.tp)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".tensor_parallel_size=", shape.tp,
                     " must divide model.num_attention_heads=", m.num_attention_heads,
                     " and model.ffn_hidden_size=", m.ffn_hidden_size, "; try 1, 2, 4 or 8"));
  }
  if (m.num_layers % shape.pp != 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".pipeline_parallel_size=", shape.pp,
                                                   " must divide model.num_layers=", m.num_layers,
                                                   "; try 1 or 2"));
  }
  CLUSTERSIM_RETURN_IF_ERROR(models::CheckWeightFormatSupported(
      *shape.gpu, mem.replica.weight_format, absl::StrCat(field, ".gpu")));
  strategies::SchedulerConfig& sc = out->scheduler;
  sc = base.scheduler;
  sc.chunked_prefill = false;
  const strategies::ServingWorkload& w = base.workload;
  const bool prefill = role == "prefill";
  if (p.has_max_batch_size()) {
    if (p.max_batch_size() < 1 || p.max_batch_size() > 100'000) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".max_batch_size=", p.max_batch_size(),
                                                     " must be between 1 and 100000"));
    }
    sc.max_batch_size = p.max_batch_size();
  }
  if (p.has_max_tokens_per_step()) {
    if (p.max_tokens_per_step() < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".max_tokens_per_step=", p.max_tokens_per_step(), " must be >= 1"));
    }
    sc.max_tokens_per_step = p.max_tokens_per_step();
  } else if (prefill) {
    sc.max_tokens_per_step = std::max<int64_t>(sc.max_tokens_per_step, w.prompt.Longest());
  } else {
    sc.max_tokens_per_step = sc.max_batch_size;  // one token per sequence
  }
  if (prefill && sc.max_tokens_per_step < w.prompt.Longest()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".max_tokens_per_step=", sc.max_tokens_per_step,
                     " is below the longest prompt (", w.prompt.Longest(), " tokens); raise it"));
  }
  mem.max_batch_size = sc.max_batch_size;
  mem.max_tokens_per_step = static_cast<int>(sc.max_tokens_per_step);
  mem.sequence_length = prefill ? w.prompt.Longest() : w.prompt.Longest() + w.output.Longest();
  const models::InferenceMemory memory =
      models::EstimateInferenceMemory(mem, shape.gpu->cuda_total_memory);
  if (!memory.fits) {
    const models::InferenceVerdict v = models::JudgeInferenceMemory(mem, *shape.gpu);
    const int tp = TpThatFits(mem, *shape.gpu, shape.tp);
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": ", v.summary, "; ",
        tp > 0
            ? absl::StrCat("raise ", field, ".tensor_parallel_size to ", tp)
            : absl::StrCat("quantise (inference.weight_dtype) or use a larger ", field, ".gpu")));
  }
  sc.kv_blocks = memory.kv_blocks;
  sc.sliding_window = m.sliding_window;
  sc.SetKvWeights(memory.kv_footprint);
  absl::StatusOr<ResolvedPricing> pricing =
      ResolvePricing(in.pricing(), *shape.gpu, base.gpus_per_node);
  if (!pricing.ok()) return pricing.status();
  out->pricing = *std::move(pricing);
  return absl::OkStatus();
}

void EchoPool(const ResolvedPool& p, config::DisaggPool* e) {
  e->Clear();
  e->set_num_instances(p.instances);
  e->set_tensor_parallel_size(p.memory.replica.tensor_parallel);
  e->set_pipeline_parallel_size(p.memory.replica.pipeline_parallel);
  e->set_gpu(p.gpu->name);
  e->set_max_batch_size(p.scheduler.max_batch_size);
  e->set_max_tokens_per_step(static_cast<int32_t>(p.scheduler.max_tokens_per_step));
}

}  // namespace

absl::StatusOr<ResolvedDisagg> ResolveDisagg(const config::Scenario& in) {
  const config::DisaggregatedConfig& dc = in.inference().disaggregated();
  if (in.inference().has_tensor_parallel_size() || in.inference().has_pipeline_parallel_size()) {
    return absl::InvalidArgumentError(
        "inference.tensor_parallel_size / pipeline_parallel_size (--tp, --pp) shape colocated "
        "replicas; with inference.disaggregated set each pool's own: "
        "inference.disaggregated.prefill.tensor_parallel_size and decode.tensor_parallel_size");
  }
  if (in.inference().has_frontend()) {
    return absl::InvalidArgumentError(
        "inference.frontend is not modelled with inference.disaggregated (each pool would "
        "count it); remove inference.frontend");
  }
  if (in.inference().dynamic_batch_size_tuning()) {
    return absl::InvalidArgumentError(
        "inference.dynamic_batch_size_tuning is modelled for colocated replicas only; remove "
        "it or inference.disaggregated");
  }
  ResolvedDisagg r;
  // Everything but the pools resolves as a colocated deployment of tp 1.
  config::Scenario colocated = in;
  config::InferenceConfig* inf = colocated.mutable_inference();
  inf->clear_disaggregated();
  inf->clear_tensor_parallel_size();
  inf->clear_pipeline_parallel_size();
  const bool gpus_given = in.cluster().has_num_gpus();
  colocated.mutable_cluster()->clear_num_gpus();
  absl::StatusOr<ResolvedServe> first = ResolveServe(colocated);
  if (!first.ok()) return first.status();

  absl::StatusOr<PoolShape> ps =
      ResolveShape(dc.prefill(), "inference.disaggregated.prefill", first->gpu);
  if (!ps.ok()) return ps.status();
  absl::StatusOr<PoolShape> ds =
      ResolveShape(dc.decode(), "inference.disaggregated.decode", first->gpu);
  if (!ds.ok()) return ds.status();
  const int prefill_gpus = ps->instances * ps->tp * ps->pp;
  const int decode_gpus = ds->instances * ds->tp * ds->pp;
  const int per_node = std::max(1, first->gpus_per_node);
  // A decode pool of another GPU type starts on a fresh node.
  const int decode_first =
      ps->gpu == ds->gpu ? prefill_gpus : (prefill_gpus + per_node - 1) / per_node * per_node;
  const int needed = decode_first + decode_gpus;
  if (gpus_given && in.cluster().num_gpus() < needed) {
    return absl::InvalidArgumentError(
        absl::StrCat("cluster.num_gpus=", in.cluster().num_gpus(),
                     " cannot hold the pools (prefill ", prefill_gpus, " + decode ", decode_gpus,
                     " GPUs need ", needed, "); raise it to ", needed, " or leave it unset"));
  }
  colocated.mutable_cluster()->set_num_gpus(gpus_given ? in.cluster().num_gpus() : needed);
  absl::StatusOr<ResolvedServe> base = ResolveServe(colocated);
  if (!base.ok()) return base.status();
  r.base = *std::move(base);

  CLUSTERSIM_RETURN_IF_ERROR(ResolvePool(r.base, *ps, "prefill", dc.prefill(), in, &r.prefill));
  CLUSTERSIM_RETURN_IF_ERROR(ResolvePool(r.base, *ds, "decode", dc.decode(), in, &r.decode));
  r.prefill.first_gpu = 0;
  r.decode.first_gpu = decode_first;

  r.layerwise = dc.layerwise_kv_transfer();
  const std::string routing = dc.has_routing() ? dc.routing() : "least-loaded";
  if (routing == "least-loaded") {
    r.routing = strategies::DisaggRouting::kLeastLoaded;
  } else if (routing == "round-robin") {
    r.routing = strategies::DisaggRouting::kRoundRobin;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("inference.disaggregated.routing=\"", routing,
                     "\" is not known; use least-loaded or round-robin"));
  }
  r.attainment = dc.has_slo_attainment() ? dc.slo_attainment() : 0.9;
  if (!(r.attainment > 0 && r.attainment <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inference.disaggregated.slo_attainment=", r.attainment, " must be in (0, 1]; e.g. 0.9"));
  }
  r.search = dc.search().enabled();
  r.search_total_gpus = dc.search().has_total_gpus() ? dc.search().total_gpus() : r.NumGpus();
  if (r.search && (r.search_total_gpus < 2 || r.search_total_gpus > 512)) {
    return absl::InvalidArgumentError(
        absl::StrCat("inference.disaggregated.search.total_gpus=", r.search_total_gpus,
                     " must be between 2 and 512 (a prefill and a decode GPU at least)"));
  }
  r.search_rate = dc.search().request_rate_per_s();
  if (!(r.search_rate >= 0 && r.search_rate <= 1e6)) {
    return absl::InvalidArgumentError(
        absl::StrCat("inference.disaggregated.search.request_rate_per_s=", r.search_rate,
                     " must be between 0 and 1e6"));
  }

  // Echo: the pools as resolved; the colocated tp/pp fields do not apply.
  config::InferenceConfig* ei = r.base.echo.mutable_inference();
  ei->clear_tensor_parallel_size();
  ei->clear_pipeline_parallel_size();
  config::DisaggregatedConfig* ed = ei->mutable_disaggregated();
  EchoPool(r.prefill, ed->mutable_prefill());
  EchoPool(r.decode, ed->mutable_decode());
  ed->set_layerwise_kv_transfer(r.layerwise);
  ed->set_routing(routing);
  ed->set_slo_attainment(r.attainment);
  if (r.search) {
    ed->mutable_search()->set_enabled(true);
    ed->mutable_search()->set_total_gpus(r.search_total_gpus);
    if (r.search_rate > 0) ed->mutable_search()->set_request_rate_per_s(r.search_rate);
  }
  return r;
}

absl::StatusOr<ResolvedDisagg> ReshapeDisagg(const config::Scenario& scenario,
                                             int prefill_instances, int prefill_tp,
                                             int decode_instances, int decode_tp) {
  config::Scenario s = scenario;
  s.mutable_cluster()->clear_num_gpus();
  config::DisaggregatedConfig* d = s.mutable_inference()->mutable_disaggregated();
  d->clear_search();
  auto shape = [](config::DisaggPool* p, int instances, int tp) {
    p->clear_num_gpus();
    p->set_num_instances(instances);
    p->set_tensor_parallel_size(tp);
    p->set_pipeline_parallel_size(1);
  };
  shape(d->mutable_prefill(), prefill_instances, prefill_tp);
  shape(d->mutable_decode(), decode_instances, decode_tp);
  return ResolveDisagg(s);
}

}  // namespace clustersim::scenarios
