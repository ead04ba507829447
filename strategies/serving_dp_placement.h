// File: strategies/serving_dp_placement.h
//
// The serving scheduler's pieces for data-parallel attention (expert
// parallelism; strategies/serving_scheduler.h, SchedulerConfig):
//
// DpPromptPlacement places each admitted prompt whole on one attention rank,
// the one with the fewest new tokens so far in the iteration, within that
// rank's share of the token budget (max_tokens_per_step / ranks); decode
// steps are spread evenly (SpreadDecodes). BusiestRank fills the
// IterationTotals::rank_* fields with the busiest rank's share, which every
// rank waits for at the MoE all-to-alls.
//
// AdpBalancer is TensorRT-LLM's attention-DP balancing
// (attention_dp_config.enable_balance; PyExecutor._balance_adp_requests):
// whether an iteration may start new prompts.
//
// PadToCudaGraph grows a decode-only iteration's GEMM rows to the smallest
// captured CUDA graph batch holding the busiest rank's sequences.
//
// Example:
//   DpPromptPlacement p(/*ranks=*/8, /*max_tokens_per_step=*/8192);
//   p.Reset();
//   const int rank = p.Place(/*chunk=*/900);   // -1: no rank has room
//   p.Assign(work.size() - 1, rank, 900);
//   p.BusiestRank(work, &totals);
#ifndef CLUSTERSIM_STRATEGIES_SERVING_DP_PLACEMENT_H_
#define CLUSTERSIM_STRATEGIES_SERVING_DP_PLACEMENT_H_

#include <cstdint>
#include <vector>

#include "strategies/serving_iteration.h"

namespace clustersim::strategies {

class DpPromptPlacement {
 public:
  // `ranks` <= 1: one rank (no data-parallel attention).
  DpPromptPlacement(int ranks, int64_t max_tokens_per_step);

  // A new iteration: no work placed.
  void Reset();
  // Decode steps of `tokens` new tokens spread evenly: ceil(tokens / ranks)
  // on every rank.
  void SpreadDecodes(int64_t tokens);
  // The rank a whole prompt of `chunk` tokens runs on: the one with the
  // fewest new tokens so far; -1 when it does not fit that rank's share of
  // the budget.
  int Place(int64_t chunk) const;
  // Work item `index` (a prompt of `chunk` tokens) runs on `rank`.
  void Assign(size_t index, int rank, int64_t chunk);
  // The busiest rank's share of the iteration `work` into t->rank_*.
  void BusiestRank(const std::vector<SequenceWork>& work, IterationTotals* t) const;

 private:
  int ranks_;
  int64_t per_rank_;
  std::vector<int> work_rank_;      // each work item's rank; -1: none (a decode step)
  std::vector<int64_t> rank_load_;  // new tokens per rank this iteration
};

class AdpBalancer {
 public:
  AdpBalancer(int ranks, int batching_wait_iters, int timeout_iters)
      : ranks_(ranks), batching_wait_iters_(batching_wait_iters), timeout_iters_(timeout_iters) {}

  // Whether this iteration may start new prompts, given how many queued
  // prompts could start (queued requests within the free sequence slots)
  // and how many sequences decode. Counts the iterations it holds them.
  bool AdmitsNow(int64_t startable, int64_t decodes);

 private:
  int ranks_, batching_wait_iters_, timeout_iters_;
  int waiting_iters_ = 0, batching_iters_ = 0;
};

// Decode steps alone (one query each, no prompt) run the smallest of the
// captured CUDA graph `batch_sizes` (ascending, per rank) that holds the
// busiest of `ranks` ranks' sequences: t->tokens grows to it x ranks. Above
// the largest, or with none captured: unchanged.
//
// With graphs captured, an iteration with a prompt on any rank, or whose
// busiest rank holds more sequences than the largest graph, runs eagerly on
// every rank (t->eager). TensorRT-LLM's PyTorch runtime
// (tensorrt_llm/_torch/pyexecutor/cuda_graph_runner.py, CUDAGraphRunner):
// a batch with context requests cannot run a graph, and under attention DP
// the ranks all-gather [can_run_cuda_graph, batch_size] and all go eager
// unless every rank can and their sizes are equal; with padding every rank
// first pads to the captured size over the largest rank's batch, so sizes
// differ only above the largest captured graph. Verification steps of
// speculative decoding keep their graphs.
void PadToCudaGraph(const std::vector<int>& batch_sizes, int ranks, IterationTotals* t);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SERVING_DP_PLACEMENT_H_
