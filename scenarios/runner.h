// File: scenarios/runner.h
//
// Runs one resolved scenario end to end: builds the cluster and its network
// model, the kernel model, the step's task graph; simulates it on the event
// engine with the step statistics (and, if asked, a Chrome trace) subscribed;
// and assembles the Result: step time, throughput, MFU, bubble, exposed
// communication, memory per GPU, cost. Pure wiring of the modules; each
// number is computed where its module lives.
//
// Example:
//   RunOptions opts{.trace_path = "out/trace.json"};
//   absl::StatusOr<config::Result> result = RunScenario(resolved, opts);
#ifndef CLUSTERSIM_SCENARIOS_RUNNER_H_
#define CLUSTERSIM_SCENARIOS_RUNNER_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "scenarios/resolve.h"
#include "scenarios/result.pb.h"
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
  std::string report_path;          // self-contained HTML report; empty: none
  bool fold_data_parallel = true;   // simulate one data-parallel replica (exact when symmetric)
  // Above this many GPUs, simulate one tensor-parallel rank per group and one
  // context-parallel rank per ring too (exact; smaller runs keep every GPU so
  // that traces show them all).
  int fold_tensor_parallel_above_gpus = 64;
  // Merge runs of compute ops into one task each when no trace or report is
  // written (BuildMode::merge_compute_chains: the Result is unchanged but
  // simulated_tasks and simulated_events, which count the merged tasks).
  bool merge_compute_chains = false;
  // Follow memory in use over the simulated step (scenarios/memory_timeline.h:
  // the Result's simulated_peak_gib per stage, the trace's memory counter, the
  // report's curves). Off (search: its table prints the memory model's peak)
  // leaves the simulated peaks 0 when no trace or report is written.
  bool memory_timeline = true;
  // A cluster already built from the scenario's cluster spec, shared by many
  // runs (search: its routes are memoised, thread-safely); null: build one.
  const topology::Cluster* cluster = nullptr;
  // With `cluster`: the network tier that costs collectives on it, shared by
  // many runs (search: a MemoNetwork over its AnalyticNetwork); null: an
  // AnalyticNetwork per run.
  const topology::NetworkModel* network = nullptr;
};

absl::StatusOr<config::Result> RunScenario(const ResolvedScenario& scenario,
                                           const RunOptions& options);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_RUNNER_H_
