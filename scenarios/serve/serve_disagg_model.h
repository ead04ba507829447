// File: scenarios/serve/serve_disagg_model.h
//
// The hardware and cost models of one disaggregated deployment
// (serve_disagg_resolve.h) and its simulations: the cluster that holds both
// pools, a kernel model per pool GPU, an iteration cost model per pool
// (strategies/serving_iteration.h, over the GPUs of the pool's first
// instance) and the KV transfer cost.
//
// KV transfer cost: a request of n prompt tokens moves n x KV bytes per token
// of the whole model (models/inference_memory.h KvBytesPerToken at tp 1, pp 1:
// layers x 2 x kv_heads x head_dim x dtype bytes; OPT-13B in fp16: 800 KiB per
// token). Each GPU of the prefill instance holds its shard; the n_p prefill
// and n_d decode GPUs pair up as S = max(n_p, n_d) streams (stream k from
// prefill GPU k mod n_p to decode GPU k mod n_d, bytes / S each), costed as
// send/recv by the network model over the real route (NVLink inside a node,
// PCIe and the NICs across nodes); streams sharing a GPU run one after
// another: time = ceil(S / min(n_p, n_d)) x the slowest stream. Memoised by
// (prefill instance, decode instance, n).
//
// Example:
//   absl::StatusOr<std::unique_ptr<DisaggModel>> m = DisaggModel::Create(resolved);
//   absl::StatusOr<strategies::DisaggRun> run = (*m)->Simulate(4.0, nullptr);
#ifndef CLUSTERSIM_SCENARIOS_SERVE_SERVE_DISAGG_MODEL_H_
#define CLUSTERSIM_SCENARIOS_SERVE_SERVE_DISAGG_MODEL_H_

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "models/kernel_model.h"
#include "scenarios/serve/serve_disagg_resolve.h"
#include "scenarios/serve/serve_goodput.h"
#include "strategies/serving_disaggregated.h"
#include "strategies/serving_iteration.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"

namespace clustersim::scenarios {

class DisaggModel {
 public:
  // `d` must outlive the model. Errors: the cluster, a cost model or the
  // network cannot be built for the pools.
  static absl::StatusOr<std::unique_ptr<DisaggModel>> Create(const ResolvedDisagg& d);

  // Every request of the scenario's workload at `rate` req/s (0: all at
  // once); a fixed batch becomes a burst of batch_size requests.
  absl::StatusOr<strategies::DisaggRun> Simulate(double rate, const std::atomic<bool>* cancel);

  // Where instance 0 of each pool sends: inside a node or across nodes, and
  // the slowest link technology of the route.
  std::string Path() const;
  sim::Bytes KvBytesPerToken() const { return kv_bytes_per_token_; }

 private:
  explicit DisaggModel(const ResolvedDisagg& d) : d_(d) {}
  absl::StatusOr<sim::Duration> Transfer(int p, int d, int64_t tokens);

  const ResolvedDisagg& d_;
  std::unique_ptr<topology::Cluster> cluster_;
  std::unique_ptr<topology::AnalyticNetwork> network_;
  std::vector<std::unique_ptr<models::KernelModel>> kernels_;
  std::vector<std::unique_ptr<strategies::ServingCostModel>> costs_;
  sim::Bytes kv_bytes_per_token_;
  std::map<std::tuple<int, int, int64_t>, sim::Duration> memo_;
};

// The scenario's targets and attainment.
SloTargets DisaggTargets(const ResolvedDisagg& d);
// Requests per second of a burst run (first arrival to last finish).
double BurstCapacity(const strategies::DisaggRun& burst);
// DistServe's goodput of the deployment (serve_goodput.h), `steps` bisection steps.
absl::StatusOr<GoodputFound> DisaggGoodput(const ResolvedDisagg& d, DisaggModel& model,
                                           double capacity, int steps,
                                           const std::atomic<bool>* cancel);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_SERVE_SERVE_DISAGG_MODEL_H_
