// File: scenarios/accuracy/validation_rows.h
//
// For validation.cc and the row mappers beside it: one row of a training
// table turned into a scenario, simulated and compared with its measurement.
// published_row.cc maps a published-runs.csv row (and the unseen table's),
// vtrain_row.cc a vTrain table's row; the helpers below are shared by both.
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_VALIDATION_ROWS_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_VALIDATION_ROWS_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "scenarios/accuracy/validation.h"
#include "scenarios/proto/result.pb.h"
#include "scenarios/proto/scenario.pb.h"
#include "sim/csv_table.h"

namespace clustersim::scenarios::validation_internal {

// Parses an integer cell; false when empty or malformed.
bool Int(const std::string& cell, int* out);

// Reads the parallel-size cell `column` (tp, pp, dp, cp, vp) into `*out` when
// it is stated. False, with `*reason` naming the column, when it is stated but
// not an integer from 1 to 1,024 (a 0 once divided by zero).
bool ParallelSize(const sim::CsvTable& t, const sim::CsvTable::Row& row, std::string_view column,
                  int* out, std::string* reason);

// A GPT model of the given shape (ffn 4 x hidden).
void GptModel(int layers, int hidden, int heads, int seq, int vocab, config::Scenario* s);

// Runs `s` under the options' overrides and returns the result, or the reason
// it cannot run. With options.keep_scenarios, `kept` receives the scenario as
// run, in text format.
absl::StatusOr<config::Result> Simulate(config::Scenario s, const ValidationOptions& options,
                                        std::string* kept);

// Copies the simulated result's memory verdict into `v` (ValidationRow::
// simulated, memory_gib, memory_capacity_gib, fits).
void RecordMemory(const config::Result& r, ValidationRow* v);

// One row of a published-runs.csv-shaped table (published_row.cc).
ValidationRow PublishedRow(const sim::CsvTable& t, const sim::CsvTable::Row& row,
                           const ValidationOptions& options);

// Row `index` of a vTrain table, of source `source` (vtrain_row.cc).
ValidationRow VtrainRow(const sim::CsvTable& t, const sim::CsvTable::Row& row,
                        const std::string& source, int index, const ValidationOptions& options);

}  // namespace clustersim::scenarios::validation_internal

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_VALIDATION_ROWS_H_
