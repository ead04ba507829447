// File: scenarios/accuracy/validation.h
//
// Runs published measurements of real training runs through the simulator:
// each row of a table becomes a scenario (model, GPU, strategy), is simulated,
// and its own metric is computed in its source's FLOP convention, then
// compared with the measurement. Two table layouts are understood:
//   - published-runs.csv (columns id, source, model, ..., metric, value):
//     metrics iteration_time_s, tflops_per_gpu (NAR21 counts recomputed FLOPs,
//     the others model FLOPs), mfu_pct, tokens_per_s_per_gpu, memory_gb;
//   - vTrain's ground_truth_{single,multi}.csv (Bang et al., MICRO 2024):
//     iteration time (ms) of GPT models under 3D parallelism on A100s.
// Rows that cannot be run are kept with the reason, never dropped. Where a
// source leaves a setting out, the row records the assumption it runs with.
//
// Example:
//   absl::StatusOr<ValidationReport> r = ValidateTable(table, "published-runs.csv", {});
//   std::cout << FormatValidationReport(*r);
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_VALIDATION_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_VALIDATION_H_

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/csv_table.h"

namespace clustersim::scenarios {

struct ValidationRow {
  std::string id;
  std::string source;  // NAR21, KOR22, vTrain-single, ...
  std::string metric;
  double measured = 0;
  bool supported = false;
  std::string reason;       // why not supported
  double predicted = 0;
  double error = 0;         // (predicted - measured) / measured
  // The same miss as an error of the step time: error for iteration_time_s,
  // measured / predicted - 1 for throughput metrics. Negative: too fast.
  double time_error = 0;
  std::string assumptions;  // settings the source does not state
  std::string stack;        // the framework profile it ran with
  std::string gpu;          // catalog name, or the row's own where the catalog has none
  int num_gpus = 0;
  // The scenario the row ran (text format, with every override applied), kept
  // under ValidationOptions::keep_scenarios; empty when the row never got one.
  std::string scenario;
  // The simulation's memory verdict (the run's "memory per GPU" line,
  // models/memory_verdict.h): peak per GPU, the GPU's capacity and whether the
  // peak fits it. Set whenever the row was simulated (`simulated`), whether or
  // not its metric is compared. Every row is a run that happened, so a row
  // predicted not to fit is a miss of the memory model.
  bool simulated = false;
  double memory_gib = 0, memory_capacity_gib = 0;
  bool fits = false;
};

// The memory check over rows that were simulated: how many, and the ids of
// those predicted not to fit their GPU (in table order).
struct MemoryCheck {
  int simulated = 0;
  std::vector<std::string> misfits;
};

MemoryCheck CheckMemory(const std::vector<ValidationRow>& rows);

// "memory: N of M runs that ran are predicted not to fit their GPU ...", with
// each misfit's id and peak of capacity; empty when no row was simulated.
std::string FormatMemoryCheck(const std::vector<ValidationRow>& rows);

struct SourceSummary {
  std::string source;
  int rows = 0;
  double mape = 0;         // mean absolute percentage error, percent
  double mean_signed = 0;  // mean time_error, percent
};

// Rows that share a software stack and a GPU: a bias there is the stack's
// or the GPU's, not the row's.
struct GroupSummary {
  std::string stack, gpu;
  int rows = 0;
  double mape = 0, mean_signed = 0;  // percent
};

// Running sums of rows' errors: the mean absolute error and the mean signed
// step-time error of the rows added (in the unit they were added in).
struct ErrorTally {
  int rows = 0;
  double abs_sum = 0, time_sum = 0;
  void Add(double abs_error, double time_error) {
    ++rows;
    abs_sum += abs_error;
    time_sum += time_error;
  }
  double Mape() const { return rows > 0 ? abs_sum / rows : 0; }
  double Signed() const { return rows > 0 ? time_sum / rows : 0; }
};

// Groups whose mean signed error lies beyond this are flagged (percent).
inline constexpr double kGroupBiasBound = 6;

struct ValidationReport {
  std::string origin;
  std::vector<ValidationRow> rows;
  std::vector<SourceSummary> by_source;  // sorted by source name
  std::vector<GroupSummary> by_group;    // sorted by stack, then GPU
  int supported = 0;
  double overall_mape = 0;  // percent, over supported time/throughput rows
  MemoryCheck memory;       // over every simulated row
};

struct ValidationOptions {
  // Run every n-th row of large tables (1 = all); skipped rows are counted,
  // not listed.
  int stride = 1;
  int offset = 0;  // first row run (0-based); with stride 2: 0 = even rows, 1 = odd
  // Overrides every row's training.host_overhead_us_per_op (< 0: default).
  double host_overhead_us = -1;
  // Overrides the vTrain rows' training.pipeline_p2p_host_us (< 0: default).
  double pipeline_p2p_host_us = -1;
  // Overrides every row's training.framework_attention_factor (<= 0: default).
  double framework_attention_factor = -1;
  // Overrides every row's training.framework_gemm_factor (<= 0: default).
  double framework_gemm_factor = -1;
  // Sets every row's network.tier ("analytic" or "flow"; empty: the row's own,
  // analytic). Resolve refuses any other value.
  std::string network_tier;
  // Resolve each row's scenario but simulate none (tests/fuzz): every row is
  // kept unsupported, with Resolve's error or "not simulated (resolve only)".
  bool resolve_only = false;
  // Keep each row's scenario in ValidationRow::scenario (validate
  // --write-scenarios), so that `clustersim run` can reproduce the row.
  bool keep_scenarios = false;
  // Set by another thread to stop between rows (sim/run_control.h): the
  // table then returns CANCELLED. Null: runs every row.
  const std::atomic<bool>* cancel = nullptr;
};

absl::StatusOr<ValidationReport> ValidateTable(const sim::CsvTable& table, std::string_view origin,
                                               const ValidationOptions& options);

// One line per stack x GPU group: MAPE, mean signed step-time error and the
// row count, flagged when the bias lies beyond kGroupBiasBound.
std::string FormatGroupSummaries(const std::vector<GroupSummary>& groups);

// The per-row table, unsupported rows with reasons, MAPE and mean signed
// error per source and per stack x GPU (flagged beyond kGroupBiasBound) and
// overall, whether `target_mape` (percent) is met, and the memory check.
std::string FormatValidationReport(const ValidationReport& report, double target_mape);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_VALIDATION_H_
