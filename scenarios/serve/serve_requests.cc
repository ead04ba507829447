#include "scenarios/serve/serve_requests.h"

#include <algorithm>
#include <cmath>

#include "strategies/serving_prefix_cache.h"

namespace clustersim::scenarios {

using strategies::ServingRequest;

ReplicaRequests::ReplicaRequests(const ResolvedServe& s,
                                 const strategies::SchedulerConfig& scheduler)
    : s_(s) {
  workload_ = s.workload;
  if (workload_.poisson) {
    workload_.num_requests = (s.workload.num_requests + s.replicas - 1) / s.replicas;
  }
  // The curve and the search use Poisson arrivals of the same lengths.
  curve_workload_ = workload_;
  if (!curve_workload_.poisson) {
    curve_workload_.poisson = true;
    curve_workload_.num_requests = std::max(200, workload_.batch_size);
  }
  // A concurrency run's warm-up requests go first (the curve keeps the
  // measured count).
  if (s.mode.kind == "concurrency" && s.mode.warmup_requests > 0) {
    warmup_ = (s.mode.warmup_requests + s.replicas - 1) / s.replicas;
    workload_.num_requests += static_cast<int>(warmup_);
  }
  if (s.mode.kind != "trace") return;
  const strategies::RequestTrace& t = s.mode.trace;
  std::vector<std::vector<int64_t>> hash_ids;
  for (size_t i = 0; i < t.requests.size(); i += s.replicas) {
    trace_.push_back(t.requests[i]);
    hash_ids.push_back(t.hash_ids[i]);
  }
  if (s.mode.prefix_lru) {
    strategies::ApplyPrefixBlockCache(
        hash_ids, s.mode.prefix_block_tokens,
        strategies::PrefixCacheCapacity(scheduler, s.mode.prefix_block_tokens), &trace_);
  }
  ApplyHitRate(&trace_);
}

void ReplicaRequests::ApplyHitRate(std::vector<ServingRequest>* r) const {
  if (s_.mode.prefix_hit_rate) strategies::ApplyPrefixHitRate(*s_.mode.prefix_hit_rate, r);
}

double ReplicaRequests::OfferedRate() const {
  if (s_.mode.kind == "poisson") return workload_.rate_per_s / s_.replicas;
  if (s_.mode.kind != "trace") return 0;
  const double span = (trace_.back().arrival - sim::Time::Zero()).ToSeconds();
  return span > 0 ? static_cast<double>(trace_.size()) / span : 0;
}

int ReplicaRequests::Clients() const {
  return s_.mode.kind == "concurrency" ? (s_.mode.concurrency + s_.replicas - 1) / s_.replicas : 0;
}

std::vector<ServingRequest> ReplicaRequests::Asked() const {
  if (s_.mode.kind == "trace") return trace_;
  std::vector<ServingRequest> r = strategies::GenerateRequests(workload_, OfferedRate());
  ApplyHitRate(&r);
  return r;
}

int64_t ReplicaRequests::ServerCount(double rate_per_s) const {
  const double over_duration = std::ceil(rate_per_s * s_.mode.duration_s);
  return static_cast<int64_t>(std::max(static_cast<double>(workload_.num_requests), over_duration));
}

std::vector<ServingRequest> ReplicaRequests::Drawn(double rate_per_s, int64_t count) const {
  strategies::ServingWorkload w = workload_;
  w.num_requests = static_cast<int>(count);
  std::vector<ServingRequest> r = strategies::GenerateRequests(w, rate_per_s);
  ApplyHitRate(&r);
  return r;
}

std::vector<ServingRequest> ReplicaRequests::At(double rate_per_s) const {
  if (s_.mode.kind != "trace") {
    std::vector<ServingRequest> r = strategies::GenerateRequests(curve_workload_, rate_per_s);
    ApplyHitRate(&r);
    return r;
  }
  std::vector<ServingRequest> r = trace_;
  const double own = OfferedRate();
  for (ServingRequest& q : r) {
    if (rate_per_s <= 0 || own <= 0) {
      q.arrival = sim::Time::Zero();
    } else {
      const double ps = static_cast<double>((q.arrival - sim::Time::Zero()).picoseconds());
      q.arrival =
          sim::Time::Zero() + sim::Duration::FromPicoseconds(std::llround(ps * own / rate_per_s));
    }
  }
  return r;
}

}  // namespace clustersim::scenarios
