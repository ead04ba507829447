// What one simulated replica's run measured (Measure) and the search for the
// sustainable rate: the highest arrival rate whose p99 TPOT and TTFT meet the
// targets (FindSustainableRate).
#include "scenarios/serve/serve_replica.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "scenarios/serve/loadgen_early_stopping.h"
#include "scenarios/serve/serve_goodput.h"

namespace clustersim::scenarios {
namespace {

// p99 TPOT and TTFT within their targets; a "server" run (MLPerf's Server
// scenario) must also pass LoadGen's early stopping on both
// (loadgen_early_stopping.h), counted over the queries of all replicas.
bool MeetsTargets(const ResolvedServe& s, const Measured& m) {
  const bool server = s.mode.kind == "server";
  const int64_t replicas = std::max(1, s.replicas);
  auto meets = [&](const config::LatencyStats& stats, const std::vector<double>& all,
                   double target) {
    if (target <= 0) return true;
    if (stats.p99() > target) return false;
    return !server ||
           MeetsLoadgenEarlyStopping(all, target, static_cast<int64_t>(all.size()) * replicas);
  };
  return meets(m.tpot, m.tpot_ms, s.target_tpot_ms) && meets(m.ttft, m.ttft_ms, s.target_ttft_ms);
}

}  // namespace

// The requests of `run` from index `first` on (index = send order; the
// earlier ones are warm-up); the duration runs from the first measured
// request's arrival to the run's end.
Measured Measure(const strategies::ServingRun& run, int64_t first) {
  Measured m;
  std::vector<double> ttft, tpot, e2e;
  const int64_t end = static_cast<int64_t>(run.requests.size());
  first = std::min(first, end);
  for (int64_t i = first; i < end; ++i) {
    const strategies::RequestRecord& r = run.requests[i];
    ttft.push_back((r.first_token - r.arrival).ToMilliseconds());
    e2e.push_back((r.finish - r.arrival).ToMilliseconds());
    if (r.output_tokens > 1) {
      tpot.push_back((r.finish - r.first_token).ToMilliseconds() /
                     static_cast<double>(r.output_tokens - 1));
    }
    m.output_tokens += static_cast<double>(r.output_tokens);
    m.prompt_tokens += static_cast<double>(r.prompt_tokens);
  }
  m.requests = static_cast<double>(end - first);
  m.ttft = LatencyOf(ttft);
  m.tpot = LatencyOf(tpot);
  m.ttft_ms = std::move(ttft);
  m.tpot_ms = std::move(tpot);
  m.e2e = LatencyOf(std::move(e2e));
  if (end > first) m.duration_s = (run.end - run.requests[first].arrival).ToSeconds();
  return m;
}

// Returns one replica's rate to run a "server" workload at: the rate found,
// the capacity, or 1% of the capacity when the targets are unreachable (0
// without a target).
absl::StatusOr<double> FindSustainableRate(const ResolvedServe& s, Replica& replica,
                                           double capacity, config::ServeSustainable* out) {
  out->set_target_tpot_ms(s.target_tpot_ms);
  out->set_target_ttft_ms(s.target_ttft_ms);
  out->set_criterion(replica.Server()
                         ? "p99 TPOT <= target and p99 TTFT <= target, and LoadGen's early "
                           "stopping on both (MLPerf Inference server scenario)"
                         : "p99 TPOT <= target and p99 TTFT <= target (MLPerf Inference server "
                           "scenario)");
  if (s.target_tpot_ms <= 0 && s.target_ttft_ms <= 0) {
    out->set_status("no target");
    out->set_detail(
        "set inference.target_time_per_output_token_ms and/or "
        "target_time_to_first_token_ms (--target-tpot-ms, --target-ttft-ms)");
    return 0.0;
  }
  auto measure = [&](double rate) -> absl::StatusOr<Measured> {
    absl::StatusOr<strategies::ServingRun> run = replica.Probe(rate);
    if (!run.ok()) return run.status();
    return Measure(*run);
  };
  double lo = 0.01 * capacity, hi = capacity;
  absl::StatusOr<Measured> at_lo = measure(lo);
  if (!at_lo.ok()) return at_lo.status();
  if (!MeetsTargets(s, *at_lo)) {
    out->set_status("unreachable");
    out->set_detail(absl::StrFormat(
        "even at %.3g req/s (1%% of capacity) p99 TPOT is %.2f ms and p99 TTFT %.1f ms; "
        "quantise, raise tensor parallelism or use a faster GPU",
        lo * s.replicas, at_lo->tpot.p99(), at_lo->ttft.p99()));
    return lo;
  }
  absl::StatusOr<Measured> at_hi = measure(hi);
  if (!at_hi.ok()) return at_hi.status();
  Measured best = *at_lo;
  // A "server" run's capacity burst drains at its end, so its rate lies below
  // the steady state a run of duration_s can sustain: while the targets hold
  // at the bound, raise it by a quarter (at most 8 times; loadgen's peak
  // search likewise raises its rate until a run fails).
  for (int i = 0; i < 8 && replica.Server() && MeetsTargets(s, *at_hi); ++i) {
    lo = hi;
    best = *at_hi;
    hi *= 1.25;
    at_hi = measure(hi);
    if (!at_hi.ok()) return at_hi.status();
  }
  if (MeetsTargets(s, *at_hi)) {
    out->set_status("capacity");
    out->set_detail(replica.Server()
                        ? "the targets hold up to 1.25^8 times the capacity"
                        : "the targets hold up to the capacity; beyond it the queue grows");
    lo = hi;
    best = *at_hi;
  } else {
    out->set_status("found");
    for (int i = 0; i < 14; ++i) {
      const double mid = 0.5 * (lo + hi);
      absl::StatusOr<Measured> m = measure(mid);
      if (!m.ok()) return m.status();
      if (MeetsTargets(s, *m)) {
        lo = mid;
        best = *m;
      } else {
        hi = mid;
      }
    }
    out->set_detail(absl::StrFormat("at that rate p99 TPOT %.2f ms, p99 TTFT %.1f ms",
                                    best.tpot.p99(), best.ttft.p99()));
  }
  out->set_max_request_rate_per_s(lo * s.replicas);
  out->set_output_tokens_per_s(best.OutputPerS() * s.replicas);
  return lo;
}

}  // namespace clustersim::scenarios
