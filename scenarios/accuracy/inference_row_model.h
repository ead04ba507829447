// File: scenarios/accuracy/inference_row_model.h
//
// The model of a serving table's row (inference-runs.csv and the
// serving-deployed table): an MoE row takes the catalog preset its model text
// names whole; a dense Llama, Qwen or Mistral row takes its architecture
// columns with those families' SwiGLU, RMSNorm and untied output layer.
//
// Example:
//   std::string reason = MapRowModel(table, row, scenario.mutable_model(), &notes);
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_INFERENCE_ROW_MODEL_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_INFERENCE_ROW_MODEL_H_

#include <string>
#include <vector>

#include "scenarios/proto/scenario.pb.h"
#include "sim/csv_table.h"

namespace clustersim::scenarios {

// Fills `m` from `row`'s model, ffn, feature and architecture columns and
// records what it assumed in `assumptions`. Returns "" or the reason the row's
// model cannot be mapped.
std::string MapRowModel(const sim::CsvTable& t, const sim::CsvTable::Row& row,
                        config::ModelConfig* m, std::vector<std::string>* assumptions);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_INFERENCE_ROW_MODEL_H_
