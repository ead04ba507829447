#include "strategies/flow_executor.h"

#include "sim/check.h"

namespace clustersim::strategies {

void FlowCollectiveExecutor::Start(sim::TaskId task, sim::Engine& engine) {
  const TaskInfo& info = plan_.infos[engine.graph().task(task).tag];
  SIM_CHECK(info.request >= 0) << "external task " << task << " has no collective request";
  const int32_t request = info.request;
  const topology::CollectiveRequest& r = plan_.requests[request];
  const int32_t copies = plan_.request_copies.empty() ? -1 : plan_.request_copies[request];
  if (running_.empty()) running_.assign(plan_.requests.size(), 0);
  running_[request] = 1 + (copies < 0 ? 0 : static_cast<int>(plan_.fold_copies[copies].size()));
  sim::Engine* e = &engine;
  const auto start = [&](const topology::CollectiveRequest& c) {
    auto done = [this, e, task, request] {
      if (--running_[request] == 0) e->Finish(task);
    };
    const absl::Status s = network_.StartCollective(c, done);
    if (!s.ok()) {
      if (status_.ok()) status_ = s;
      engine.simulator().ScheduleAfter(sim::Duration::Zero(), std::move(done));
    }
  };
  start(r);
  if (copies < 0) return;
  topology::CollectiveRequest copy = r;
  for (const std::vector<int>& gpus : plan_.fold_copies[copies]) {
    copy.gpus = gpus;
    start(copy);
  }
}

}  // namespace clustersim::strategies
