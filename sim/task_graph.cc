#include "sim/task_graph.h"

#include <utility>

#include "sim/check.h"
#include "sim/prefault.h"

namespace clustersim::sim {

static_assert(sizeof(TaskGraph::Task) == 16, "huge graphs rely on 16-byte tasks");

ResourceId TaskGraph::AddResource(std::string name, uint32_t group, uint32_t lane) {
  resources_.push_back(Resource{std::move(name), group, lane});
  owners_.push_back(Owner{group, lane});
  return static_cast<ResourceId>(resources_.size() - 1);
}

TaskId TaskGraph::AddTask(std::span<const ResourceId> resources, Duration duration,
                          uint32_t tag) {
  SIM_CHECK(duration >= Duration::Zero()) << "negative task duration " << duration.picoseconds();
  const TaskId id = static_cast<TaskId>(tasks_.size());
  SIM_CHECK(resource_refs_.size() + resources.size() < (size_t{1} << 31))
      << "more than 2^31 resource uses in one task graph";
  tasks_.push_back(Task{duration, tag, static_cast<uint32_t>(resource_refs_.size()), 0});
  PrefaultAhead(tasks_);
  for (size_t i = 0; i < resources.size(); ++i) {
    const ResourceId r = resources[i];
    SIM_CHECK(r < resources_.size()) << "unknown resource " << r;
    for (size_t j = 0; j < i; ++j) {
      SIM_CHECK(resources[j] != r) << "resource " << resources_[r].name << " named twice";
    }
    resource_refs_.push_back(r);
    PrefaultAhead(resource_refs_);
  }
  return id;
}

TaskId TaskGraph::AddExternalTask(std::span<const ResourceId> resources, uint32_t tag) {
  const TaskId id = AddTask(resources, Duration::Zero(), tag);
  tasks_[id].external = 1;
  return id;
}

void TaskGraph::Reserve(size_t tasks) {
  tasks_.reserve(tasks);
  resource_refs_.reserve(tasks + tasks / 2);
  edges_.reserve(tasks + tasks / 2);
  // The background thread commits the pages of the first part of each array
  // now and keeps ahead of them as they fill (AddTask, AddDependency).
  PrefaultAhead(tasks_);
  PrefaultAhead(resource_refs_);
  PrefaultAhead(edges_);
}

void TaskGraph::ExtendTask(TaskId id, Duration extra) {
  SIM_CHECK(id < tasks_.size() && !tasks_[id].external && extra >= Duration::Zero())
      << "cannot extend task " << id;
  tasks_[id].duration = tasks_[id].duration + extra;
}

void TaskGraph::SetTag(TaskId id, uint32_t tag) {
  SIM_CHECK(id < tasks_.size()) << "cannot tag unknown task " << id;
  tasks_[id].tag = tag;
}

void TaskGraph::AddDependency(TaskId before, TaskId after) {
  SIM_CHECK(before < tasks_.size() && after < tasks_.size())
      << "dependency between unknown tasks " << before << " -> " << after;
  SIM_CHECK(before != after) << "task " << before << " cannot depend on itself";
  edges_.emplace_back(before, after);
  PrefaultAhead(edges_);
}

void TaskGraph::ReleaseDependencies() { HugeVector<std::pair<TaskId, TaskId>>().swap(edges_); }

}  // namespace clustersim::sim
