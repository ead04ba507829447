// File: scenarios/serve/serve_requests.h
//
// The requests one simulated replica serves (serve_runner.h simulates one
// replica of num_gpus / (tp x pp) and multiplies its throughput), for each
// workload kind (serve_mode.h), with prefix caching applied
// (strategies/serving_prefix_cache.h):
//
//   kind          the asked run                        share of one replica
//   fixed-batch   batch_size at time zero              batch_size (per replica)
//   poisson       Poisson at rate / replicas            ceil(num_requests / replicas)
//   offline       every request at time zero            ceil(num_requests / replicas)
//   server        Poisson at the rate the search found  ceil(num_requests / replicas)
//   concurrency   closed loop, ceil(N / replicas) clients ceil(num_requests / replicas)
//                 (plus ceil(W / replicas) warm-up requests sent before them)
//   trace         the file's arrivals                   records r, r + replicas, ... of r = 0
//
// The capacity, the sustainable-rate search and the curve re-simulate the
// same lengths open-loop at other rates (At): Poisson arrivals (the seeded
// unit gaps scaled by the rate, common random numbers), and for a trace its
// own arrivals scaled so that their mean rate is the asked one (keeping the
// trace's burstiness); rate 0 puts every request at time zero.
//
// Prefix caching: a hit rate sets every request's cached tokens; the LRU
// cache over a trace's hash ids is replayed once over the replica's share in
// arrival order, with the replica's KV pool as its capacity
// (kv_pool_tokens / prefix_block_tokens hash blocks), so every re-timing of
// the trace keeps the same hits.
//
// Example:
//   ReplicaRequests requests(resolved, kv_blocks * kv_block_size);
//   std::vector<strategies::ServingRequest> burst = requests.At(0);
#ifndef CLUSTERSIM_SCENARIOS_SERVE_SERVE_REQUESTS_H_
#define CLUSTERSIM_SCENARIOS_SERVE_SERVE_REQUESTS_H_

#include <cstdint>
#include <vector>

#include "scenarios/serve/serve_resolve.h"
#include "strategies/serving_scheduler.h"
#include "strategies/serving_workload.h"

namespace clustersim::scenarios {

class ReplicaRequests {
 public:
  // `s` must outlive this object.
  ReplicaRequests(const ResolvedServe& s, int64_t kv_pool_tokens);

  // The asked run's requests; `server_rate_per_s` (one replica's) is the
  // arrival rate of a "server" run and unused otherwise.
  std::vector<strategies::ServingRequest> Asked(double server_rate_per_s) const;
  // Open-loop requests at `rate_per_s` of one replica; 0: all at time zero.
  std::vector<strategies::ServingRequest> At(double rate_per_s) const;

  // The asked run's arrival rate of one replica: poisson's share, a trace's
  // mean (records / time from first to last; 0 when they all arrive at
  // once); 0 for the other kinds.
  double OfferedRate() const;
  // Closed-loop clients of one replica (0: open loop).
  int Clients() const;
  // The asked run's first measured request in index (= send) order: 0, or
  // a concurrency run's first request after its warm-up.
  int64_t MeasuredFirst() const { return warmup_; }

 private:
  void ApplyHitRate(std::vector<strategies::ServingRequest>* r) const;

  const ResolvedServe& s_;
  strategies::ServingWorkload workload_, curve_workload_;
  std::vector<strategies::ServingRequest> trace_;  // the replica's share, cached tokens set
  int64_t warmup_ = 0;                             // unmeasured requests sent first
};

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_SERVE_SERVE_REQUESTS_H_
