// File: scenarios/studies/sweep.h
//
// `clustersim sweep`: every point of a grid (scenarios/proto/sweep.proto) simulated
// and added, as it finishes, to PREFIX.csv and PREFIX.jsonl (one JSON
// object a line, study_table.h's columns; a point that fails validation is a
// line {"label": ..., "error": ...}). Each finished point is appended to both
// files (its CSV row first) and fsync'ed before the next, so a finished point
// is never lost and the I/O per point is constant. A rerun cuts a torn final
// line (a kill mid-append) off either file, drops a CSV row the JSONL lacks
// (or the reverse), and skips the points left in PREFIX.jsonl: a torn or
// unmatched point is run again, never lost or written twice. --shard i/N runs the points whose
// index is i modulo N (job arrays); shards writing to their own prefixes
// produce the same lines as one process. Lines are written in point order
// whatever order the points finish in, so a distributed run (an executor
// that simulates points elsewhere, e.g. scenarios/studies/sweep_mpi.h) writes the
// same bytes as one process. The time-vs-cost Pareto front
// (time-to-train and total dollars when the run length is given, else step
// time and dollars per million tokens) is computed over every line.
//
// Example:
//   absl::StatusOr<std::vector<SweepPoint>> points = LoadSweep("grid.textproto");
//   absl::StatusOr<SweepSummary> s = RunSweep(*points, {.output_prefix = "/tmp/grid"});
#ifndef CLUSTERSIM_SCENARIOS_STUDIES_SWEEP_H_
#define CLUSTERSIM_SCENARIOS_STUDIES_SWEEP_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/proto/scenario.pb.h"
#include "sim/run_control.h"

namespace clustersim::scenarios {

struct SweepPoint {
  size_t index = 0;
  std::string key;  // "num_gpus=8,tp=4,recompute=full": the point's label
  config::Scenario scenario;
  // The CSV row ends in the goodput columns (study_table.h): set on every
  // point of a sweep where some point has a `reliability` section that runs
  // the goodput Monte Carlo (SweepHasGoodput).
  bool goodput_columns = false;
};

// Whether some point simulates the run with failures (goodput.h's
// GoodputRequested): the CSV then has the goodput columns.
bool SweepHasGoodput(const std::vector<SweepPoint>& points);

// The most points a sweep file may expand to; a grid beyond it is refused
// before it is built (each point holds a Scenario).
inline constexpr size_t kMaxSweepPoints = 100000;

// Errors name the file and the axis.
absl::StatusOr<std::vector<SweepPoint>> LoadSweep(const std::string& path);

// The same from the file's text; `origin` names it in errors and
// base_scenario resolves against `base_dir`.
absl::StatusOr<std::vector<SweepPoint>> ParseSweep(std::string_view text, const std::string& origin,
                                                   const std::string& base_dir);

struct SweepOptions {
  std::string output_prefix;  // PREFIX.csv, PREFIX.jsonl
  int shard = 0;
  int num_shards = 1;
};

struct ParetoPoint {
  std::string label;
  double time = 0;  // days to train (with failures when simulated), or step seconds
  double cost = 0;  // total dollars (likewise), or dollars per million tokens
};

struct SweepSummary {
  size_t points = 0;   // in this shard
  size_t skipped = 0;  // already in PREFIX.jsonl
  size_t ran = 0;
  size_t failed = 0;   // of those run, rejected by validation or simulation
  bool train_axes = false;  // the Pareto front is in days and dollars
  // Some point ran the goodput Monte Carlo: its days are the median time to
  // train with failures and its dollars the total with the waste.
  bool goodput_axes = false;
  std::vector<ParetoPoint> pareto;  // by time, then cost
  std::vector<std::string> lines;   // all of PREFIX.jsonl, this run's points included
};

// One simulated point as it goes into the files.
struct SweepLine {
  std::string json;  // one line, no newline; {"label": ..., "error": ...} when rejected
  std::string csv;   // one row with its newline; empty when rejected
  bool failed = false;
};

// Resolves and simulates one point (validation errors become an error line).
SweepLine SimulateSweepPoint(const SweepPoint& point);

// Simulates every point of `todo` and passes its line to `emit` with the
// point's position in `todo`, in any order, each position exactly once; stops
// at the first error `emit` returns and returns it.
using SweepEmit = std::function<absl::Status(size_t position, SweepLine line)>;
using SweepExecutor =
    std::function<absl::Status(const std::vector<const SweepPoint*>& todo, const SweepEmit& emit)>;

// The default executor: every point in order, in this process.
absl::Status SimulateInProcess(const std::vector<const SweepPoint*>& todo, const SweepEmit& emit);

// The same, reporting points done into `control` and returning CANCELLED
// before the next point once its flag is set (sim/run_control.h). `control`
// must outlive the executor's calls.
SweepExecutor InProcessExecutor(sim::RunControl* control);

absl::StatusOr<SweepSummary> RunSweep(const std::vector<SweepPoint>& points,
                                      const SweepOptions& options,
                                      const SweepExecutor& executor = SimulateInProcess);

// "i/N" with 0 <= i < N.
absl::Status ParseShard(const std::string& text, SweepOptions* options);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_STUDIES_SWEEP_H_
