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
    : graph_(graph),
      sim_(sim),
      succ_begin_(graph.NumTasks() + 1, 0),
      pending_deps_(graph.NumTasks(), 0),
      head_(graph.NumResources(), 0),
      state_(graph.NumTasks(), kWaiting),
      start_(graph.NumTasks()),
      end_(graph.NumTasks()) {
  handler_ = sim_.AddHandler(this);
  for (const auto& [before, after] : graph.edges()) {
    ++succ_begin_[before + 1];
    ++pending_deps_[after];
  }
  for (size_t i = 1; i < succ_begin_.size(); ++i) succ_begin_[i] += succ_begin_[i - 1];
  succ_.resize(graph.edges().size());
  std::vector<uint32_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
  for (const auto& [before, after] : graph.edges()) succ_[fill[before]++] = after;
}

void Engine::TryStart(TaskId t) {
  if (state_[t] != kWaiting || pending_deps_[t] != 0) return;
  for (ResourceId r : graph_.ResourcesOf(t)) {
    const auto& q = graph_.QueueOf(r);
    if (head_[r] >= q.size() || q[head_[r]] != t) return;
  }
  state_[t] = kRunning;
  start_[t] = sim_.Now();
  const TaskGraph::Task& task = graph_.task(t);
  if (task.external) {
    SIM_CHECK(executor_ != nullptr) << "external task " << t << " but no TaskExecutor set";
    executor_->Start(t, *this);
  } else {
    Time end;
    if (!CheckedAdd(sim_.Now(), task.duration, &end) || end == Time::Infinite()) {
      state_[t] = kPastClock;
      return;
    }
    sim_.ScheduleEvent(end, handler_, t);
  }
}

void Engine::Finish(TaskId t) {
  SIM_CHECK(t < state_.size() && state_[t] == kRunning && graph_.task(t).external)
      << "Finish(" << t << ") on a task that is not a running external task";
  Complete(t);
}

void Engine::Complete(TaskId t) {
  state_[t] = kDone;
  end_[t] = sim_.Now();
  makespan_ = Max(makespan_, end_[t]);
  ++finished_;
  if (control_ != nullptr && finished_ % kProgressTasks == 0) {
    control_->Report(finished_, graph_.NumTasks());
  }
  const uint32_t tag = graph_.task(t).tag;
  for (ResourceId r : graph_.ResourcesOf(t)) {
    const Span span{r, t, tag, start_[t], end_[t]};
    for (SpanObserver* o : observers_) o->OnSpan(graph_, span);
  }
  // Advance the queues first, then offer the new heads and the successors a
  // start, in a fixed order (resources, then successors) for determinism.
  for (ResourceId r : graph_.ResourcesOf(t)) ++head_[r];
  for (ResourceId r : graph_.ResourcesOf(t)) {
    const auto& q = graph_.QueueOf(r);
    if (head_[r] < q.size()) TryStart(q[head_[r]]);
  }
  for (uint32_t i = succ_begin_[t]; i < succ_begin_[t + 1]; ++i) {
    const TaskId s = succ_[i];
    --pending_deps_[s];
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
    if (state_[t] != kPastClock) continue;
    std::ostringstream msg;
    msg << "simulated time overflows the picosecond clock (int64, "
        << Duration::Max().ToSeconds() / 86400 << " days): task " << t;
    if (!graph_.ResourcesOf(t).empty()) msg << " on " << graph_.resource(graph_.ResourcesOf(t)[0]).name;
    msg << " starts at "
        << start_[t].ToSeconds() << " s and lasts " << graph_.task(t).duration.ToSeconds()
        << " s; a duration this long comes from bad input (sizes, batch, or rates far beyond "
           "real hardware): check the scenario's model, batch and cluster values";
    return absl::OutOfRangeError(msg.str());
  }
  for (TaskId t = 0; t < graph_.NumTasks(); ++t) {
    if (state_[t] == kDone) continue;
    std::ostringstream msg;
    msg << "simulation cannot make progress: " << (graph_.NumTasks() - finished_)
        << " task(s) never started; task " << t;
    if (state_[t] == kRunning) {
      msg << " is external and its executor never finished it";
    } else if (pending_deps_[t] != 0) {
      msg << " waits for " << pending_deps_[t] << " unfinished predecessor(s)";
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
