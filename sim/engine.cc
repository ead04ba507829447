#include "sim/engine.h"

#include <algorithm>
#include <bit>
#include <sstream>

#include "sim/check.h"
#include "sim/prefault.h"
#include "sim/span_pipe.h"

namespace clustersim::sim {
namespace {
constexpr uint8_t kWaiting = 0;
constexpr uint8_t kRunning = 1;
constexpr uint8_t kDone = 2;
// Its end would pass the end of the picosecond clock: never scheduled, so the
// run ends with the clock error instead of a wrapped-around time.
constexpr uint8_t kPastClock = 3;
}  // namespace

Engine::Engine(const TaskGraph& graph, Simulator& sim, Times times) : graph_(graph), sim_(sim) {
  handler_ = sim_.AddHandler(this);
  // The big arrays are reserved at their final sizes first, so that the
  // background thread commits the pages written later (the second half of
  // the task records, the queues, the successor lists) while this thread
  // writes the first half.
  const size_t records = graph.NumTasks() + 1;
  tasks_.reserve(records);
  queue_.reserve(graph.NumResourceUses());
  succ_.reserve(graph.NumDependencies());
  PrefaultElements(tasks_, records / 2, records);
  PrefaultElements(queue_, 0, queue_.capacity());
  PrefaultElements(succ_, 0, succ_.capacity());
  tasks_.resize(records);
  // Queues: count each resource's tasks, prefix-sum into cursors, then fill in
  // task order (program order).
  cursor_.assign(graph.NumResources(), QueueCursor{0, 0});
  for (TaskId t = 0; t < graph.NumTasks(); ++t) {
    for (ResourceId r : graph.ResourcesOf(t)) ++cursor_[r].end;
  }
  uint32_t total = 0;
  for (QueueCursor& c : cursor_) {
    c.next = total;
    total += c.end;
    c.end = c.next;  // the fill cursor; ends where the next queue begins
  }
  queue_.resize(total);
  for (TaskId t = 0; t < graph.NumTasks(); ++t) {
    for (ResourceId r : graph.ResourcesOf(t)) queue_[cursor_[r].end++] = t;
  }
  const size_t words = (graph.NumTasks() + 63) / 64;
  external_bits_.assign(words, 0);
  external_before_.assign(words, 0);
  uint32_t externals = 0;
  for (size_t w = 0; w < words; ++w) {
    external_before_[w] = externals;
    const TaskId end = static_cast<TaskId>(std::min<size_t>((w + 1) * 64, graph.NumTasks()));
    for (TaskId t = static_cast<TaskId>(w * 64); t < end; ++t) {
      if (graph.task(t).external) external_bits_[w] |= uint64_t{1} << (t % 64);
    }
    externals += static_cast<uint32_t>(std::popcount(external_bits_[w]));
  }
  external_start_.resize(externals);
  external_end_.resize(externals);
  if (times == Times::kKept) starts_.resize(graph.NumTasks());
  // Count each task's successors into its own succ_begin and its
  // predecessors into `pending` (checked against the bit field's range), then
  // prefix-sum the counts into range ends and fill every range backwards
  // (edges in reverse): each task's successors keep the edges' order and its
  // succ_begin ends at its first. No scratch array: this runs while the graph
  // still holds its dependency list, at the step's peak memory.
  constexpr uint32_t kMaxPending = (1u << 30) - 1;
  for (const auto& [before, after] : graph.edges()) {
    ++tasks_[before].succ_begin;
    SIM_CHECK(tasks_[after].pending < kMaxPending)
        << "task " << after << " has more than " << kMaxPending << " predecessors";
    ++tasks_[after].pending;
  }
  for (size_t i = 1; i < tasks_.size(); ++i) tasks_[i].succ_begin += tasks_[i - 1].succ_begin;
  succ_.resize(graph.edges().size());
  const auto& edges = graph.edges();
  for (auto e = edges.rbegin(); e != edges.rend(); ++e) {
    succ_[--tasks_[e->first].succ_begin] = e->second;
  }
}

Engine::~Engine() = default;

void Engine::TryStart(TaskId t) {
  TaskState& ts = tasks_[t];
  if (ts.state != kWaiting || ts.pending != 0) return;
  for (ResourceId r : graph_.ResourcesOf(t)) {
    if (HeadOf(r) != t) return;
  }
  ts.state = kRunning;
  const Time now = sim_.Now();
  if (!starts_.empty()) starts_[t] = now;
  const TaskGraph::Task& task = graph_.task(t);
  if (task.external) {
    SIM_CHECK(executor_ != nullptr) << "external task " << t << " but no TaskExecutor set";
    external_start_[ExternalRank(t)] = now;
    executor_->Start(t, *this);
  } else {
    Time end;
    if (!CheckedAdd(now, task.duration, &end) || end == Time::Infinite()) {
      ts.state = kPastClock;
      past_clock_.push_back({t, now});
      return;
    }
    sim_.ScheduleEvent(end, handler_, t);
  }
}

Time Engine::StartOf(TaskId t) const {
  SIM_CHECK(!starts_.empty() || graph_.NumTasks() == 0)
      << "StartOf(" << t << ") on an engine built with Times::kNotKept";
  return starts_[t];
}

Time Engine::EndOf(TaskId t) const {
  const TaskGraph::Task& task = graph_.task(t);
  if (!task.external) return StartOf(t) + task.duration;
  return external_end_[ExternalRank(t)];
}

size_t Engine::ExternalRank(TaskId t) const {
  const uint64_t below = (uint64_t{1} << (t % 64)) - 1;
  return external_before_[t / 64] + std::popcount(external_bits_[t / 64] & below);
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
  Time start;
  if (task.external) {
    const size_t rank = ExternalRank(t);
    start = external_start_[rank];
    external_end_[rank] = end;
  } else {
    start = end - task.duration;
  }
  makespan_ = Max(makespan_, end);
  ++finished_;
  if (control_ != nullptr && finished_ % kProgressTasks == 0) {
    control_->Report(finished_, graph_.NumTasks());
  }
  for (ResourceId r : graph_.ResourcesOf(t)) {
    const Span span{r, t, task.tag, start, end};
    for (SpanObserver* o : observers_) o->OnSpan(graph_, span);
    if (pipe_) pipe_->Push(span);
  }
  // Advance the queues first, then offer the new heads and the successors a
  // start, in a fixed order (resources, then successors) for determinism.
  for (ResourceId r : graph_.ResourcesOf(t)) ++cursor_[r].next;
  for (ResourceId r : graph_.ResourcesOf(t)) {
    const TaskId next = HeadOf(r);
    if (next != kNoTask) TryStart(next);
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
  if (!deferred_.empty()) {
    if (graph_.NumTasks() >= kDeferredTasks) {
      pipe_ = std::make_unique<SpanPipe>(graph_, deferred_);
    } else {
      observers_.insert(observers_.end(), deferred_.begin(), deferred_.end());
    }
    deferred_.clear();
  }
  const absl::Status status = RunTasks();
  if (pipe_) pipe_->Finish();
  return status;
}

absl::Status Engine::RunTasks() {
  if (control_ != nullptr) control_->Report(0, graph_.NumTasks());
  for (TaskId t = 0; t < graph_.NumTasks(); ++t) TryStart(t);
  sim_.Run();
  if (control_ != nullptr) control_->Report(finished_, graph_.NumTasks());
  if (finished_ == graph_.NumTasks()) return absl::OkStatus();
  if (sim_.Cancelled()) return absl::CancelledError("cancelled");
  if (!past_clock_.empty()) {
    const auto [t, start] = *std::min_element(past_clock_.begin(), past_clock_.end());
    std::ostringstream msg;
    msg << "simulated time overflows the picosecond clock (int64, "
        << Duration::Max().ToSeconds() / 86400 << " days): task " << t;
    if (!graph_.ResourcesOf(t).empty()) msg << " on " << graph_.resource(graph_.ResourcesOf(t)[0]).name;
    msg << " starts at " << start.ToSeconds() << " s and lasts "
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
        if (HeadOf(r) != t) {
          msg << " is queued on " << graph_.resource(r).name << " behind task " << HeadOf(r);
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
