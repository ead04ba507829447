#include "scenarios/serve/serve_disagg_model.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "models/calibration.h"
#include "scenarios/serve/serve_resolve.h"
#include "sim/check.h"
#include "strategies/serving_workload.h"

namespace clustersim::scenarios {

using strategies::DisaggRun;

absl::StatusOr<std::unique_ptr<DisaggModel>> DisaggModel::Create(const ResolvedDisagg& d) {
  auto m = std::unique_ptr<DisaggModel>(new DisaggModel(d));
  absl::StatusOr<topology::Cluster> cluster = topology::BuildCluster(d.base.cluster);
  if (!cluster.ok()) return cluster.status();
  m->cluster_ = std::make_unique<topology::Cluster>(*std::move(cluster));
  m->network_ = std::make_unique<topology::AnalyticNetwork>(*m->cluster_);
  for (const ResolvedPool* p : {&d.prefill, &d.decode}) {
    m->kernels_.push_back(std::make_unique<models::KernelModel>(
        *p->gpu, ServingKernelParams(*p->gpu), models::Calibration::Shipped(p->gpu->name)));
    strategies::ServingModelSpec spec{
        .replica = p->memory.replica,
        .host_per_iteration = d.base.host_per_iteration,
        .host_per_sequence = d.base.host_per_sequence,
        .host_overlapped = d.base.host_overlapped,
      .eager_dispatch_per_kernel = d.base.eager_dispatch_per_kernel,
        .decode_attention_flops_per_sm_cycle = d.base.decode_attention_flops_per_sm_cycle,
        .decode_attention_grouped_gqa = d.base.decode_attention_grouped_gqa};
    for (int g = 0; g < p->GpusPerInstance(); ++g) spec.gpus.push_back(p->first_gpu + g);
    absl::StatusOr<strategies::ServingCostModel> cost =
        strategies::ServingCostModel::Create(spec, *m->kernels_.back(), *m->network_);
    if (!cost.ok()) return cost.status();
    m->costs_.push_back(std::make_unique<strategies::ServingCostModel>(*std::move(cost)));
  }
  const models::ReplicaModel& r = d.decode.memory.replica;
  m->kv_bytes_per_token_ = models::KvBytesPerToken(r.model, 1, 1, r.kv_cache_dtype);
  // Cost one transfer up front so that a network error surfaces here.
  if (absl::StatusOr<sim::Duration> t = m->Transfer(0, 0, 1); !t.ok()) return t.status();
  return m;
}

absl::StatusOr<DisaggRun> DisaggModel::Simulate(double rate, const std::atomic<bool>* cancel) {
  strategies::ServingWorkload w = d_.base.workload;
  if (!w.poisson) {
    w.poisson = true;
    w.num_requests = w.batch_size;
  }
  strategies::DisaggConfig c{
      .prefill = {.instances = d_.prefill.instances,
                  .scheduler = d_.prefill.scheduler,
                  .cost =
                      [this](const strategies::IterationTotals& t) { return costs_[0]->Cost(t); }},
      .decode = {.instances = d_.decode.instances,
                 .scheduler = d_.decode.scheduler,
                 .cost =
                     [this](const strategies::IterationTotals& t) { return costs_[1]->Cost(t); }},
      .transfer =
          [this](int p, int d, int64_t tokens) {
            absl::StatusOr<sim::Duration> t = Transfer(p, d, tokens);
            SIM_CHECK(t.ok()) << "KV transfer: " << t.status();
            return *t;
          },
      .layerwise = d_.layerwise,
      .num_layers = d_.prefill.memory.replica.model.num_layers,
      .routing = d_.routing,
      .cancel = cancel};
  return strategies::SimulateDisaggregated(strategies::GenerateRequests(w, rate), c);
}

std::string DisaggModel::Path() const {
  const int src = d_.prefill.first_gpu, dst = d_.decode.first_gpu;
  const bool same_node = cluster_->NodeOf(src) == cluster_->NodeOf(dst);
  std::string slowest;
  sim::Bandwidth bw = sim::Bandwidth::BitsPerSecond(std::numeric_limits<int64_t>::max());
  for (int e : cluster_->Route(src, dst)) {
    if (cluster_->link(e).bandwidth < bw) {
      bw = cluster_->link(e).bandwidth;
      slowest = std::string(cluster_->link(e).technology);
    }
  }
  return absl::StrCat(same_node ? "inside a node" : "across nodes", " (GPU ", src, " to ", dst,
                      ", slowest link ", slowest, ")");
}

absl::StatusOr<sim::Duration> DisaggModel::Transfer(int p, int d, int64_t tokens) {
  const auto key = std::make_tuple(p, d, tokens);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  const int np = d_.prefill.GpusPerInstance(), nd = d_.decode.GpusPerInstance();
  const int streams = std::max(np, nd), fewest = std::min(np, nd);
  const sim::Bytes per_stream = kv_bytes_per_token_ * tokens / streams;
  sim::Duration slowest;
  for (int k = 0; k < streams; ++k) {
    const int src = d_.prefill.first_gpu + p * np + k % np;
    const int dst = d_.decode.first_gpu + d * nd + k % nd;
    absl::StatusOr<topology::CollectiveEstimate> e =
        network_->Estimate({topology::Collective::kSendRecv, {src, dst}, per_stream});
    if (!e.ok()) return e.status();
    slowest = std::max(slowest, e->time);
  }
  const sim::Duration t = slowest * ((streams + fewest - 1) / fewest);
  memo_.emplace(key, t);
  return t;
}

SloTargets DisaggTargets(const ResolvedDisagg& d) {
  return {.ttft_ms = d.base.target_ttft_ms,
          .tpot_ms = d.base.target_tpot_ms,
          .attainment = d.attainment};
}

double BurstCapacity(const DisaggRun& burst) {
  const RequestFigures b = MeasureRequests(burst.requests);
  return b.duration_s > 0 ? b.requests / b.duration_s : 0;
}

absl::StatusOr<GoodputFound> DisaggGoodput(const ResolvedDisagg& d, DisaggModel& model,
                                           double capacity, int steps,
                                           const std::atomic<bool>* cancel) {
  return FindGoodput(
      DisaggTargets(d), capacity,
      [&](double rate) -> absl::StatusOr<std::vector<strategies::RequestRecord>> {
        absl::StatusOr<DisaggRun> r = model.Simulate(rate, cancel);
        if (!r.ok()) return r.status();
        return std::move(r->requests);
      },
      steps);
}

}  // namespace clustersim::scenarios
