// File: scenarios/run/run_trace.h
//
// The trace of a training run: opens the writer that RunOptions asks for
// (Chrome JSON or Perfetto protobuf, with its rank, step and detail filters),
// and after the run adds an arrow from each pipeline send to the action it
// feeds.
//
// Example:
//   absl::StatusOr<std::unique_ptr<traces::TraceSink>> t =
//       OpenRunTrace(scenario, options, cluster, placement, describer);
//   engine.AddObserver(t->get());  ...  engine.Run();
//   AddPipelineFlows(plan, engine, **t);
#ifndef CLUSTERSIM_SCENARIOS_RUN_RUN_TRACE_H_
#define CLUSTERSIM_SCENARIOS_RUN_RUN_TRACE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "scenarios/input/resolve.h"
#include "scenarios/run/runner.h"
#include "sim/engine.h"
#include "strategies/placement.h"
#include "strategies/step_describer.h"
#include "strategies/step_plan.h"
#include "topology/cluster.h"
#include "traces/trace_sink.h"

namespace clustersim::scenarios {

// The trace writer the options ask for; REQUIRES: options.trace_path set.
absl::StatusOr<std::unique_ptr<traces::TraceSink>> OpenRunTrace(
    const ResolvedScenario& s, const RunOptions& options, const topology::Cluster& cluster,
    const strategies::Placement& placement, const strategies::StepDescriber& describer);

// Arrows from each pipeline send to the action it feeds; both ends lie inside
// their slices (the send's last picosecond, the receiver's start).
void AddPipelineFlows(const strategies::StepPlan& plan, const sim::Engine& engine,
                      traces::TraceSink& trace);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_RUN_RUN_TRACE_H_
