// File: scenarios/studies/search.h
//
// `clustersim search`: every parallel strategy of strategies/search_space.h
// for one model and cluster at one or more GPU counts; the ones that fail
// validation or the memory model are counted by reason and never simulated;
// the rest are simulated on a pool of threads (analytic network, one
// data-parallel replica) and ranked. The ranking is independent of the number
// of threads: each result lands in its enumeration slot and ties break by
// enumeration order.
//
// Precision is a dimension too: `precisions` lists the training precisions
// to try ("bf16", "fp16", "fp8"; "auto": the scenario's plus fp8 where the GPU
// has an FP8 peak); empty: the scenario's only. One the GPU or the training
// stack cannot run is not searched and said in SearchReport::notes.
//
// Ranking: "time" (step time), "cost" (dollars per million tokens) or
// "time-to-train" (needs pricing.train_tokens or train_steps; with a budget,
// runs costing more are dropped and counted).
//
// Example:
//   SearchRequest req{.base = scenario, .gpu_counts = {1024}, .threads = 2};
//   absl::StatusOr<SearchReport> r = RunSearch(req);   // r->top[0] is the fastest
#ifndef CLUSTERSIM_SCENARIOS_STUDIES_SEARCH_H_
#define CLUSTERSIM_SCENARIOS_STUDIES_SEARCH_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/proto/scenario.pb.h"
#include "sim/run_control.h"
#include "scenarios/studies/study_table.h"

namespace clustersim::scenarios {

struct SearchRequest {
  // Model, cluster (gpu, node), training (global batch, precision), pricing;
  // its parallelism section and cluster.num_gpus are replaced per candidate.
  config::Scenario base;
  std::vector<int> gpu_counts;
  std::string rank_by = "time";  // "time" | "cost" | "time-to-train"
  // Training precisions to try (see above); empty: the scenario's.
  std::vector<std::string> precisions;
  double budget_usd = 0;  // 0: no budget
  int top_k = 10;
  int threads = 1;
  // Stop after pruning: count the strategies that fit (SearchReport::feasible)
  // and simulate none, e.g. to find the fewest GPUs a model fits on.
  bool prune_only = false;
  // Called from worker threads, serialised, after each simulation.
  std::function<void(size_t done, size_t total)> progress;
  // Strategies simulated / to simulate, and a flag checked before each
  // simulation: once set, the search returns CANCELLED (sim/run_control.h).
  // Null: none.
  sim::RunControl* control = nullptr;
};

struct SearchReport {
  size_t enumerated = 0;
  size_t feasible = 0;  // passed validation and the memory model
  size_t simulated = 0;
  // (reason, count), most frequent first, then by name.
  std::vector<std::pair<std::string, size_t>> rejections;
  std::vector<StudyRow> top;  // ranked, at most top_k
  // The precisions searched, in enumeration order (the outer loop inside a
  // GPU count), and why a requested one was not.
  std::vector<std::string> precisions;
  std::vector<std::string> notes;
  double prune_seconds = 0;
  double simulate_seconds = 0;
  // Process CPU time (all threads) spent simulating: the rate a free core
  // would give, whatever else shares the machine.
  double simulate_cpu_seconds = 0;
};

// Errors: a bad base scenario, rank_by, or a budget/time-to-train without a run
// length; they name the flag.
absl::StatusOr<SearchReport> RunSearch(const SearchRequest& request);

// Why `assignments` ("tp=2,pp=4,mbs=1", scenario_edit.h syntax, on top of the
// search's defaults at the first GPU count) would be rejected, or its result.
absl::StatusOr<std::string> ExplainStrategy(const SearchRequest& request,
                                            std::string_view assignments);

// The report as text (top-k table, rejection counts, timing) or json.
absl::StatusOr<std::string> FormatSearchReport(const SearchReport& report, std::string_view format);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_STUDIES_SEARCH_H_
