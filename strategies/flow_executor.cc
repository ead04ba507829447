#include "strategies/flow_executor.h"

#include "sim/check.h"

namespace clustersim::strategies {

absl::StatusOr<int> FlowCollectiveExecutor::PreparedOf(const CollectiveCall& call) {
  if (prepared_.empty()) prepared_.resize(plan_.request_groups.size());
  std::vector<Prepared>& on_group = prepared_[call.group];
  for (const Prepared& p : on_group) {
    if (p.op == call.op && p.algorithm == call.algorithm) return p.handle;
  }
  on_group.push_back({call.op, call.algorithm,
                      network_.Prepare(call.op, call.algorithm, plan_.request_groups[call.group])});
  return on_group.back().handle;
}

void FlowCollectiveExecutor::Start(sim::TaskId task, sim::Engine& engine) {
  const TaskInfo& info = plan_.infos[engine.graph().task(task).tag];
  SIM_CHECK(info.request >= 0) << "external task " << task << " has no collective request";
  const int32_t request = info.request;
  const CollectiveCall& call = plan_.requests[request];
  const int32_t copies = plan_.request_copies.empty() ? -1 : plan_.request_copies[request];
  if (running_.empty()) running_.assign(plan_.requests.size(), 0);
  running_[request] = 1 + (copies < 0 ? 0 : static_cast<int>(plan_.fold_copies[copies].size()));
  sim::Engine* e = &engine;
  const auto started = [&](const absl::Status& s) {
    if (s.ok()) return;
    if (status_.ok()) status_ = s;
    engine.simulator().ScheduleAfter(sim::Duration::Zero(), [this, e, task, request] {
      if (--running_[request] == 0) e->Finish(task);
    });
  };
  const auto done = [this, e, task, request] {
    if (--running_[request] == 0) e->Finish(task);
  };
  absl::StatusOr<int> prepared = PreparedOf(call);
  started(prepared.ok() ? network_.StartPrepared(*prepared, call.protocol, call.bytes, done)
                        : prepared.status());
  if (copies < 0) return;
  topology::CollectiveRequest copy{call.op, {}, call.bytes, call.algorithm, call.protocol};
  for (const std::vector<int>& gpus : plan_.fold_copies[copies]) {
    copy.gpus = gpus;
    started(network_.StartCollective(copy, done));
  }
}

}  // namespace clustersim::strategies
