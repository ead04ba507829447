// File: scenarios/accuracy/inference_runs.h
//
// The inference validation table (tests/validation/inference-runs.csv)
// read row by row into serving scenarios. Each row becomes either a
// config::Scenario with an `inference` section (model from the row's
// architecture columns, device -> catalog name, devices and TP, weight and KV
// dtypes, prompt/output lengths, a fixed batch) plus the row's metric, or a
// "not supported: <reason>" (unknown device, MoE model, a weight format the
// simulator has no model of, ...). No row is dropped. A table with deployment
// columns (a `mode` column: tests/validation/serving-deployed/runs.csv) maps
// its rows through serving_modes.h: fixed batches, Poisson arrivals and a
// closed loop of one client run; other rows say which features they need.
//
// Assumptions a row needs (an "A100" taken as the 80 GB SXM part, a prompt
// of ">500" taken as 500, llama.cpp Q4_0 as 4-bit with a scale per 32
// weights, ...) are listed on the row so the report shows them.
//
// Example:
//   absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(text, "inference-runs.csv");
//   if (IsInferenceRunsTable(*t)) {
//     absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(*t);
//     for (const InferenceRun& r : *runs)
//       std::cout << r.id << " " << (r.scenario ? r.Setup() : r.not_supported);
//   }
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_INFERENCE_RUNS_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_INFERENCE_RUNS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/proto/scenario.pb.h"
#include "sim/csv_table.h"

namespace clustersim::scenarios {

// The metrics of the table; a row with another metric is not supported.
//   output_tokens_per_s_per_gpu, output_tokens_per_s_total, gen_tokens_per_s,
//   prompt_tokens_per_s, ttft_ms, tpot_ms, e2e_latency_ms, weights_gib_per_gpu,
//   kv_cache_tokens, max_concurrency, kv_bytes_per_token
bool IsKnownServingMetric(std::string_view metric);

struct InferenceRun {
  std::string id;
  std::string source;
  int line = 0;  // 1-based line of the row in the CSV
  std::string metric;
  std::string unit;
  double measured = 0;
  std::string device;  // the row's device text
  // Set when the row maps to a scenario; otherwise not_supported says why.
  std::optional<config::Scenario> scenario;
  std::string not_supported;
  std::vector<std::string> assumptions;
  // The source states no tp: the mapping inferred one (inferred_tp.h).
  bool inferred_tp = false;

  // One line: "Llama-2-7B on 1x h100-sxm5-80gb (tp 1), weights fp8, kv fp8,
  // prompt 128, output 128, batch 896". Empty when not mapped.
  std::string Setup() const;
};

// True when the header has the inference table's columns (device, tp,
// weight_dtype, kv_dtype, input_len, output_len, batch_or_concurrency, metric).
bool IsInferenceRunsTable(const sim::CsvTable& table);

// One InferenceRun per row, in file order. Error only when a column the
// mapping needs is missing from the header (naming it).
absl::StatusOr<std::vector<InferenceRun>> MapInferenceRuns(const sim::CsvTable& table);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_INFERENCE_RUNS_H_
