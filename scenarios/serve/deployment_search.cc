#include "scenarios/serve/deployment_search.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "models/inference_memory.h"
#include "scenarios/serve/serve_disagg_model.h"
#include "scenarios/serve/serve_disagg_resolve.h"
#include "scenarios/serve/serve_goodput.h"
#include "scenarios/serve/serve_resolve.h"
#include "scenarios/serve/serve_runner.h"

namespace clustersim::scenarios {
namespace {

using config::DeploymentCandidate;

std::string MissReason(const SearchSpace& space, double ttft_p99, double tpot_p99) {
  std::vector<std::string> parts;
  if (space.target_ttft_ms > 0 && ttft_p99 > space.target_ttft_ms) {
    parts.push_back(absl::StrFormat("p99 TTFT %.1f ms > %.4g ms", ttft_p99, space.target_ttft_ms));
  }
  if (space.target_tpot_ms > 0 && tpot_p99 > space.target_tpot_ms) {
    parts.push_back(absl::StrFormat("p99 TPOT %.2f ms > %.4g ms", tpot_p99, space.target_tpot_ms));
  }
  return absl::StrJoin(parts, "; ");
}

// The GPU and formats of a shape: aggregated and disaggregated shapes of one
// key compete on GPU count at the same price.
std::tuple<int, std::string, std::string> FormatKey(const Shape& s) {
  return {s.gpu, s.weight_dtype, s.kv_cache_dtype};
}

class Searcher {
 public:
  Searcher(const SearchSpace& space, const std::atomic<bool>* cancel,
           config::DeploymentSearchResult* out)
      : space_(space), cancel_(cancel), out_(out) {}

  absl::Status Aggregated(const Shape& shape);
  absl::Status Disaggregated(const Shape& shape);
  int fitting_shapes() const { return fitting_shapes_; }

 private:
  DeploymentCandidate Row(const Shape& shape, int num_gpus) const;
  // Fills the figures and the verdict of a simulated candidate.
  void Judge(double ttft_p99, double tpot_p99, double output_per_s, double output_per_request,
             DeploymentCandidate* c) const;
  bool Cancelled() const { return cancel_ != nullptr && cancel_->load(); }

