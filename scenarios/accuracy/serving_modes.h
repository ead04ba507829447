// File: scenarios/accuracy/serving_modes.h
//
// The deployment columns of a serving validation table
// (tests/validation/serving-deployed/runs.csv): the benchmark `mode` a row was
// measured in and the simulator `feature`s it needs, plus the setting columns
// (concurrency, request_rate, ttft_limit_ms, tpot_limit_ms, spec_method,
// spec_tokens, acceptance_len, disagg_prefill, disagg_decode, ep, pp,
// attention_dp, num_nodes, dataset). Their meanings are in that table's
// README.md.
//
// Modes: "fixed-batch" (a static batch, all requests start together),
// "offline" (all requests queued at once, maximum throughput: trtllm-bench
// throughput, MLPerf Offline), "server" (MLPerf Server: Poisson arrivals at
// request_rate, valid under p99 TTFT/TPOT limits), "concurrency" (a closed loop
// of N clients), "poisson" (open-loop arrivals without limits), "trace"
// (replayed arrivals).
//
// MapServingMode decides how today's serving simulator runs a row: a
// fixed batch; Poisson arrivals (request_rate, batch_or_concurrency requests,
// fixed lengths); or a closed loop of one client, which issues one request
// at a time and so is a batch of 1 run to the end, repeated. Every other row
// gets "needs <feature>, <feature>" naming what it waits for (offline mode,
// speculative decoding, disaggregation, expert parallelism, FP4, ...).
//
// CheckServingDeployedTable is the table's well-formedness check: unique ids,
// a source on every row, a finite numeric value, a known mode, known
// features, numeric setting columns; errors name the row and the column.
//
// Example:
//   ServingModeMapping m = MapServingMode(table, row);
//   if (!m.not_supported.empty()) std::cout << "not supported: " << m.not_supported;
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_SERVING_MODES_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_SERVING_MODES_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "sim/csv_table.h"

namespace clustersim::scenarios {

bool IsKnownServingMode(std::string_view mode);
bool IsKnownServingFeature(std::string_view feature);

// True when the table carries the deployment columns (a `mode` column).
bool HasServingModeColumns(const sim::CsvTable& table);

struct ServingModeMapping {
  // Non-empty: the row cannot run today; says which features it needs.
  std::string not_supported;
  // "fixed-batch" or "poisson" when it can run.
  std::string workload_kind;
  // Poisson rows: arrival rate and number of requests.
  double request_rate = 0;
  int num_requests = 0;
  // Settings taken on faith, printed under the row.
  std::vector<std::string> assumptions;
};

ServingModeMapping MapServingMode(const sim::CsvTable& table, const sim::CsvTable::Row& row);

// OK, or InvalidArgument naming the first bad row (id and line) and column.
absl::Status CheckServingDeployedTable(const sim::CsvTable& table, std::string_view origin);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_SERVING_MODES_H_
