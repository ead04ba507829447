#include "scenarios/serve/deployment_space.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/inference_memory.h"
#include "models/pricing.h"
#include "models/quantization.h"
#include "scenarios/serve/serve_resolve.h"

namespace clustersim::scenarios {
namespace {

constexpr char kField[] = "inference.deployment_search.";

absl::Status Bad(std::string_view field, std::string_view flag, const auto& value,
                 std::string_view rule) {
  return absl::InvalidArgumentError(
      absl::StrCat(kField, std::string(field), flag.empty() ? "" : " (", std::string(flag),
                   flag.empty() ? "" : ")", "=", value, " ", std::string(rule)));
}

// The scenario without the searched dimensions and the cluster's shape (each
// candidate sets its own).
config::Scenario BaseOf(const config::Scenario& in) {
  config::Scenario s = in;
  config::InferenceConfig* i = s.mutable_inference();
  i->clear_deployment_search();
  i->clear_tensor_parallel_size();
  i->clear_pipeline_parallel_size();
  i->clear_expert_parallel_size();
  i->clear_weight_dtype();
  i->clear_kv_cache_dtype();
  i->clear_max_batch_size();
  config::ClusterConfig* c = s.mutable_cluster();
  c->clear_gpu();
  c->clear_num_gpus();
  c->clear_gpus_per_node();
  c->clear_node();
  c->clear_custom_node();
  return s;
}

std::vector<std::string> PricedGpus() {
  std::vector<std::string> out;
  for (const std::string& name : models::GpuCatalog::Default().Names()) {
    if (models::PriceCatalog::Default().DefaultFor(name) != nullptr) out.push_back(name);
  }
  return out;
}

absl::Status CheckInts(const google::protobuf::RepeatedField<int32_t>& values,
                       std::string_view field, std::string_view flag, int lo, int hi,
                       std::vector<int> fallback, std::vector<int>* out) {
  *out = values.empty() ? std::move(fallback) : std::vector<int>(values.begin(), values.end());
  for (int v : *out) {
    if (v < lo || v > hi) {
      return Bad(field, flag, v, absl::StrCat("must be between ", lo, " and ", hi));
    }
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return absl::OkStatus();
}

// Every priced GPU must be searched, and every price a positive hourly rate.
absl::Status CheckGpuPrices(const config::DeploymentSearchConfig& ds,
                            const std::vector<std::string>& names, bool price_given) {
  if (ds.gpu_prices().empty()) return absl::OkStatus();
  if (price_given) {
    return absl::InvalidArgumentError(
        "pricing.usd_per_gpu_hour / price_source (--usd-per-gpu-hour, --price-source) and "
        "inference.deployment_search.gpu_prices (--search-gpu-prices) both price the search; "
        "keep one (gpu_prices prices each GPU)");
  }
  std::vector<std::string> keys;
  for (const auto& [name, usd] : ds.gpu_prices()) keys.push_back(name);
  std::sort(keys.begin(), keys.end());  // map order is unspecified; errors name the first
  for (const std::string& name : keys) {
    const double usd = ds.gpu_prices().at(name);
    if (!models::GpuCatalog::Default().Find(name).ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          kField, "gpu_prices (--search-gpu-prices) prices \"", name,
          "\", which is not a catalog GPU; `clustersim list gpus` lists them"));
    }
    if (!std::binary_search(names.begin(), names.end(), name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          kField, "gpu_prices (--search-gpu-prices) prices \"", name,
          "\", which the search does not include; add it to gpus (--search-gpus) or drop "
          "its price"));
    }
    if (!std::isfinite(usd) || usd <= 0 || usd > 1000) {
      return Bad(absl::StrCat("gpu_prices[", name, "]"), "--search-gpu-prices", usd,
                 "must be a price per GPU-hour in (0, 1000] US dollars, e.g. 2.49");
    }
  }
  return absl::OkStatus();
}

bool HasFp8(const models::GpuSpec& gpu) { return gpu.Supports(models::Dtype::kFp8); }

}  // namespace