  const SearchSpace& space_;
  const std::atomic<bool>* cancel_;
  config::DeploymentSearchResult* out_;
  // Fewest GPUs of an aggregated deployment meeting the targets, by FormatKey.
  std::map<std::tuple<int, std::string, std::string>, int> best_aggregated_;
  int fitting_shapes_ = 0;
};

DeploymentCandidate Searcher::Row(const Shape& shape, int num_gpus) const {
  const SearchGpu& g = space_.gpus[shape.gpu];
  DeploymentCandidate c;
  c.set_gpu(g.spec->name);
  c.set_num_gpus(num_gpus);
  c.set_mode(shape.disaggregated ? "disaggregated" : "aggregated");
  c.set_tensor_parallel(shape.disaggregated ? shape.decode_tp : shape.tp);
  c.set_pipeline_parallel(shape.pp);
  c.set_expert_parallel(shape.ep);
  c.set_weight_dtype(shape.weight_dtype);
  c.set_kv_cache_dtype(shape.kv_cache_dtype);
  c.set_max_batch_size(shape.max_batch_size);
  c.set_usd_per_gpu_hour(g.usd_per_gpu_hour);
  c.set_usd_per_hour(g.usd_per_gpu_hour * num_gpus);
  return c;
}

void Searcher::Judge(double ttft_p99, double tpot_p99, double output_per_s,
                     double output_per_request, DeploymentCandidate* c) const {
  c->set_simulated(true);
  c->set_ttft_p99_ms(ttft_p99);
  c->set_tpot_p99_ms(tpot_p99);
  c->set_output_tokens_per_s(output_per_s);
  const double offered_tokens_per_s = space_.rate_per_s * output_per_request;
  if (offered_tokens_per_s > 0) {
    c->set_usd_per_million_output_tokens(c->usd_per_hour() / (offered_tokens_per_s * 3600) * 1e6);
  }
  if (c->reason().empty()) c->set_reason(MissReason(space_, ttft_p99, tpot_p99));
  c->set_meets_slo(c->reason().empty());
}

absl::Status Searcher::Aggregated(const Shape& shape) {
  const int per_replica = shape.tp * shape.pp;
  const int most = space_.max_gpus / per_replica;
  const std::string name = ShapeName(space_, shape);
  DeploymentCandidate first = Row(shape, per_replica);
  first.set_replicas(1);
  first.set_name(absl::StrCat(name, " x 1"));
  absl::StatusOr<ResolvedServe> probe = ResolveServe(AggregatedScenario(space_, shape, 1));
  if (!probe.ok()) {
    out_->set_pruned_invalid(out_->pruned_invalid() + most);
    first.set_reason(std::string(probe.status().message()));
    *out_->add_candidate() = std::move(first);
    return absl::OkStatus();
  }
  if (!models::EstimateInferenceMemory(probe->memory, probe->gpu->cuda_total_memory).fits) {
    out_->set_pruned_memory(out_->pruned_memory() + most);
    first.set_reason(models::JudgeInferenceMemory(probe->memory, *probe->gpu).summary);
    *out_->add_candidate() = std::move(first);
    return absl::OkStatus();
  }
  ++fitting_shapes_;
  double capacity = 0;  // requests/s of one replica; 0: not simulated yet
  for (int r = 1; r <= most; ++r) {
    if (Cancelled()) return absl::CancelledError("deployment search cancelled");
    if (capacity > 0 && r * capacity <= space_.rate_per_s) {
      out_->set_pruned_capacity(out_->pruned_capacity() + 1);
      continue;
    }
    absl::StatusOr<ResolvedServe> s = ResolveServe(AggregatedScenario(space_, shape, r));
    if (!s.ok()) return s.status();
    // The targets are judged here; RunServe would bisect for a sustainable rate.
    s->target_tpot_ms = 0;
    s->target_ttft_ms = 0;
    absl::StatusOr<config::ServeResult> run = RunServe(*s, {.curve = false});
    if (!run.ok()) return run.status();
    out_->set_simulated(out_->simulated() + 1);
    capacity = run->capacity_requests_per_s() / r;
    DeploymentCandidate c = Row(shape, r * per_replica);
    c.set_replicas(r);
    c.set_name(absl::StrCat(name, " x ", r));
    c.set_reproduce(absl::StrCat(
        "--gpu ", c.gpu(), " --num-gpus ", c.num_gpus(), " --tp ", shape.tp, " --pp ", shape.pp,
        shape.ep > 1 ? absl::StrCat(" --ep ", shape.ep) : "", " --weight-dtype ",
        shape.weight_dtype, " --kv-cache-dtype ", shape.kv_cache_dtype, " --max-batch-size ",
        shape.max_batch_size, " --num-requests ", r * space_.requests_per_replica));
    if (run->saturated()) {
      c.set_reason(absl::StrFormat("saturated: %.4g req/s per replica >= its capacity %.4g",
                                   space_.rate_per_s / r, capacity));
    }
    const double per_request =
        run->requests_per_s() > 0 ? run->output_tokens_per_s() / run->requests_per_s() : 0;
    Judge(run->ttft_ms().p99(), run->tpot_ms().p99(), run->output_tokens_per_s(), per_request, &c);
    const bool meets = c.meets_slo();
    *out_->add_candidate() = std::move(c);
    if (meets) {
      out_->set_pruned_dominated(out_->pruned_dominated() + most - r);
      int& best = best_aggregated_.try_emplace(FormatKey(shape), r * per_replica).first->second;
      best = std::min(best, r * per_replica);
      break;
    }
  }
  return absl::OkStatus();
}

absl::Status Searcher::Disaggregated(const Shape& shape) {
  const int pt = shape.prefill_tp, dt = shape.decode_tp;
  // Every (prefill, decode) instance count within max_gpus, by GPUs.
  std::vector<std::pair<int, int>> counts;
  for (int total = pt + dt; total <= space_.max_gpus; ++total) {
    for (int pi = 1; pi * pt + dt <= total; ++pi) {
      if ((total - pi * pt) % dt == 0) counts.push_back({pi, (total - pi * pt) / dt});
    }
  }
  const std::string name = ShapeName(space_, shape);
  config::Scenario base = AggregatedScenario(space_, shape, 1);
  base.mutable_inference()->clear_tensor_parallel_size();
  base.mutable_inference()->clear_pipeline_parallel_size();
  base.mutable_inference()->clear_expert_parallel_size();
  base.mutable_inference()->clear_max_batch_size();
  base.mutable_inference()->mutable_disaggregated();
  auto scenario_for = [&](int pi, int di) {
    config::Scenario s = base;
    s.mutable_inference()->mutable_workload()->set_num_requests(space_.requests_per_replica *
                                                                std::max(pi, di));
    return s;
  };
  auto row_for = [&](int pi, int di) {
    DeploymentCandidate c = Row(shape, pi * pt + di * dt);
    c.set_replicas(pi + di);
    c.set_prefill_instances(pi);
    c.set_prefill_tp(pt);
    c.set_decode_instances(di);
    c.set_decode_tp(dt);
    c.set_name(absl::StrCat(name, " ", pi, "P+", di, "D"));
    return c;
  };
  absl::StatusOr<ResolvedDisagg> probe = ReshapeDisagg(scenario_for(1, 1), 1, pt, 1, dt);
  if (!probe.ok()) {
    const bool memory = absl::StrContains(probe.status().message(), "does not fit");
    if (memory) {
      out_->set_pruned_memory(out_->pruned_memory() + static_cast<int>(counts.size()));
    } else {
      out_->set_pruned_invalid(out_->pruned_invalid() + static_cast<int>(counts.size()));
    }
    DeploymentCandidate c = row_for(1, 1);
    c.set_reason(std::string(probe.status().message()));
    *out_->add_candidate() = std::move(c);
    return absl::OkStatus();
  }
  ++fitting_shapes_;
  // Past the cheapest aggregated deployment of the same GPU and formats, a
  // disaggregated one costs more.
  const auto best = best_aggregated_.find(FormatKey(shape));
  const int cap = best == best_aggregated_.end() ? space_.max_gpus : best->second - 1;
  double capacity = 0;  // requests/s of one prefill + one decode instance
  int met_at = 0;       // GPUs of the first count that meets; 0: none yet
  for (const auto& [pi, di] : counts) {
    const int gpus = pi * pt + di * dt;
    if (gpus > cap || (met_at > 0 && gpus > met_at)) {
      out_->set_pruned_dominated(out_->pruned_dominated() + 1);
      continue;
    }
    // Both pools scaled to the larger count bound what pi + di carry.
    if (capacity > 0 && std::max(pi, di) * capacity <= space_.rate_per_s) {
      out_->set_pruned_capacity(out_->pruned_capacity() + 1);
      continue;
    }
    if (Cancelled()) return absl::CancelledError("deployment search cancelled");
    absl::StatusOr<ResolvedDisagg> d = ReshapeDisagg(scenario_for(pi, di), pi, pt, di, dt);
    if (!d.ok()) return d.status();
    absl::StatusOr<std::unique_ptr<DisaggModel>> model = DisaggModel::Create(*d);
    if (!model.ok()) return model.status();
    if (capacity == 0) {
      absl::StatusOr<strategies::DisaggRun> burst = (*model)->Simulate(0, cancel_);
      if (!burst.ok()) return burst.status();
      capacity = BurstCapacity(*burst) / std::max(pi, di);
      if (std::max(pi, di) * capacity <= space_.rate_per_s) {
        out_->set_pruned_capacity(out_->pruned_capacity() + 1);
        continue;
      }
    }
    absl::StatusOr<strategies::DisaggRun> run = (*model)->Simulate(space_.rate_per_s, cancel_);
    if (!run.ok()) return run.status();
    out_->set_simulated(out_->simulated() + 1);
    const RequestFigures f = MeasureRequests(run->requests);
    DeploymentCandidate c = row_for(pi, di);
    c.set_reproduce(absl::StrCat("inference.disaggregated { prefill { num_instances: ", pi,
                                 " tensor_parallel_size: ", pt, " } decode { num_instances: ", di,
                                 " tensor_parallel_size: ", dt, " } } with cluster.gpu \"", c.gpu(),
                                 "\" and workload.num_requests ",
                                 space_.requests_per_replica * std::max(pi, di)));
    Judge(f.ttft.p99(), f.tpot.p99(), f.OutputPerS(),
          f.requests > 0 ? f.output_tokens / f.requests : 0, &c);
    if (c.meets_slo() && met_at == 0) met_at = gpus;
    *out_->add_candidate() = std::move(c);
  }
  return absl::OkStatus();
}

std::string Describe(const SearchSpace& space, const config::DeploymentSearchResult& r) {
  // ResolvePricing names a price the scenario gives "scenario".
  const bool own_prices =
      std::any_of(space.gpus.begin(), space.gpus.end(),
                  [](const SearchGpu& g) { return g.price_source == "scenario"; });
  return absl::StrCat(
      r.candidates(), " candidates (", r.simulated(),
      " simulated; not simulated: ", r.pruned_memory(), " memory, ", r.pruned_capacity(),
      " capacity below the rate, ", r.pruned_dominated(), " dominated by a cheaper count, ",
      r.pruned_invalid(), " refused); aggregated: one replica simulated at rate / replicas with ",
      space.requests_per_replica,
      " requests; disaggregated: both pools at the rate with that many per instance of the "
      "larger pool; $/M output tokens at the offered rate; ",
      own_prices ? "the scenario's prices where given, else the catalog's"
                 : "catalog default prices");
}

}  // namespace

config::Scenario AggregatedScenario(const SearchSpace& space, const Shape& shape, int replicas) {
  config::Scenario s = space.base;
  s.mutable_cluster()->set_gpu(space.gpus[shape.gpu].spec->name);
  s.mutable_cluster()->set_num_gpus(replicas * shape.tp * shape.pp);
  config::InferenceConfig* i = s.mutable_inference();
  i->set_tensor_parallel_size(shape.tp);
  i->set_pipeline_parallel_size(shape.pp);
  if (shape.ep > 1) i->set_expert_parallel_size(shape.ep);
  i->set_weight_dtype(shape.weight_dtype);
  i->set_kv_cache_dtype(shape.kv_cache_dtype);
  if (shape.max_batch_size > 0) i->set_max_batch_size(shape.max_batch_size);
  if (space.target_ttft_ms > 0) i->set_target_time_to_first_token_ms(space.target_ttft_ms);
  if (space.target_tpot_ms > 0) i->set_target_time_per_output_token_ms(space.target_tpot_ms);
  i->mutable_workload()->set_num_requests(replicas * space.requests_per_replica);
  return s;
}

void RankCandidates(config::DeploymentSearchResult* result) {
  auto group = [](const DeploymentCandidate& c) {
    return c.meets_slo() ? 0 : c.simulated() ? 1 : 2;
  };
  const double ttft = result->target_ttft_ms(), tpot = result->target_tpot_ms();
  auto excess = [&](const DeploymentCandidate& c) {
    double e = 0;
    if (ttft > 0) e = std::max(e, c.ttft_p99_ms() / ttft);
    if (tpot > 0) e = std::max(e, c.tpot_p99_ms() / tpot);
    return e;
  };
  auto* all = result->mutable_candidate();
  std::stable_sort(
      all->begin(), all->end(), [&](const DeploymentCandidate& a, const DeploymentCandidate& b) {
        if (group(a) != group(b)) return group(a) < group(b);
        if (group(a) == 0) {
          return std::forward_as_tuple(a.usd_per_million_output_tokens(), a.num_gpus(),
                                       a.tpot_p99_ms(), a.name()) <
                 std::forward_as_tuple(b.usd_per_million_output_tokens(), b.num_gpus(),
                                       b.tpot_p99_ms(), b.name());
        }
        if (group(a) == 1) {
          const double ea = excess(a), eb = excess(b);
          return std::forward_as_tuple(ea, a.usd_per_million_output_tokens(), a.name()) <
                 std::forward_as_tuple(eb, b.usd_per_million_output_tokens(), b.name());
        }
        return a.name() < b.name();
      });
  for (int i = 0; i < all->size(); ++i) (*all)[i].set_rank(i + 1);
}

void MarkParetoFront(config::DeploymentSearchResult* result) {
  std::vector<DeploymentCandidate*> meeting;
  for (DeploymentCandidate& c : *result->mutable_candidate()) {
    c.set_pareto(false);
    if (c.meets_slo()) meeting.push_back(&c);
  }
  std::stable_sort(meeting.begin(), meeting.end(), [](const auto* a, const auto* b) {
    return std::forward_as_tuple(a->usd_per_million_output_tokens(), a->tpot_p99_ms(), a->name()) <
           std::forward_as_tuple(b->usd_per_million_output_tokens(), b->tpot_p99_ms(), b->name());
  });
  // Ascending cost: on the front when its TPOT beats every cheaper one's.
  double best_tpot = std::numeric_limits<double>::infinity();
  for (DeploymentCandidate* c : meeting) {
    if (c->tpot_p99_ms() < best_tpot) {
      c->set_pareto(true);
      best_tpot = c->tpot_p99_ms();
    }
  }
}

absl::StatusOr<config::DeploymentSearchResult> SearchDeployments(const config::Scenario& scenario,
                                                                 const std::atomic<bool>* cancel) {
  absl::StatusOr<SearchSpace> space = ResolveSearchSpace(scenario);
  if (!space.ok()) return space.status();
  config::DeploymentSearchResult out;
  out.set_model(space->model.name);
  out.set_request_rate_per_s(space->rate_per_s);
  out.set_target_ttft_ms(space->target_ttft_ms);
  out.set_target_tpot_ms(space->target_tpot_ms);
  out.set_requests_per_replica(space->requests_per_replica);
  out.set_top_rows(space->top);
  std::vector<std::string> gpus;
  for (const SearchGpu& g : space->gpus) {
    gpus.push_back(
        absl::StrFormat("%s %.4g $/GPU-h (%s)", g.spec->name, g.usd_per_gpu_hour, g.price_source));
  }
  out.set_gpus(absl::StrJoin(gpus, ", "));
  Searcher searcher(*space, cancel, &out);
  const std::vector<Shape> shapes = EnumerateShapes(*space);
  for (const Shape& shape : shapes) {
    absl::Status s =
        shape.disaggregated ? searcher.Disaggregated(shape) : searcher.Aggregated(shape);
    if (!s.ok()) return s;
  }
  if (searcher.fitting_shapes() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model ", space->model.name, " does not fit any candidate of the search (", shapes.size(),
        " shapes on ", absl::StrJoin(gpus, ", "), ", at most ", space->max_gpus,
        " GPUs); raise inference.deployment_search.max_gpus (--search-max-gpus), add GPUs with "
        "more memory (--search-gpus) or add fp8 weights (weight_dtypes)"));
  }
  int candidates = out.simulated() + out.pruned_memory() + out.pruned_capacity() +
                   out.pruned_dominated() + out.pruned_invalid();
  out.set_candidates(candidates);
  int meeting = 0;
  for (const DeploymentCandidate& c : out.candidate()) meeting += c.meets_slo() ? 1 : 0;
  out.set_meeting_slo(meeting);
  RankCandidates(&out);
  MarkParetoFront(&out);
  out.set_method(Describe(*space, out));
  return out;
}

}  // namespace clustersim::scenarios
