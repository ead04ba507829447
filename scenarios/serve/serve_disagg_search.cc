#include "scenarios/serve/serve_disagg_search.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scenarios/serve/serve_disagg_model.h"
#include "scenarios/serve/serve_goodput.h"

namespace clustersim::scenarios {
namespace {

// One candidate of the ratio search.
absl::StatusOr<config::DisaggCandidate> Candidate(const config::Scenario& scenario,
                                                  const ResolvedDisagg& asked, int pi, int pt,
                                                  int di, int dt, const std::atomic<bool>* cancel) {
  config::DisaggCandidate c;
  c.set_prefill_instances(pi);
  c.set_prefill_tp(pt);
  c.set_decode_instances(di);
  c.set_decode_tp(dt);
  c.set_num_gpus(pi * pt + di * dt);
  constexpr int kSteps = 10;
  absl::StatusOr<GoodputFound> g;
  std::optional<double> at_rate;
  if (di == 0) {  // colocated: pi replicas of tp pt
    config::Scenario s = scenario;
    s.mutable_inference()->clear_disaggregated();
    s.mutable_inference()->set_tensor_parallel_size(pt);
    s.mutable_inference()->set_pipeline_parallel_size(1);
    s.mutable_cluster()->set_num_gpus(pi * pt);
    absl::StatusOr<ResolvedServe> r = ResolveServe(s);
    if (!r.ok()) {
      c.set_status(std::string(r.status().message()));
      return c;
    }
    g = ColocatedGoodput(*r, DisaggTargets(asked), kSteps);
  } else {
    absl::StatusOr<ResolvedDisagg> r = ReshapeDisagg(scenario, pi, pt, di, dt);
    if (!r.ok()) {
      c.set_status(std::string(r.status().message()));
      return c;
    }
    absl::StatusOr<std::unique_ptr<DisaggModel>> model = DisaggModel::Create(*r);
    if (!model.ok()) return model.status();
    absl::StatusOr<strategies::DisaggRun> burst = (*model)->Simulate(0, cancel);
    if (!burst.ok()) return burst.status();
    g = DisaggGoodput(*r, **model, BurstCapacity(*burst), kSteps, cancel);
    if (g.ok() && asked.search_rate > 0) {
      absl::StatusOr<strategies::DisaggRun> run = (*model)->Simulate(asked.search_rate, cancel);
      if (!run.ok()) return run.status();
      at_rate = SloAttainment(run->requests, DisaggTargets(asked));
    }
  }
  if (!g.ok()) {
    if (g.status().code() != absl::StatusCode::kInvalidArgument) return g.status();
    c.set_status(std::string(g.status().message()));
    return c;
  }
  c.set_status(g->status);
  c.set_goodput_per_s(g->rate_per_s);
  c.set_goodput_per_gpu(g->rate_per_s / c.num_gpus());
  if (at_rate) c.set_attainment_at_rate(*at_rate);
  return c;
}

std::vector<int> TpChoices(const ResolvedDisagg& d) {
  const models::TransformerConfig& m = d.base.memory.replica.model;
  std::vector<int> out;
  for (int tp : {1, 2, 4, 8}) {
    if (tp <= std::max(1, d.base.gpus_per_node) && TensorParallelSplits(m, tp)) {
      out.push_back(tp);
    }
  }
  return out;
}

}  // namespace

absl::Status SearchDisaggRatios(const ResolvedDisagg& d, const config::Scenario& scenario,
                                const std::atomic<bool>* cancel, config::DisaggServeResult* out) {
  const int total = d.search_total_gpus;
  const std::vector<int> tps = TpChoices(d);
  std::vector<config::DisaggCandidate> all;
  for (int pt : tps) {
    if (total % pt == 0) {
      absl::StatusOr<config::DisaggCandidate> c =
          Candidate(scenario, d, total / pt, pt, 0, 0, cancel);
      if (!c.ok()) return c.status();
      all.push_back(*c);
    }
    for (int dt : tps) {
      for (int pi = 1; pi * pt + dt <= total; ++pi) {
        if ((total - pi * pt) % dt != 0) continue;
        absl::StatusOr<config::DisaggCandidate> c =
            Candidate(scenario, d, pi, pt, (total - pi * pt) / dt, dt, cancel);
        if (!c.ok()) return c.status();
        all.push_back(*c);
      }
    }
  }
  const bool rate = d.search_rate > 0;
  auto meets = [&](const config::DisaggCandidate& c) {
    return c.decode_instances() > 0 && c.attainment_at_rate() >= d.attainment;
  };
  std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
    if (rate && meets(a) != meets(b)) return meets(a);
    if (a.goodput_per_gpu() != b.goodput_per_gpu())
      return a.goodput_per_gpu() > b.goodput_per_gpu();
    return a.prefill_instances() * a.prefill_tp() < b.prefill_instances() * b.prefill_tp();
  });
  for (config::DisaggCandidate& c : all) *out->add_search() = std::move(c);
  out->set_search_detail(absl::StrCat(
      out->search_size(), " candidates on ", total,
      " GPUs (pp 1; tp from 1, 2, 4, 8 within a node; decode_instances 0 = colocated), ranked by "
      "goodput per GPU",
      rate ? absl::StrFormat(", those attaining at %.3g req/s first", d.search_rate) : ""));
  return absl::OkStatus();
}

}  // namespace clustersim::scenarios
