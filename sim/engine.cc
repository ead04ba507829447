#include "sim/engine.h"

#include <sstream>

#include "sim/check.h"

namespace clustersim::sim {
namespace {
constexpr uint8_t kWaiting = 0;
constexpr uint8_t kRunning = 1;
constexpr uint8_t kDone = 2;
// Its end would pass the end of the picosecond clock: never scheduled, so the
// run ends with the clock error instead of a wrapped-around time.
constexpr uint8_t kPastClock = 3;
}  // namespace

Engine::Engine(const TaskGraph& graph, Simulator& sim)
    : graph_(graph), sim_(sim), tasks_(graph.NumTasks() + 1), head_(graph.NumResources(), 0) {
  handler_ = sim_.AddHandler(this);
  // Count successors into the next task's succ_begin and predecessors into
  // `pending` (checked against the bit field's range), then prefix-sum.
  std::vector<uint32_t> preds(graph.NumTasks(), 0);
  for (const auto& [before, after] : graph.edges()) {
    ++tasks_[before + 1].succ_begin;
    ++preds[after];
  }
  constexpr uint32_t kMaxPending = (1u << 30) - 1;
  for (TaskId t = 0; t < graph.NumTasks(); ++t) {
    SIM_CHECK(preds[t] <= kMaxPending)
        << "task " << t << " has " << preds[t] << " predecessors; at most " << kMaxPending;
    tasks_[t].pending = preds[t];
    tasks_[t].state = kWaiting;
  }
  for (size_t i = 1; i < tasks_.size(); ++i) tasks_[i].succ_begin += tasks_[i - 1].succ_begin;
  succ_.resize(graph.edges().size());
  // `preds` is done with: reuse it as the fill cursor of each task's successors.
  for (TaskId t = 0; t < graph.NumTasks(); ++t) preds[t] = tasks_[t].succ_begin;
  for (const auto& [before, after] : graph.edges()) succ_[preds[before]++] = after;
}

void Engine::TryStart(TaskId t) {
  TaskState& ts = tasks_[t];
  if (ts.state != kWaiting || ts.pending != 0) return;
  for (ResourceId r : graph_.ResourcesOf(t)) {
    const auto& q = graph_.QueueOf(r);
    if (head_[r] >= q.size() || q[head_[r]] != t) return;
  }
  ts.state = kRunning;
  ts.start = sim_.Now();
  const TaskGraph::Task& task = graph_.task(t);
  if (task.external) {
    SIM_CHECK(executor_ != nullptr) << "external task " << t << " but no TaskExecutor set";
    executor_->Start(t, *this);
  } else {
    Time end;
    if (!CheckedAdd(sim_.Now(), task.duration, &end) || end == Time::Infinite()) {
      ts.state = kPastClock;
      return;
    }
    sim_.ScheduleEvent(end, handler_, t);
  }
}

Time Engine::EndOf(TaskId t) const {
  const TaskGraph::Task& task = graph_.task(t);
  if (!task.external) return tasks_[t].start + task.duration;
  auto it = external_end_.find(t);
  return it == external_end_.end() ? Time() : it->second;
}

void Engine::Finish(TaskId t) {
  SIM_CHECK(t < graph_.NumTasks() && tasks_[t].state == kRunning && graph_.task(t).external)
      << "Finish(" << t << ") on a task that is not a running external task";
  Complete(t);
}

void Engine::Complete(TaskId t) {
  TaskState& ts = tasks_[t];
  ts.state = kDone;
  const Time end = sim_.Now();
  const TaskGraph::Task& task = graph_.task(t);
  if (task.external) external_end_[t] = end;
  makespan_ = Max(makespan_, end);
  ++finished_;
  if (control_ != nullptr && finished_ % kProgressTasks == 0) {
    control_->Report(finished_, graph_.NumTasks());
  }
  for (ResourceId r : graph_.ResourcesOf(t)) {
    const Span span{r, t, task.tag, ts.start, end};
    for (SpanObserver* o : observers_) o->OnSpan(graph_, span);
  }
  // Advance the queues first, then offer the new heads and the successors a
  // start, in a fixed order (resources, then successors) for determinism.
  for (ResourceId r : graph_.ResourcesOf(t)) ++head_[r];
  for (ResourceId r : graph_.ResourcesOf(t)) {
    const auto& q = graph_.QueueOf(r);
    if (head_[r] < q.size()) TryStart(q[head_[r]]);
  }
  for (uint32_t i = ts.succ_begin; i < tasks_[t + 1].succ_begin; ++i) {
    const TaskId s = succ_[i];
    --tasks_[s].pending;
    TryStart(s);
  }
}

void Engine::SetControl(RunControl* control) {
  control_ = control;
  sim_.SetCancelFlag(control != nullptr ? &control->cancel : nullptr);
}

absl::Status Engine::Run() {
  if (control_ != nullptr) control_->Report(0, graph_.NumTasks());
  for (TaskId t = 0; t < graph_.NumTasks(); ++t) TryStart(t);
  sim_.Run();
  if (control_ != nullptr) control_->Report(finished_, graph_.NumTasks());
  if (finished_ == graph_.NumTasks()) return absl::OkStatus();
  if (sim_.Cancelled()) return absl::CancelledError("cancelled");
  for (TaskId t = 0; t < graph_.NumTasks(); ++t) {
    if (tasks_[t].state != kPastClock) continue;
    std::ostringstream msg;
    msg << "simulated time overflows the picosecond clock (int64, "
        << Duration::Max().ToSeconds() / 86400 << " days): task " << t;
    if (!graph_.ResourcesOf(t).empty()) msg << " on " << graph_.resource(graph_.ResourcesOf(t)[0]).name;
    msg << " starts at " << tasks_[t].start.ToSeconds() << " s and lasts "
        << graph_.task(t).duration.ToSeconds()
        << " s; a duration this long comes from bad input (sizes, batch, or rates far beyond "
           "real hardware): check the scenario's model, batch and cluster values";
    return absl::OutOfRangeError(msg.str());
  }
  for (TaskId t = 0; t < graph_.NumTasks(); ++t) {
    if (tasks_[t].state == kDone) continue;
    std::ostringstream msg;
    msg << "simulation cannot make progress: " << (graph_.NumTasks() - finished_)
        << " task(s) never started; task " << t;
    if (tasks_[t].state == kRunning) {
      msg << " is external and its executor never finished it";
    } else if (tasks_[t].pending != 0) {
      msg << " waits for " << tasks_[t].pending << " unfinished predecessor(s)";
    } else {
      for (ResourceId r : graph_.ResourcesOf(t)) {
        const auto& q = graph_.QueueOf(r);
        if (q[head_[r]] != t) {
          msg << " is queued on " << graph_.resource(r).name << " behind task " << q[head_[r]];
          break;
        }
      }
    }
    msg << " (a dependency cycle, or tasks ordered differently on two streams)";
    return absl::FailedPreconditionError(msg.str());
  }
  return absl::OkStatus();
}

}  // namespace clustersim::sim
