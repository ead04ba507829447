#include "scenarios/serve/serve_goodput.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "models/calibration.h"
#include "models/kernel_model.h"
#include "strategies/serving_iteration.h"
#include "strategies/serving_workload.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"

namespace clustersim::scenarios {
namespace {

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

double Tpot(const strategies::RequestRecord& r) {
  return (r.finish - r.first_token).ToMilliseconds() / static_cast<double>(r.output_tokens - 1);
}

}  // namespace

config::LatencyStats LatencyOf(std::vector<double> v) {
  config::LatencyStats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.set_p50(Percentile(v, 50));
  s.set_p90(Percentile(v, 90));
  s.set_p99(Percentile(v, 99));
  double sum = 0;
  for (double x : v) sum += x;
  s.set_mean(sum / static_cast<double>(v.size()));
  s.set_max(v.back());
  return s;
}

RequestFigures MeasureRequests(const std::vector<strategies::RequestRecord>& requests) {
  RequestFigures m;
  std::vector<double> ttft, tpot, e2e;
  sim::Time first = sim::Time::Infinite(), last = sim::Time::Zero();
  for (const strategies::RequestRecord& r : requests) {
    ttft.push_back((r.first_token - r.arrival).ToMilliseconds());
    e2e.push_back((r.finish - r.arrival).ToMilliseconds());
    if (r.output_tokens > 1) tpot.push_back(Tpot(r));
    m.output_tokens += static_cast<double>(r.output_tokens);
    m.prompt_tokens += static_cast<double>(r.prompt_tokens);
    first = std::min(first, r.arrival);
    last = std::max(last, r.finish);
  }
  m.requests = static_cast<double>(requests.size());
  m.ttft = LatencyOf(std::move(ttft));
  m.tpot = LatencyOf(std::move(tpot));
  m.e2e = LatencyOf(std::move(e2e));
  if (!requests.empty()) m.duration_s = (last - first).ToSeconds();
  return m;
}

double SloAttainment(const std::vector<strategies::RequestRecord>& requests, const SloTargets& t) {
  if (requests.empty()) return 0;
  int64_t met = 0;
  for (const strategies::RequestRecord& r : requests) {
    const bool ttft_ok =
        t.ttft_ms <= 0 || (r.first_token - r.arrival).ToMilliseconds() <= t.ttft_ms;
    const bool tpot_ok = t.tpot_ms <= 0 || r.output_tokens <= 1 || Tpot(r) <= t.tpot_ms;
    if (ttft_ok && tpot_ok) ++met;
  }
  return static_cast<double>(met) / static_cast<double>(requests.size());
}

absl::StatusOr<GoodputFound> FindGoodput(const SloTargets& t, double capacity,
                                         const SimulateAtRate& simulate, int steps) {
  GoodputFound g;
  if (!t.Any()) {
    g.status = "no target";
    return g;
  }
  if (!(capacity > 0)) {
    g.status = "unreachable";
    return g;
  }
  struct Point {
    double attainment = 0, output_per_s = 0;
  };
  auto at = [&](double rate) -> absl::StatusOr<Point> {
    absl::StatusOr<std::vector<strategies::RequestRecord>> r = simulate(rate);
    if (!r.ok()) return r.status();
    return Point{SloAttainment(*r, t), MeasureRequests(*r).OutputPerS()};
  };
  double lo = 0.01 * capacity, hi = capacity;
  absl::StatusOr<Point> low = at(lo);
  if (!low.ok()) return low.status();
  if (low->attainment < t.attainment) {
    g.status = "unreachable";
    g.attainment_at_rate = low->attainment;
    return g;
  }
  Point best = *low;
  absl::StatusOr<Point> high = at(hi);
  if (!high.ok()) return high.status();
  if (high->attainment >= t.attainment) {
    g.status = "capacity";
    lo = hi;
    best = *high;
  } else {
    g.status = "found";
    for (int i = 0; i < steps; ++i) {
      const double mid = 0.5 * (lo + hi);
      absl::StatusOr<Point> p = at(mid);
      if (!p.ok()) return p.status();
      if (p->attainment >= t.attainment) {
        lo = mid;
        best = *p;
      } else {
        hi = mid;
      }
    }
  }
  g.rate_per_s = lo;
  g.attainment_at_rate = best.attainment;
  g.output_tokens_per_s = best.output_per_s;
  return g;
}

absl::StatusOr<GoodputFound> ColocatedGoodput(const ResolvedServe& s, const SloTargets& t,
                                              int steps) {
  const models::ReplicaModel& replica = s.memory.replica;
  const models::InferenceMemory memory =
      models::EstimateInferenceMemory(s.memory, s.gpu->cuda_total_memory);
  if (!memory.fits) {
    return absl::InvalidArgumentError(absl::StrCat("colocated ", replica.model.name, " at tp ",
                                                   replica.tensor_parallel, " does not fit on ",
                                                   s.gpu->name));
  }
  absl::StatusOr<topology::Cluster> cluster = topology::BuildCluster(s.cluster);
  if (!cluster.ok()) return cluster.status();
  const topology::AnalyticNetwork network(*cluster);
  const models::KernelModel kernels(*s.gpu, ServingKernelParams(*s.gpu),
                                    models::Calibration::Shipped(s.gpu->name));
  strategies::ServingModelSpec spec{
      .replica = replica,
      .host_per_iteration = s.host_per_iteration,
      .host_per_sequence = s.host_per_sequence,
      .host_overlapped = s.host_overlapped,
      .eager_dispatch_per_kernel = s.eager_dispatch_per_kernel,
      .decode_attention_flops_per_sm_cycle = s.decode_attention_flops_per_sm_cycle,
      .decode_attention_grouped_gqa = s.decode_attention_grouped_gqa};
  for (int g = 0; g < replica.tensor_parallel * replica.pipeline_parallel; ++g) {
    spec.gpus.push_back(g);
  }
  absl::StatusOr<strategies::ServingCostModel> model =
      strategies::ServingCostModel::Create(spec, kernels, network);
  if (!model.ok()) return model.status();
  strategies::SchedulerConfig scheduler = s.scheduler;
  scheduler.kv_blocks = memory.kv_blocks;
  scheduler.sliding_window = replica.model.sliding_window;
  scheduler.SetKvWeights(memory.kv_footprint);
  const strategies::IterationCostFn cost = [&](const strategies::IterationTotals& x) {
    return model->Cost(x);
  };
  strategies::ServingWorkload w = s.workload;
  w.poisson = true;
  w.num_requests = (std::max(w.num_requests, w.batch_size) + s.replicas - 1) / s.replicas;
  // One replica at rate / replicas; rates below are per replica.
  auto simulate = [&](double rate) -> absl::StatusOr<std::vector<strategies::RequestRecord>> {
    absl::StatusOr<strategies::ServingRun> run =
        strategies::SimulateServing(strategies::GenerateRequests(w, rate), scheduler, cost, false);
    if (!run.ok()) return run.status();
    return std::move(run->requests);
  };
  absl::StatusOr<std::vector<strategies::RequestRecord>> burst = simulate(0);
  if (!burst.ok()) return burst.status();
  const RequestFigures b = MeasureRequests(*burst);
  const double capacity = b.duration_s > 0 ? b.requests / b.duration_s : 0;
  absl::StatusOr<GoodputFound> g = FindGoodput(t, capacity, simulate, steps);
  if (!g.ok()) return g.status();
  g->rate_per_s *= s.replicas;
  g->output_tokens_per_s *= s.replicas;
  return g;
}

}  // namespace clustersim::scenarios
