#include "strategies/flow_executor.h"

#include "sim/check.h"

namespace clustersim::strategies {

void FlowCollectiveExecutor::Start(sim::TaskId task, sim::Engine& engine) {
  const TaskInfo& info = plan_.infos[engine.graph().task(task).tag];
  SIM_CHECK(info.request >= 0) << "external task " << task << " has no collective request";
  sim::Engine* e = &engine;
  const absl::Status s = network_.StartCollective(plan_.requests[info.request],
                                                  [e, task] { e->Finish(task); });
  if (!s.ok()) {
    if (status_.ok()) status_ = s;
    engine.simulator().ScheduleAfter(sim::Duration::Zero(), [e, task] { e->Finish(task); });
  }
}

}  // namespace clustersim::strategies
