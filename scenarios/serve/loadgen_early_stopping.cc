// MLPerf LoadGen's early-stopping test (loadgen_early_stopping.h).
#include "scenarios/serve/loadgen_early_stopping.h"

#include <algorithm>
#include <cmath>

namespace clustersim::scenarios {
namespace {

// LoadGen's percentile, confidence and tolerance for a Server run's token
// latencies (results.cc: target_latency_percentile 0.99, confidence 0.99,
// tolerance 0).
constexpr double kOverProbability = 0.01;
constexpr double kConfidence = 0.99;

}  // namespace

int64_t LoadgenMaxOverLatency(int64_t queries) {
  if (queries <= 0) return -1;
  const double n = static_cast<double>(queries);
  const double log_p = std::log(kOverProbability), log_q = std::log1p(-kOverProbability);
  const double log_n_factorial = std::lgamma(n + 1);
  // Sum the binomial probabilities of 0, 1, ... over-limit queries until the
  // cumulative chance reaches 1 - confidence.
  double cdf = 0;
  for (int64_t t = 0; t <= queries; ++t) {
    const double k = static_cast<double>(t);
    cdf += std::exp(log_n_factorial - std::lgamma(k + 1) - std::lgamma(n - k + 1) + k * log_p +
                    (n - k) * log_q);
    if (cdf >= 1 - kConfidence) return t - 1;
  }
  return queries;
}

bool MeetsLoadgenEarlyStopping(const std::vector<double>& latencies_ms, double limit_ms,
                               int64_t queries) {
  const int64_t allowed = LoadgenMaxOverLatency(queries);
  if (allowed < 0 || latencies_ms.empty()) return true;
  const int64_t over = std::count_if(latencies_ms.begin(), latencies_ms.end(),
                                     [&](double x) { return x > limit_ms; });
  // This replica's share of the run's allowance.
  return static_cast<double>(over) * static_cast<double>(queries) <=
         static_cast<double>(allowed) * static_cast<double>(latencies_ms.size());
}

}  // namespace clustersim::scenarios
