// File: sim/task_graph.h
//
// A static graph of work: tasks, the serial resources they occupy, and the
// dependencies between them. The graph knows nothing about GPUs or models; a
// task carries an opaque `tag` that its builder maps to meaning (an op, a
// collective) in a side table of its own.
//
// Semantics, as a CUDA stream behaves:
//   - Each resource is an in-order queue. Tasks are appended to every resource
//     they name in the order AddTask is called ("program order"): a resource's
//     queue is the tasks naming it, in id order (the graph keeps no separate
//     queue; the engine derives its own from ResourcesOf).
//   - A task starts when every predecessor has finished AND it is at the head
//     of the queue of every resource it occupies. A task on several resources
//     (a collective over eight GPUs' communication streams) starts on all of
//     them at once and holds them all until it ends.
//   - A task with no resources is a pure dependency point (a barrier).
//   - A task's duration is fixed at build time, or, for an `external` task,
//     decided while the simulation runs by a TaskExecutor (a network model).
//
// Invariants: dependencies point between existing tasks; ids are dense
// (0..NumTasks()-1) in creation order.
//
// Example:
//   TaskGraph g;
//   ResourceId compute = g.AddResource("gpu0/compute", /*group=*/0);
//   TaskId a = g.AddTask(compute, Microseconds(5), /*tag=*/0);
//   TaskId b = g.AddTask(compute, Microseconds(3), /*tag=*/1);  // runs after a
//   g.AddDependency(a, b);  // redundant here, harmless
#ifndef CLUSTERSIM_SIM_TASK_GRAPH_H_
#define CLUSTERSIM_SIM_TASK_GRAPH_H_

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "sim/huge_pages.h"
#include "sim/units.h"

namespace clustersim::sim {

using TaskId = uint32_t;
using ResourceId = uint32_t;

class TaskGraph {
 public:
  struct Resource {
    std::string name;   // e.g. "gpu3/compute"; for messages and traces
    uint32_t group;     // the owner (a GPU index), for observers
    uint32_t lane;      // the stream within the owner (0 = compute, ...)
  };
  // 16 bytes: huge unfolded steps hold tens of millions. A task's resources
  // run from its first_resource to the next task's (ResourcesOf).
  struct Task {
    Duration duration;             // ignored for external tasks
    uint32_t tag;                  // the builder's meaning of this task
    uint32_t first_resource : 31;  // into resource_refs_
    uint32_t external : 1;
  };

  TaskGraph() = default;
  TaskGraph(TaskGraph&&) = default;
  TaskGraph& operator=(TaskGraph&&) = default;

  ResourceId AddResource(std::string name, uint32_t group, uint32_t lane = 0);

  // Appends a task to the queue of each of `resources` (program order).
  // REQUIRES: duration >= 0; every resource exists; no resource repeated.
  TaskId AddTask(std::span<const ResourceId> resources, Duration duration, uint32_t tag);
  TaskId AddTask(std::initializer_list<ResourceId> resources, Duration duration, uint32_t tag) {
    return AddTask(std::span<const ResourceId>(resources.begin(), resources.size()), duration,
                   tag);
  }
  TaskId AddTask(ResourceId resource, Duration duration, uint32_t tag) {
    return AddTask(std::span<const ResourceId>(&resource, 1), duration, tag);
  }
  // A task whose duration a TaskExecutor decides at run time.
  TaskId AddExternalTask(std::span<const ResourceId> resources, uint32_t tag);

  // Capacity for about `tasks` tasks, with room for half as many again
  // resource uses and dependencies (an optimisation; the graph grows past it
  // as needed). Capacity that is never filled costs address space only: the
  // huge arrays are mapped, and pages are committed when first written.
  void Reserve(size_t tasks);

  // Lengthens a fixed-duration task by `extra` (a builder merging the next
  // op of a chain into it). REQUIRES: the task exists, is not external;
  // extra >= 0.
  void ExtendTask(TaskId id, Duration extra);

  // Replaces a task's tag (a builder that learns its meaning after adding it).
  // REQUIRES: the task exists.
  void SetTag(TaskId id, uint32_t tag);

  // `after` may not start before `before` has finished.
  // REQUIRES: both exist and differ.
  void AddDependency(TaskId before, TaskId after);

  // Frees the dependency list once an Engine has been built on the graph (it
  // keeps its own successor lists): 8 bytes per dependency on huge graphs.
  // Afterwards edges() is empty and no new Engine may be built on the graph.
  void ReleaseDependencies();

  size_t NumTasks() const { return tasks_.size(); }
  size_t NumResources() const { return resources_.size(); }
  size_t NumDependencies() const { return edges_.size(); }
  // Resource uses over all tasks (queue entries).
  size_t NumResourceUses() const { return resource_refs_.size(); }
  const Task& task(TaskId id) const { return tasks_[id]; }
  const Resource& resource(ResourceId id) const { return resources_[id]; }
  // A resource's group and lane from an 8-byte record: observers read these
  // for every span of a huge step.
  uint32_t GroupOf(ResourceId id) const { return owners_[id].group; }
  uint32_t LaneOf(ResourceId id) const { return owners_[id].lane; }
  std::span<const ResourceId> ResourcesOf(TaskId id) const {
    const uint32_t first = tasks_[id].first_resource;
    const uint32_t end = id + 1 < tasks_.size() ? tasks_[id + 1].first_resource
                                                : static_cast<uint32_t>(resource_refs_.size());
    return {resource_refs_.data() + first, end - first};
  }
  // Dependency edges (before, after) in insertion order.
  const HugeVector<std::pair<TaskId, TaskId>>& edges() const { return edges_; }

 private:
  std::vector<Resource> resources_;
  struct Owner {
    uint32_t group;
    uint32_t lane;
  };
  std::vector<Owner> owners_;  // per resource, as in resources_
  HugeVector<Task> tasks_;
  HugeVector<ResourceId> resource_refs_;
  HugeVector<std::pair<TaskId, TaskId>> edges_;
};

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_TASK_GRAPH_H_
