// File: scenarios/serve/serve_replica.h
//
// One simulated replica of `clustersim serve` (serve_runner.h): its runs of
// the scenario's requests (serve_requests.h) at the asked workload, at a given
// rate or as a timed burst, what a run measured, and the search for the
// highest rate that meets the latency targets.
//
// Example:
//   Replica replica(resolved, std::move(iteration_cost), scheduler);
//   absl::StatusOr<strategies::ServingRun> burst = replica.RunAt(0);
//   const Measured at_burst = Measure(*burst);
#ifndef CLUSTERSIM_SCENARIOS_SERVE_SERVE_REPLICA_H_
#define CLUSTERSIM_SCENARIOS_SERVE_SERVE_REPLICA_H_

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "scenarios/proto/serve_result.pb.h"
#include "scenarios/serve/serve_requests.h"
#include "scenarios/serve/serve_resolve.h"
#include "strategies/serving_scheduler.h"

namespace clustersim::scenarios {

// What one simulated replica measured.
struct Measured {
  config::LatencyStats ttft, tpot, e2e;
  // Each request's TTFT and TPOT (ms), for LoadGen's early stopping.
  std::vector<double> ttft_ms, tpot_ms;
  double duration_s = 0;  // first arrival to last finish
  double output_tokens = 0, prompt_tokens = 0, requests = 0;
  double OutputPerS() const { return duration_s > 0 ? output_tokens / duration_s : 0; }
};

// The requests of `run` from index `first` on (index = send order; the
// earlier ones are warm-up); the duration runs from the first measured
// request's arrival to the run's end.
Measured Measure(const strategies::ServingRun& run, int64_t first = 0);

// One replica's simulations of the scenario's requests (serve_requests.h).
class Replica {
 public:
  Replica(const ResolvedServe& s, strategies::IterationCostFn cost,
          strategies::SchedulerConfig scheduler)
      : requests_(s, scheduler),
        server_(s.mode.kind == "server"),
        duration_s_(s.mode.duration_s),
        think_time_(s.mode.think_time),
        scheduler_(scheduler),
        cost_(std::move(cost)) {}

  // Offered rate of one replica (0 for a fixed batch).
  double OfferedRate() const { return requests_.OfferedRate(); }
  // The asked run's first measured request (serve_requests.h).
  int64_t MeasuredFirst() const { return requests_.MeasuredFirst(); }
  // Whether runs last duration_s ("server", and "offline" with a duration)
  // rather than a fixed number of requests.
  bool Timed() const { return duration_s_ > 0; }
  bool Server() const { return server_; }

  // The asked workload; `server_rate_per_s` is a "server" run's arrival rate,
  // `timed_count` a timed offline run's requests.
  absl::StatusOr<strategies::ServingRun> Run(bool keep, double server_rate_per_s,
                                             int64_t timed_count) {
    if (server_) return RunTimed(server_rate_per_s, requests_.ServerCount(server_rate_per_s), keep);
    if (Timed()) return RunTimed(0, timed_count, keep);
    strategies::SchedulerConfig asked = scheduler_;
    asked.closed_loop_clients = requests_.Clients();
    asked.think_time = think_time_;
    return strategies::SimulateServing(requests_.Asked(), asked, cost_, keep);
  }
  // rate 0: every request at once.
  absl::StatusOr<strategies::ServingRun> RunAt(double rate_per_s) {
    return strategies::SimulateServing(requests_.At(rate_per_s), scheduler_, cost_, false);
  }
  // A rate-search probe: a "server" run as long as the asked one
  // (serve_requests.h), otherwise the re-timed requests of At.
  absl::StatusOr<strategies::ServingRun> Probe(double rate_per_s) {
    if (!server_) return RunAt(rate_per_s);
    return RunTimed(rate_per_s, requests_.ServerCount(rate_per_s));
  }
  // A timed run's capacity burst: every request at once, as many as keep the
  // replica busy for duration_s. Sized as loadgen sizes the Offline query,
  // 1.1 x duration_s x the rate expected (here: the rate the previous burst
  // measured), starting from the replica's share of num_requests; a larger
  // burst batches better, so it is resized until it lasts duration_s (at most
  // 5 bursts). `count` gets its requests.
  absl::StatusOr<strategies::ServingRun> TimedBurst(int64_t* count) {
    *count = requests_.ServerCount(0);
    absl::StatusOr<strategies::ServingRun> burst = RunTimed(0, *count);
    for (int i = 0; i < 4 && burst.ok(); ++i) {
      const double span_s = (burst->end - sim::Time::Zero()).ToSeconds();
      if (span_s >= duration_s_ || span_s <= 0) break;
      *count = static_cast<int64_t>(
          std::ceil(kLoadgenSlack * duration_s_ * static_cast<double>(*count) / span_s));
      burst = RunTimed(0, *count);
    }
    return burst;
  }

 private:
  absl::StatusOr<strategies::ServingRun> RunTimed(double rate_per_s, int64_t count,
                                                  bool keep = false) {
    if (count > kMaxTimedRequests) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "inference.workload.duration_s=%g takes %d requests on one replica (over %d); "
          "shorten the duration",
          duration_s_, count, kMaxTimedRequests));
    }
    return strategies::SimulateServing(requests_.Drawn(rate_per_s, count), scheduler_, cost_,
                                       keep);
  }

  // loadgen's kSlack: the Offline query holds 1.1 x min_duration x the
  // expected QPS samples (loadgen/test_settings_internal.cc).
  static constexpr double kLoadgenSlack = 1.1;
  // The most requests one replica's timed run may hold.
  static constexpr int64_t kMaxTimedRequests = 10'000'000;

  ReplicaRequests requests_;
  const bool server_;
  const double duration_s_;
  sim::Duration think_time_;
  strategies::SchedulerConfig scheduler_;
  strategies::IterationCostFn cost_;
};

// Returns one replica's rate to run a "server" workload at: the rate found,
// the capacity, or 1% of the capacity when the targets are unreachable (0
// without a target).
absl::StatusOr<double> FindSustainableRate(const ResolvedServe& s, Replica& replica,
                                           double capacity, config::ServeSustainable* out);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_SERVE_SERVE_REPLICA_H_
