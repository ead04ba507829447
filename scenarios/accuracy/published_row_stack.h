// File: scenarios/accuracy/published_row_stack.h
//
// For published_row.cc: what a training row's software stack does to its
// scenario (scenarios/accuracy/row_mapping.h's RowAssumptions): the recompute
// granularity, sequence parallelism, the optimizer's sharding and overlaps,
// gradient-reduction precision, eager or compiled elementwise kernels,
// precision and attention kernel. What it fills in is appended to
// `assumptions`.
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_PUBLISHED_ROW_STACK_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_PUBLISHED_ROW_STACK_H_

#include <string>

#include "scenarios/accuracy/recipe_parallelism.h"
#include "scenarios/accuracy/row_mapping.h"
#include "scenarios/proto/scenario.pb.h"
#include "sim/csv_table.h"

namespace clustersim::scenarios::validation_internal {

// The recompute granularity to simulate: the row's, the recipe's recompute
// modules (added to s's training section) or block recompute (its method and
// layer count added there), or the stack's default.
std::string RowRecompute(const sim::CsvTable& t, const sim::CsvTable::Row& row,
                         const RowAssumptions& a, const RecipeParallelism& recipe,
                         config::Scenario* s, std::string* assumptions);

// The Megatron-FSDP size a Megatron-Bridge row's notes state ("FSDP column =
// N"), or 0 when they state none (or 0: plain data parallelism).
int MegatronFsdpSize(const std::string& notes);

// The FP8 scaling recipe (training.fp8_recipe) a row's notes and source
// state: "mxfp8", "current", "rowwise", or "" for the scenario default
// (delayed).
std::string Fp8RecipeOfRow(const std::string& notes, const std::string& source);

// Sets s's parallelism and training fields that the row's stack decides:
// sequence parallelism, the optimizer's sharding and overlaps, its profile,
// gradient-reduction precision, eager or compiled elementwise kernels,
// precision and attention kernel. REQUIRES: s's model set.
void StackTraining(const sim::CsvTable& t, const sim::CsvTable::Row& row, const RowAssumptions& a,
                   const std::string& notes, int tp, int pp, config::Scenario* s,
                   std::string* assumptions);

}  // namespace clustersim::scenarios::validation_internal

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_PUBLISHED_ROW_STACK_H_
