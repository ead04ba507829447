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
//   offline       every request at time zero            ceil(num_requests / replicas),
//                                                         or with duration_s as MLPerf's
//                                                         Offline query (serve_runner.cc)
//   server        Poisson at the rate the search found  max(ceil(num_requests / replicas),
//                                                           ceil(rate x duration_s))
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
// A "server" run lasts as MLPerf's (serve_mode.h): the replica's share of the
// arrivals over duration_s, at least its share of num_requests; every
// request issued counts, the first ones on an empty server and the last
// ones draining it included, as loadgen counts them. The search and the
// capacity burst take as many (ServerCount). Routing each request of one
// Poisson stream to a replica at random gives every replica an independent
// Poisson stream at rate / replicas, so one replica's run has the latency
// distribution of the whole deployment's and 1/replicas of its tokens:
// simulating one replica is exact for random routing (a load-aware router
// would balance better than that).
//
// Prefix caching: a hit rate sets every request's cached tokens; the LRU
// cache over a trace's hash ids is replayed once over the replica's share in
// arrival order, with the replica's KV pool as its capacity
// (strategies::PrefixCacheCapacity), so every re-timing of the trace keeps
// the same hits.
//
// Example:
//   ReplicaRequests requests(resolved, scheduler);
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
  ReplicaRequests(const ResolvedServe& s, const strategies::SchedulerConfig& scheduler);

  // The asked run's requests, for the kinds that are not timed (a "server"
  // run, and an "offline" one with a duration, take Drawn).
  std::vector<strategies::ServingRequest> Asked() const;
  // Open-loop requests at `rate_per_s` of one replica; 0: all at time zero.
  std::vector<strategies::ServingRequest> At(double rate_per_s) const;
  // `count` requests of the asked workload's lengths at `rate_per_s` of one
  // replica (0: all at time zero): a timed run's requests.
  std::vector<strategies::ServingRequest> Drawn(double rate_per_s, int64_t count) const;
  // Requests one replica's "server" run at `rate_per_s` issues: its share of
  // num_requests, or rate x duration_s when more (rate 0: the share).
  int64_t ServerCount(double rate_per_s) const;

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
