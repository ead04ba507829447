#include "scenarios/goodput/spare_pool.h"

#include <algorithm>
#include <cmath>

namespace clustersim::scenarios {

double SparePool::Replace(int nodes, double now_s, sim::SplitMix64& rng) {
  // Repaired nodes rejoin the pool.
  while (!repairs_.empty() && repairs_.top() <= now_s) {
    repairs_.pop();
    ++free_;
  }
  for (int i = 0; i < nodes; ++i) {
    repairs_.push(now_s - std::log1p(-rng.Uniform()) * mean_repair_s_);
  }
  const int taken = std::min(nodes, free_);
  free_ -= taken;
  // The rest come from the earliest repairs, straight into the job.
  double ready_s = now_s;
  for (int missing = nodes - taken; missing > 0; --missing) {
    ready_s = repairs_.top();
    repairs_.pop();
  }
  return ready_s - now_s;
}

}  // namespace clustersim::scenarios
