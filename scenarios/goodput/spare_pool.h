// File: scenarios/goodput/spare_pool.h
//
// A finite pool of hot spare nodes over one simulated run. A failure that
// needs nodes takes its replacements from the pool; the failed nodes go to
// repair (exponential, mean `mean_repair_s`) and rejoin the pool when
// repaired. When the pool holds fewer spares than the failure needs, the job
// waits for the earliest repairs to finish, and those nodes join the job
// directly. Nodes in repair cost nothing; the spares are billed by the
// caller for the whole run, busy or idle.
//
// Times are absolute seconds of one trial (the run's wall clock), so repairs
// carry across the timeline's stretches; the repair draws come from the
// caller's random stream.
//
// Example:
//   SparePool pool(/*spares=*/2, /*mean_repair_s=*/86400);
//   double wait_s = pool.Replace(/*nodes=*/1, now_s, rng);  // 0 while a spare is free
#ifndef CLUSTERSIM_SCENARIOS_GOODPUT_SPARE_POOL_H_
#define CLUSTERSIM_SCENARIOS_GOODPUT_SPARE_POOL_H_

#include <functional>
#include <queue>
#include <vector>

#include "sim/random.h"

namespace clustersim::scenarios {

class SparePool {
 public:
  // REQUIRES: spares >= 0, mean_repair_s > 0.
  SparePool(int spares, double mean_repair_s) : free_(spares), mean_repair_s_(mean_repair_s) {}

  // `nodes` nodes fail at `now_s`: sends them to repair, takes replacements
  // from the pool, and returns how long the job waits for the replacements
  // the pool lacked (0 when it had them all).
  double Replace(int nodes, double now_s, sim::SplitMix64& rng);

  // Spares free at the last Replace (after it took its replacements).
  int free() const { return free_; }
  // Nodes still in repair at the last Replace.
  int in_repair() const { return static_cast<int>(repairs_.size()); }

 private:
  int free_;
  double mean_repair_s_;
  // Completion times of the nodes in repair, earliest first.
  std::priority_queue<double, std::vector<double>, std::greater<double>> repairs_;
};

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_GOODPUT_SPARE_POOL_H_
