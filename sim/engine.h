// File: sim/engine.h
//
// Runs a TaskGraph on a Simulator: tasks start when their predecessors are done
// and they head every resource queue they occupy (see task_graph.h), and end
// after their duration (or when their TaskExecutor says so). Each finished task
// is reported to every SpanObserver as one Span per resource it occupied.
//
// A graph that cannot make progress (a dependency cycle, or two multi-resource
// tasks queued in opposite orders on two streams) is detected when the event
// queue drains with work left, and reported as an error naming a stuck task:
// never a hang.
//
// Example:
//   Simulator sim;
//   Engine engine(graph, sim);
//   engine.AddObserver(&trace_writer);
//   absl::Status s = engine.Run();
//   Time end = engine.Makespan();
//
// Lifetime: `graph`, `sim`, observers and the executor must outlive the engine.
#ifndef CLUSTERSIM_SIM_ENGINE_H_
#define CLUSTERSIM_SIM_ENGINE_H_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "sim/huge_pages.h"
#include "sim/run_control.h"
#include "sim/simulator.h"
#include "sim/span.h"
#include "sim/task_graph.h"
#include "sim/units.h"

namespace clustersim::sim {

class Engine;
class SpanPipe;

// Decides the duration of external tasks while the simulation runs (e.g. a
// flow-level network model). Start must eventually lead to engine.Finish(task).
class TaskExecutor {
 public:
  virtual ~TaskExecutor() = default;
  virtual void Start(TaskId task, Engine& engine) = 0;
};

class Engine : private EventHandler {
 public:
  // Whether StartOf and EndOf can be asked after the run: keeping every
  // task's start costs 8 bytes per task, a fifth of the engine's memory on
  // huge graphs, which only a trace's pipeline arrows read.
  enum class Times { kKept, kNotKept };
  Engine(const TaskGraph& graph, Simulator& sim, Times times = Times::kKept);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // How an observer is told of spans. kInline: from the simulation thread as
  // each task ends. kDeferred: possibly on a second thread and later, but in
  // the same order and all before Run returns (SpanPipe; used on graphs of
  // kDeferredTasks tasks and more): for observers that share no state with
  // anything else running during the simulation.
  enum class Delivery { kInline, kDeferred };
  static constexpr size_t kDeferredTasks = size_t{1} << 20;
  void AddObserver(SpanObserver* observer, Delivery delivery = Delivery::kInline) {
    (delivery == Delivery::kInline ? observers_ : deferred_).push_back(observer);
  }
  // REQUIRES: set before Run when the graph has external tasks.
  void SetExecutor(TaskExecutor* executor) { executor_ = executor; }

  // Reports finished tasks of the graph into `control` every kProgressTasks
  // tasks and stops the run (CANCELLED) when its cancel flag is set (checked
  // by the simulator). `control` must outlive Run; null: neither.
  static constexpr size_t kProgressTasks = 1024;
  void SetControl(RunControl* control);

  // Runs the whole graph. Error (FAILED_PRECONDITION) when tasks remain that
  // can never start, naming one and what it waits for; CANCELLED when the
  // control's flag stopped it.
  absl::Status Run();

  // Ends an external task now. REQUIRES: the task is external and running.
  void Finish(TaskId task);

  Simulator& simulator() { return sim_; }
  const TaskGraph& graph() const { return graph_; }
  // REQUIRES for both: task t has finished; times kept.
  Time StartOf(TaskId t) const;
  Time EndOf(TaskId t) const;
  // The end of the last task (zero for an empty graph).
  Time Makespan() const { return makespan_; }
  size_t FinishedTasks() const { return finished_; }

 private:
  // Run without the pipe's start and finish.
  absl::Status RunTasks();
  void TryStart(TaskId t);
  void Complete(TaskId t);
  // A fixed-duration task's end.
  void OnEvent(uint32_t task) override { Complete(task); }

  const TaskGraph& graph_;
  Simulator& sim_;
  std::vector<SpanObserver*> observers_;
  std::vector<SpanObserver*> deferred_;
  std::unique_ptr<SpanPipe> pipe_;  // during Run, for deferred_ on a huge graph
  TaskExecutor* executor_ = nullptr;
  RunControl* control_ = nullptr;
  uint32_t handler_;  // this engine's id for Simulator::ScheduleEvent

  // Per task, with a sentinel at the end: the engine reads one 8-byte record
  // per task event. A fixed-duration task started at its end minus its
  // duration; external tasks' starts and ends are kept by their rank.
  struct TaskState {
    uint32_t succ_begin;    // successors are succ_[succ_begin, next task's succ_begin)
    uint32_t pending : 30;  // unfinished predecessors
    uint32_t state : 2;     // waiting, running, done, past the clock
  };
  HugeVector<TaskState> tasks_;
  HugeVector<Time> starts_;  // per task, when times are kept
  // Tasks whose end would pass the clock, and when they were ready.
  std::vector<std::pair<TaskId, Time>> past_clock_;
  HugeVector<TaskId> succ_;
  // Every resource's queue (its tasks in program order) in one flat array, and
  // per resource the position of its next task there and the queue's end: a
  // task event reads one 8-byte cursor per resource rather than a vector.
  struct QueueCursor {
    uint32_t next;
    uint32_t end;
  };
  HugeVector<TaskId> queue_;
  HugeVector<QueueCursor> cursor_;
  // The task at the head of `r`'s queue, or kNoTask when it is empty.
  static constexpr TaskId kNoTask = ~TaskId{0};
  TaskId HeadOf(ResourceId r) const {
    const QueueCursor& c = cursor_[r];
    return c.next < c.end ? queue_[c.next] : kNoTask;
  }
  // External tasks' ends, densely by their rank among external tasks: a bit
  // per task marks the external ones and a count per 64 tasks precedes each
  // word, so a rank is one popcount away.
  size_t ExternalRank(TaskId t) const;
  HugeVector<uint64_t> external_bits_;
  HugeVector<uint32_t> external_before_;
  HugeVector<Time> external_start_;
  HugeVector<Time> external_end_;
  Time makespan_;
  size_t finished_ = 0;
};

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_ENGINE_H_