absl::StatusOr<SearchSpace> ResolveSearchSpace(const config::Scenario& scenario) {
  const config::InferenceConfig& inf = scenario.inference();
  const config::DeploymentSearchConfig& ds = inf.deployment_search();
  if (inf.has_disaggregated()) {
    return absl::InvalidArgumentError(
        "inference.disaggregated is set, but the deployment search chooses aggregated or "
        "disaggregated itself; remove inference.disaggregated (or drop --search)");
  }
  const config::InferenceWorkload& w = inf.workload();
  if (w.has_kind() && w.kind() != "poisson") {
    return absl::InvalidArgumentError(
        absl::StrCat("inference.workload.kind=\"", w.kind(),
                     "\": the deployment search sizes a deployment for a Poisson request rate; set "
                     "inference.workload.request_rate_per_s (--request-rate) instead"));
  }
  if (!w.has_request_rate_per_s()) {
    return absl::InvalidArgumentError(
        "the deployment search needs a request rate: set inference.workload.request_rate_per_s "
        "(--request-rate), e.g. 10");
  }
  SearchSpace space;
  space.base = BaseOf(scenario);
  space.base.mutable_inference()->mutable_workload()->set_kind("poisson");

  // GPUs: each must be in the catalog and have a price.
  const std::vector<std::string> priced = PricedGpus();
  std::vector<std::string> names(ds.gpus().begin(), ds.gpus().end());
  if (names.empty()) {
    names = priced;
    for (const auto& [name, usd] : ds.gpu_prices()) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  const bool price_given =
      scenario.pricing().has_usd_per_gpu_hour() || scenario.pricing().has_price_source();
  if (absl::Status s = CheckGpuPrices(ds, names, price_given); !s.ok()) return s;
  if (price_given && names.size() > 1) {
    return absl::InvalidArgumentError(
        "pricing.usd_per_gpu_hour / price_source (--usd-per-gpu-hour, --price-source) price one "
        "GPU type, but the search compares several; search one GPU (--search-gpus) or drop the "
        "price to use each GPU's catalog price");
  }
  for (const std::string& name : names) {
    absl::StatusOr<const models::GpuSpec*> gpu = models::GpuCatalog::Default().Find(name);
    if (!gpu.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          kField, "gpus (--search-gpus): \"", name, "\" is not a catalog GPU; use some of: ",
          absl::StrJoin(priced, ", "), " (those with a price; `clustersim list gpus` lists all)"));
    }
    const auto own_price = ds.gpu_prices().find(name);
    if (!price_given && own_price == ds.gpu_prices().end() &&
        models::PriceCatalog::Default().DefaultFor(name) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          kField, "gpus (--search-gpus): \"", name,
          "\" has no catalog price, so no $/M tokens; give its price (--search-gpu-prices ",
          name, "=USD), or use GPUs with a price: ", absl::StrJoin(priced, ", ")));
    }
    // The GPU's node size, price and every other field, checked by the
    // colocated resolver on a probe deployment.
    config::Scenario probe = space.base;
    if (own_price != ds.gpu_prices().end()) {
      probe.mutable_pricing()->set_usd_per_gpu_hour(own_price->second);
    }
    probe.mutable_cluster()->set_gpu(name);
    probe.mutable_cluster()->set_num_gpus(8);
    absl::StatusOr<ResolvedServe> r = ResolveServe(probe);
    if (!r.ok()) return r.status();
    if (space.gpus.empty()) {
      space.model = r->memory.replica.model;
      space.rate_per_s = r->workload.rate_per_s;
      space.requests_per_replica = r->workload.num_requests;
      space.target_ttft_ms = r->target_ttft_ms;
      space.target_tpot_ms = r->target_tpot_ms;
    }
    space.gpus.push_back({.spec = *gpu,
                          .gpus_per_node = std::max(1, r->gpus_per_node),
                          .usd_per_gpu_hour = r->pricing.usd_per_gpu_hour,
                          .price_source = r->pricing.name});
  }
  if (space.gpus.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kField, "gpus (--search-gpus) is empty; name GPUs, e.g. h100-sxm5-80gb"));
  }
  if (space.target_ttft_ms <= 0 && space.target_tpot_ms <= 0) {
    return absl::InvalidArgumentError(
        "the deployment search needs a latency target: set "
        "inference.target_time_to_first_token_ms and/or target_time_per_output_token_ms "
        "(--target-ttft-ms, --target-tpot-ms), both p99");
  }
  if (space.base.inference().has_mlperf_benchmark()) {
    // The targets are resolved; the candidates carry them explicitly.
    space.base.mutable_inference()->clear_mlperf_benchmark();
  }

  space.max_gpus = ds.has_max_gpus() ? ds.max_gpus() : 16;
  if (space.max_gpus < 1 || space.max_gpus > 1024) {
    return Bad("max_gpus", "--search-max-gpus", space.max_gpus, "must be between 1 and 1024");
  }
  if (auto s = CheckInts(ds.tensor_parallel(), "tensor_parallel", "", 1, 64, {1, 2, 4, 8},
                         &space.tensor_parallel);
      !s.ok()) {
    return s;
  }
  if (auto s = CheckInts(ds.pipeline_parallel(), "pipeline_parallel", "", 1, 64, {1, 2},
                         &space.pipeline_parallel);
      !s.ok()) {
    return s;
  }
  if (auto s = CheckInts(ds.max_batch_sizes(), "max_batch_sizes", "", 1, 100000, {64, 256},
                         &space.max_batch_sizes);
      !s.ok()) {
    return s;
  }
  space.weight_dtypes.assign(ds.weight_dtypes().begin(), ds.weight_dtypes().end());
  if (space.weight_dtypes.empty()) space.weight_dtypes = {"bf16", "fp8"};
  for (const std::string& d : space.weight_dtypes) {
    if (auto f = models::ParseWeightFormat(d, absl::StrCat(kField, "weight_dtypes")); !f.ok()) {
      return f.status();
    }
  }
  space.kv_cache_dtypes.assign(ds.kv_cache_dtypes().begin(), ds.kv_cache_dtypes().end());
  if (space.kv_cache_dtypes.empty()) space.kv_cache_dtypes = {"bf16", "fp8"};
  for (const std::string& d : space.kv_cache_dtypes) {
    if (auto f = models::ParseKvCacheDtype(d, absl::StrCat(kField, "kv_cache_dtypes")); !f.ok()) {
      return f.status();
    }
  }
  space.disaggregated = !ds.has_disaggregated() || ds.disaggregated();
  if (ds.has_requests_per_replica()) {
    space.requests_per_replica = ds.requests_per_replica();
    if (space.requests_per_replica < 1 || space.requests_per_replica > 100000) {
      return Bad("requests_per_replica", "--search-requests", space.requests_per_replica,
                 "must be between 1 and 100000");
    }
  }
  space.top = ds.has_top() ? ds.top() : 15;
  if (space.top < 1) return Bad("top", "--search-top", space.top, "must be >= 1");
  return space;
}

