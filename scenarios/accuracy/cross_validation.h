// File: scenarios/accuracy/cross_validation.h
//
// Leave-one-source-out validation of the training tables: how the simulator
// does on a source none of its fitted numbers has seen. Every row of every
// table is simulated once per value of a grid of GEMM factors (the number each
// software-stack profile fits, models/data/frameworks.textproto). Then, for
// each source S, each stack's factor is refitted on the rows of that stack
// from every other source (the value minimising the mean of the sources'
// MAPEs, so no one large table outweighs the rest) and S's rows are predicted
// with it. A stack with no other source keeps its shipped value. The same
// grid gives the in-sample figures (every row at its profile's shipped value)
// and the fit on all sources, which is what `clustersim fit` prints. The
// out-of-source residuals make the prediction bands (models/prediction_interval.h),
// whose coverage is checked the same way: each source against bands built
// without it.
//
// Not refitted here: the attention factor, host time per op and pipeline-engine
// time (each fitted on its own regime, docs/accuracy.md); they stay at the
// profiles' values in every fold.
//
// Example:
//   absl::StatusOr<CrossValidation> cv = LeaveOneSourceOut(tables, {.threads = 2});
//   std::cout << FormatCrossValidation(*cv, 8, 12);
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_CROSS_VALIDATION_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_CROSS_VALIDATION_H_

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/prediction_interval.h"
#include "scenarios/accuracy/validation.h"
#include "sim/csv_table.h"

namespace clustersim::scenarios {

struct NamedTable {
  std::string origin;  // path, for the report
  sim::CsvTable table;
};

struct CrossValidationOptions {
  // GEMM factors simulated; each profile's shipped value is added if missing.
  // Steps of 0.03: Megatron-Core's objective is flat to a few tenths of a point
  // over 0.06, so a coarser grid splits its folds between neighbours; each grid
  // point is one more simulation of every row.
  std::vector<double> gemm_grid = {0.73, 0.76, 0.79, 0.82, 0.85, 0.88, 0.91, 0.94, 0.97, 1.0};
  int threads = 1;  // tables simulated in parallel; the report does not depend on it
  int stride = 1;   // every n-th row of each table (ValidationOptions)
  int offset = 0;
  std::string network_tier;  // every row's network tier (ValidationOptions); empty: analytic
  // Called after each (grid value, table) pass, serialised; may be empty.
  std::function<void(int done, int total)> progress;
  // Stops every table between rows once set (ValidationOptions::cancel).
  const std::atomic<bool>* cancel = nullptr;
};

// One source, predicted with and without its own rows in the fits.
struct SourceFold {
  std::string source;
  std::string stacks;  // the stacks its rows ran, comma-separated
  int rows = 0;
  double in_sample_mape = 0, in_sample_signed = 0;          // percent
  double out_of_source_mape = 0, out_of_source_signed = 0;  // percent
  std::string fitted_without;  // e.g. "megatron-core 0.85; jax-xla 0.91 (shipped)"
  // Fraction of its rows inside the 80% band built without it.
  double band_coverage = 0;
};

// A stack's GEMM factor fitted on every source of the stack.
struct StackFit {
  std::string stack;
  double shipped = 0, fitted = 0;
  int sources = 0, rows = 0;
  std::vector<double> objective;  // per grid value: mean of the sources' MAPEs, percent
};

struct CrossValidation {
  std::vector<double> grid;
  std::vector<SourceFold> sources;     // sorted by source
  std::vector<GroupSummary> by_group;  // out of source, by stack x GPU
  std::vector<StackFit> fits;          // by stack
  int rows = 0, not_run = 0;
  double in_sample_mape = 0;             // over rows, percent
  double out_of_source_mape = 0;         // over rows, percent
  double out_of_source_source_mean = 0;  // mean of the sources' MAPEs, percent
  // Bands of measured / predicted step time over every out-of-source row
  // (what `clustersim fit --write-intervals` ships), and how many rows fall in
  // the band built without their own source: over rows, and averaged over
  // sources.
  std::vector<models::IntervalBand> bands;
  double band_coverage = 0, band_coverage_source_mean = 0;
  // The 10-90% quantiles of the residuals are widened this many times about
  // their centre (log scale), so that sources not in a band's data land in it
  // 80% of the time; fitted without each source for its coverage.
  double band_width_scale = 1;
  // The memory check over every simulated row of every table (the verdict
  // does not depend on the GEMM factor), and the misfits per source.
  MemoryCheck memory;
  std::map<std::string, int> misfits_by_source;
};

// Reads and parses training tables (published-runs.csv layout or vTrain's);
// a serving table or an unreadable file is an error naming the path.
absl::StatusOr<std::vector<NamedTable>> LoadTrainingTables(const std::vector<std::string>& paths);

absl::StatusOr<CrossValidation> LeaveOneSourceOut(const std::vector<NamedTable>& tables,
                                                  const CrossValidationOptions& options);

// Whether the 80% band is calibrated: the sources hold 75-85% of their rows
// in the band built without them, on average. Each source weighs one, as in
// the width scale's fit: a new run comes from a source the bands have not
// seen, and one large table (vTrain's 1,440 single-node rows) would otherwise
// decide the figure.
bool BandCalibrated(const CrossValidation& cv);

// Per source (in sample, out of source, the factors it was predicted with),
// per stack x GPU (out of source, flagged beyond kGroupBiasBound), overall,
// whether the targets are met (`overall_target` for the overall
// out-of-source MAPE, `source_target` for every source), and one line of the
// memory check: the count of runs predicted not to fit, by source.
std::string FormatCrossValidation(const CrossValidation& cv, double overall_target,
                                  double source_target);

// The GEMM factor each stack fits on all the sources: grid, objective and the
// shipped value beside it.
std::string FormatStackFits(const CrossValidation& cv);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_CROSS_VALIDATION_H_
