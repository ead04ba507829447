// File: scenarios/accuracy/serving_modes_internal.h
//
// Cell readers of the serving-deployed table shared by serving_modes.cc (the
// row's mapping), serving_datasets.cc and serving_deployed_table.cc (the
// table's check).
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_SERVING_MODES_INTERNAL_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_SERVING_MODES_INTERNAL_H_

#include <set>
#include <string>
#include <string_view>

#include "sim/csv_table.h"

namespace clustersim::scenarios::serving_modes_internal {

// The names in the row's ';'-separated feature cell.
std::set<std::string> Features(const sim::CsvTable& t, const sim::CsvTable::Row& row);

// A whole count > 0 in `column`, or 0 when empty or not a count.
int Count(const sim::CsvTable& t, const sim::CsvTable::Row& row, std::string_view column);

// N of "..., N requests" in a dataset cell ("synthetic fixed 128/128, 30000
// requests"), or 0 when it states none (serving_datasets.cc).
int StatedRequests(const std::string& dataset);

// "a, b, c" of the known modes and features, for messages.
std::string KnownModes();
std::string KnownFeatures();

}  // namespace clustersim::scenarios::serving_modes_internal

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_SERVING_MODES_INTERNAL_H_
