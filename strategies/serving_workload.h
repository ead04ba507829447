// File: strategies/serving_workload.h
//
// The requests a serving simulation receives: a fixed batch (all at time
// zero) or a seeded Poisson stream (exponential gaps at a rate), with prompt
// and output lengths drawn from fixed, uniform or clipped-normal
// distributions. Randomness is three SplitMix64 streams (arrivals, prompt
// lengths, output lengths) derived from the seed, with the transforms written
// here (inverse CDF, Box-Muller) rather than <random>'s distributions, whose
// results differ between standard libraries: the same seed gives the same
// requests everywhere.
//
// With `samples` (a data set's paired lengths, serving_length_samples.h) the
// lengths come from them instead: request i takes sample order[i mod n] of a
// seeded shuffle of the n samples (Fisher-Yates over the prompt stream), so a
// run of n requests takes every sample once and a shorter run a random subset.
//
// Arrival gaps are unit exponentials divided by the rate, so re-simulating at
// another rate (the sustainable-rate search, the latency curve) keeps the
// same requests and the same order of gaps, only scaled (common random
// numbers: the curve is smooth instead of noisy).
//
// Example:
//   ServingWorkload w{.poisson = true, .rate_per_s = 4, .num_requests = 200, .seed = 1};
//   std::vector<ServingRequest> r = GenerateRequests(w, w.rate_per_s);
#ifndef CLUSTERSIM_STRATEGIES_SERVING_WORKLOAD_H_
#define CLUSTERSIM_STRATEGIES_SERVING_WORKLOAD_H_

#include <cstdint>
#include <vector>

#include "strategies/serving_length_samples.h"
#include "strategies/serving_scheduler.h"

namespace clustersim::strategies {

struct LengthSpec {
  enum class Kind { kFixed, kUniform, kNormal };
  Kind kind = Kind::kFixed;
  int64_t value = 0;            // kFixed
  int64_t min = 1, max = 0;     // kUniform: [min, max]; kNormal: clip range
  double mean = 0, stddev = 0;  // kNormal
  int64_t Longest() const { return kind == Kind::kFixed ? value : max; }
};

struct ServingWorkload {
  bool poisson = false;   // else a fixed batch at time zero
  int batch_size = 1;     // fixed batch
  double rate_per_s = 0;  // Poisson
  int num_requests = 1;   // Poisson
  uint64_t seed = 0;
  LengthSpec prompt, output;
  // Non-empty: each request's lengths come from these samples (see above).
  std::vector<LengthSample> samples;
};

// The requests, sorted by arrival. A fixed batch has batch_size requests at
// zero; a Poisson workload num_requests at `rate_per_s` (> 0), or all at zero
// when rate_per_s is 0 (a burst: the capacity measurement).
std::vector<ServingRequest> GenerateRequests(const ServingWorkload& w, double rate_per_s);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SERVING_WORKLOAD_H_
