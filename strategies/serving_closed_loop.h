// File: strategies/serving_closed_loop.h
//
// Benchmark clients in a closed loop: N clients each keep one request in
// flight and send the next one when the previous finishes, after an optional
// think time. This is how vLLM's benchmark_serving.py --max-concurrency N (a
// semaphore of N around the request list), genai-perf --concurrency N and
// trtllm-bench --concurrency N drive a server: the offered load follows the
// server's own speed, so throughput and latency are measured at a fixed
// number of users rather than at a fixed arrival rate.
//
// Requests are sent in index order: requests 0..N-1 at the start, then
// request N when the first of them finishes, and so on (any client takes the
// next request of the list). With one client the requests run one after
// another, so the makespan is the sum of their end-to-end latencies (plus
// think times).
//
// Example:
//   ClosedLoopClients c(/*clients=*/4, /*num_requests=*/100, sim::Duration::Zero());
//   // c.initial() == 4; on each finish: if (auto s = c.OnFinish(now)) send s->request at s->at.
#ifndef CLUSTERSIM_STRATEGIES_SERVING_CLOSED_LOOP_H_
#define CLUSTERSIM_STRATEGIES_SERVING_CLOSED_LOOP_H_

#include <algorithm>
#include <cstdint>
#include <optional>

#include "sim/units.h"

namespace clustersim::strategies {

class ClosedLoopClients {
 public:
  struct Send {
    int64_t request;  // index into the request list
    sim::Time at;     // when the client sends it
  };

  // REQUIRES: clients >= 1, num_requests >= 0, think_time >= 0.
  ClosedLoopClients(int clients, int64_t num_requests, sim::Duration think_time)
      : num_requests_(num_requests),
        think_time_(think_time),
        initial_(std::min<int64_t>(clients, num_requests)),
        next_(initial_) {}

  // Requests 0 .. initial() - 1 are sent at the start (one per client).
  int64_t initial() const { return initial_; }

  // A request finished at `now`: the next unsent request and when its client
  // sends it, or nullopt once every request has been sent.
  std::optional<Send> OnFinish(sim::Time now) {
    if (next_ >= num_requests_) return std::nullopt;
    return Send{.request = next_++, .at = now + think_time_};
  }

 private:
  int64_t num_requests_;
  sim::Duration think_time_;
  int64_t initial_;
  int64_t next_;  // the next request to send
};

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SERVING_CLOSED_LOOP_H_
