// File: sim/span.h
//
// What the engine reports as tasks finish: one Span per task and resource it
// occupied, told to SpanObservers (engine.h).
#ifndef CLUSTERSIM_SIM_SPAN_H_
#define CLUSTERSIM_SIM_SPAN_H_

#include <cstdint>

#include "sim/task_graph.h"
#include "sim/units.h"

namespace clustersim::sim {

// One task's occupation of one resource.
struct Span {
  ResourceId resource;
  TaskId task;
  uint32_t tag;
  Time start;
  Time end;
};

class SpanObserver {
 public:
  virtual ~SpanObserver() = default;
  // Called when a task finishes, once per resource it occupied, in resource order.
  virtual void OnSpan(const TaskGraph& graph, const Span& span) = 0;
};

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_SPAN_H_