std::vector<Shape> EnumerateShapes(const SearchSpace& space) {
  const models::TransformerConfig& m = space.model;
  std::vector<Shape> out;
  for (int g = 0; g < static_cast<int>(space.gpus.size()); ++g) {
    const SearchGpu& gpu = space.gpus[g];
    std::vector<int> tps;
    for (int tp : space.tensor_parallel) {
      if (tp <= gpu.gpus_per_node && tp <= space.max_gpus && TensorParallelSplits(m, tp)) {
        tps.push_back(tp);
      }
    }
    for (const std::string& wd : space.weight_dtypes) {
      // fp8 and the 4-bit formats need the GPU's support (models/quantization.h).
      absl::StatusOr<models::WeightFormat> f = models::ParseWeightFormat(wd, "");
      if (!f.ok() || !models::CheckWeightFormatSupported(*gpu.spec, *f, "").ok()) continue;
      // fp8-mixed applies to dense models only.
      if (!models::CheckWeightFormatFitsModel({.model = m, .weight_format = *f}).ok()) continue;
      for (const std::string& kv : space.kv_cache_dtypes) {
        if (kv == "fp8" && !HasFp8(*gpu.spec)) continue;
        for (int tp : tps) {
          for (int pp : space.pipeline_parallel) {
            if (m.num_layers % pp != 0 || tp * pp > space.max_gpus) continue;
            std::vector<int> eps = {1};
            if (m.num_experts > 0 && tp > 1 && m.num_experts % tp == 0) eps.push_back(tp);
            for (int ep : eps) {
              for (int batch : space.max_batch_sizes) {
                out.push_back({.gpu = g,
                               .tp = tp,
                               .pp = pp,
                               .ep = ep,
                               .weight_dtype = wd,
                               .kv_cache_dtype = kv,
                               .max_batch_size = batch});
              }
            }
          }
        }
        if (!space.disaggregated) continue;
        for (int pt : tps) {
          for (int dt : tps) {
            if (pt + dt > space.max_gpus) continue;
            out.push_back({.gpu = g,
                           .disaggregated = true,
                           .prefill_tp = pt,
                           .decode_tp = dt,
                           .weight_dtype = wd,
                           .kv_cache_dtype = kv});
          }
        }
      }
    }
  }
  return out;
}

std::string ShapeName(const SearchSpace& space, const Shape& s) {
  const std::string formats = absl::StrCat(s.weight_dtype, "/kv ", s.kv_cache_dtype);
  if (s.disaggregated) {
    return absl::StrCat(space.gpus[s.gpu].spec->name, " disagg prefill tp ", s.prefill_tp,
                        " decode tp ", s.decode_tp, " ", formats);
  }
  return absl::StrCat(space.gpus[s.gpu].spec->name, " agg tp ", s.tp, " pp ", s.pp, " ep ", s.ep,
                      " ", formats, " batch ", s.max_batch_size);
}

}  // namespace clustersim::scenarios
