// File: scenarios/run/runner.h
//
// Runs one resolved scenario (scenarios/input/resolve.h) in four stages:
//   build     the cluster and its network model, the kernel model, the step's
//             task graph (strategies/step_builder.h);
//   simulate  the graph on the event engine with the step statistics, the
//             memory timeline and, if asked, a trace subscribed;
//   measure   the Result: step time, throughput, MFU, bubble, exposed
//             communication, memory per GPU, cost;
//   report    the HTML report's page, when asked (the caller writes it).
// Pure wiring of the modules; each number is computed where its module lives.
//
// Example:
//   RunOptions opts{.trace_path = "out/trace.json", .report = true};
//   absl::StatusOr<RunOutput> out = RunScenarioWithReport(resolved, opts);
//   // out->result, out->report_html
//   absl::StatusOr<config::Result> result = RunScenario(resolved, {});
#ifndef CLUSTERSIM_SCENARIOS_RUN_RUNNER_H_
#define CLUSTERSIM_SCENARIOS_RUN_RUNNER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/input/limits.h"
#include "scenarios/input/resolve.h"
#include "scenarios/proto/result.pb.h"
#include "sim/run_control.h"
#include "topology/cluster.h"
#include "topology/network_model.h"
#include "traces/chrome_trace_writer.h"
#include "traces/id_ranges.h"

namespace clustersim::scenarios {

struct RunOptions {
  std::string trace_path;           // empty: no trace
  std::string trace_format = "json";                  // "json" (Chrome) | "perfetto"
  std::optional<traces::IdRanges> trace_ranks;        // GPUs to keep in the trace
  std::optional<traces::IdRanges> trace_steps;        // steps to keep
  traces::TraceDetail trace_detail = traces::TraceDetail::kOp;  // op | layer
  bool report = false;              // render the HTML report (RunOutput::report_html)
  bool fold_data_parallel = true;   // simulate one data-parallel replica (exact when symmetric)
  // Above this many GPUs, simulate one tensor-parallel rank per group and one
  // context-parallel rank per ring too (scenarios/input/limits.h).
  int fold_tensor_parallel_above_gpus = kFoldTensorParallelAboveGpus;
  // With tensor-parallel folding, fold context-parallel rings too.
  bool fold_context_parallel = true;
  // Per GPU, the factor its compute ops take longer (StepInputs::gpu_time_scale);
  // empty: every GPU typical. RunScenario fills it from reliability.stragglers.
  std::vector<double> gpu_time_scale;
  // Merge runs of compute ops into one task each when no trace or report is
  // made (BuildMode::merge_compute_chains: the Result is unchanged but for
  // simulated_tasks and simulated_events, which count the merged tasks, and
  // the energy section, which needs each kernel's kind and is left out).
  bool merge_compute_chains = false;
  // Follow memory in use over the simulated step (strategies/memory_timeline.h:
  // the Result's simulated_peak_gib per stage, the trace's memory counter, the
  // report's curves). Off (search: its table prints the memory model's peak)
  // leaves the simulated peaks 0 when no trace or report is written.
  bool memory_timeline = true;
  // A cluster already built from the scenario's cluster spec, shared by many
  // runs (search: its routes are memoised, thread-safely); null: build one.
  const topology::Cluster* cluster = nullptr;
  // With `cluster`: the network tier that costs collectives on it, shared by
  // many runs (search: a topology::MemoNetwork over its AnalyticNetwork); null: an
  // AnalyticNetwork per run.
  const topology::NetworkModel* network = nullptr;
  // Another thread's view of the simulation (sim/run_control.h): tasks
  // finished of the step's graph, and a flag that stops it (CANCELLED). Must
  // outlive the run; null: none. Outputs are the same with or without it.
  sim::RunControl* control = nullptr;
};

// The run's result and, with RunOptions::report, its self-contained HTML page.
struct RunOutput {
  config::Result result;
  std::string report_html;
};

absl::StatusOr<RunOutput> RunScenarioWithReport(const ResolvedScenario& scenario,
                                                const RunOptions& options);

// The result alone (RunOptions::report is ignored).
absl::StatusOr<config::Result> RunScenario(const ResolvedScenario& scenario,
                                           const RunOptions& options);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_RUN_RUNNER_H_
