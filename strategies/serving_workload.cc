#include "strategies/serving_workload.h"

#include <algorithm>
#include <cmath>

#include "sim/random.h"

namespace clustersim::strategies {
namespace {

using sim::SplitMix64;

int64_t Draw(const LengthSpec& s, SplitMix64& rng) {
  switch (s.kind) {
    case LengthSpec::Kind::kFixed:
      return s.value;
    case LengthSpec::Kind::kUniform: {
      const uint64_t span = static_cast<uint64_t>(s.max - s.min + 1);
      return s.min + static_cast<int64_t>(rng.Uniform() * static_cast<double>(span));
    }
    case LengthSpec::Kind::kNormal: {
      const double z = rng.StandardNormal();
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
  std::vector<size_t> order(w.samples.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = order.size(); i > 1; --i) {
    const size_t j =
        std::min(i - 1, static_cast<size_t>(prompts.Uniform() * static_cast<double>(i)));
    std::swap(order[i - 1], order[j]);
  }
  std::vector<ServingRequest> r;
  r.reserve(n);
  double t = 0;
  for (int i = 0; i < n; ++i) {
    if (w.poisson && rate_per_s > 0) t += -std::log(1.0 - arrivals.Uniform()) / rate_per_s;
    ServingRequest q;
    q.arrival = sim::Time::Zero() + sim::Duration::FromSecondsDouble(t);
    if (!order.empty()) {
      const LengthSample& sample = w.samples[order[static_cast<size_t>(i) % order.size()]];
      q.prompt_tokens = sample.prompt_tokens;
      q.output_tokens = sample.output_tokens;
    } else {
      q.prompt_tokens = Draw(w.prompt, prompts);
      q.output_tokens = Draw(w.output, outputs);
    }
    r.push_back(q);
  }
  return r;
}

}  // namespace clustersim::strategies
