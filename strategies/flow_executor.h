// File: strategies/flow_executor.h
//
// Runs a StepPlan's external collective tasks on the flow-level network: when
// the engine starts such a task, its CollectiveRequest becomes flows over the
// real routes, sharing links max-min fairly with every other collective in
// flight (TP, PP, DP traffic on the same NVLink, NICs and spines); the task
// ends when its last flow does.
//
// Folded plans: a request with copies (StepPlan::fold_copies, the same
// collective on tensor-parallel ranks the fold left out, whose routes can
// cross the same NICs and fabric links) starts them beside it, at the same
// time, and its task ends when the last of them does: those ranks run in
// step with the representative and meet it at their next collective.
//
// Example:
//   topology::FlowNetwork flow(cluster, simulator);
//   FlowCollectiveExecutor exec(plan, flow);
//   engine.SetExecutor(&exec);
//
// Lifetime: `plan` and `network` must outlive the executor.
#ifndef CLUSTERSIM_STRATEGIES_FLOW_EXECUTOR_H_
#define CLUSTERSIM_STRATEGIES_FLOW_EXECUTOR_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/engine.h"
#include "strategies/step_plan.h"
#include "topology/flow_network.h"

namespace clustersim::strategies {

class FlowCollectiveExecutor : public sim::TaskExecutor {
 public:
  FlowCollectiveExecutor(const StepPlan& plan, topology::FlowNetwork& network)
      : plan_(plan), network_(network) {}

  void Start(sim::TaskId task, sim::Engine& engine) override;

  // The first error a collective start reported (the task then ends at once).
  const absl::Status& status() const { return status_; }

 private:
  // The network's handle for `call`'s collective on its group, prepared once
  // per (group, op, algorithm); an error when the group cannot run it.
  absl::StatusOr<int> PreparedOf(const CollectiveCall& call);

  const StepPlan& plan_;
  topology::FlowNetwork& network_;
  struct Prepared {
    topology::Collective op;
    topology::Algorithm algorithm;
    absl::StatusOr<int> handle;
  };
  // Per request group: the (op, algorithm) pairs prepared on it, a few each.
  std::vector<std::vector<Prepared>> prepared_;
  std::vector<int> running_;  // per request: its collective and copies not yet ended
  absl::Status status_;
};

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_FLOW_EXECUTOR_H_
