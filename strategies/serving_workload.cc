#include "strategies/serving_workload.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace clustersim::strategies {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014; the reference in Vigna's xoshiro page).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

int64_t Draw(const LengthSpec& s, SplitMix64& rng) {
  switch (s.kind) {
    case LengthSpec::Kind::kFixed:
      return s.value;
    case LengthSpec::Kind::kUniform: {
      const uint64_t span = static_cast<uint64_t>(s.max - s.min + 1);
      return s.min + static_cast<int64_t>(rng.Uniform() * static_cast<double>(span));
    }
    case LengthSpec::Kind::kNormal: {
      // Box-Muller; 1 - u keeps the logarithm finite.
      const double u1 = 1.0 - rng.Uniform(), u2 = rng.Uniform();
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
      const int64_t v = std::llround(s.mean + s.stddev * z);
      return std::clamp(v, s.min, s.max);
    }
  }
  return s.value;
}

}  // namespace

std::vector<ServingRequest> GenerateRequests(const ServingWorkload& w, double rate_per_s) {
  SplitMix64 arrivals(w.seed ^ 0x61727269766C73ULL);  // "arrivls"
  SplitMix64 prompts(w.seed ^ 0x70726F6D707473ULL);   // "prompts"
  SplitMix64 outputs(w.seed ^ 0x6F757470757473ULL);   // "outputs"
  const int n = w.poisson ? w.num_requests : w.batch_size;
  std::vector<ServingRequest> r;
  r.reserve(n);
  double t = 0;
  for (int i = 0; i < n; ++i) {
    if (w.poisson && rate_per_s > 0) t += -std::log(1.0 - arrivals.Uniform()) / rate_per_s;
    ServingRequest q;
    q.arrival = sim::Time::Zero() + sim::Duration::FromSecondsDouble(t);
    q.prompt_tokens = Draw(w.prompt, prompts);
    q.output_tokens = Draw(w.output, outputs);
    r.push_back(q);
  }
  return r;
}

}  // namespace clustersim::strategies
