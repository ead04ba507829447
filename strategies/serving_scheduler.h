// File: strategies/serving_scheduler.h
//
// A continuous-batching server (vLLM's scheduler) simulated as events on a
// sim::Simulator: requests arrive at their times; the replica runs one
// iteration at a time, and between iterations the scheduler decides the next
// batch, so new requests join between decode steps. Each iteration's duration
// comes from the cost function (strategies/serving_iteration.h), evaluated for
// that iteration's exact batch shape.
//
// Paged KV cache: `kv_blocks` blocks of `kv_block_size` tokens. A sequence of
// n tokens in the cache holds ceil(n / block) blocks (of its sliding-window
// layers only those the window reaches, models/kv_footprint.h, which the
// cache counts in finer units); blocks are allocated for
// the prompt at admission and one at a time as decoding crosses a block edge,
// and freed when the request finishes. Admission keeps `watermark` of the
// blocks free (vLLM's BlockSpaceManager watermark, 0.01). When a decode step
// finds no free block, the most recently admitted running sequence is
// preempted (vLLM's default "recompute" preemption): its blocks are freed and
// it returns to the front of the queue, to be prefilled again over its prompt
// and the tokens it already produced.
//
// Policy without chunked prefill (vLLM V0's default): if queued requests can
// be admitted (FCFS, within max_batch_size running sequences, the token
// budget max_tokens_per_step for their prompts, and free blocks), the
// iteration is their prefill alone; otherwise it is one decode step of every
// running sequence. With chunked prefill (vLLM's --enable-chunked-prefill):
// every iteration takes all decode steps first (one token each), then fills
// the rest of the token budget with prompt chunks: running partial prefills
// first, then newly admitted requests; decode and prefill share the
// iteration.
//
// Prefix caching (vLLM --enable-prefix-caching, strategies/serving_prefix_cache.h):
// a request's `cached_tokens` leading prompt tokens already have KV in the
// cache at admission, so its prefill computes only the rest (the chunks start
// at context = cached_tokens); the cached tokens still hold KV blocks and are
// attended to.
//
// Closed loop (strategies/serving_closed_loop.h): with closed_loop_clients N
// > 0, requests 0..N-1 arrive at their times and every other request is sent
// by a client when the one before it finishes (after think_time), in index
// order: benchmark_serving.py --max-concurrency, genai-perf --concurrency.
// With zero think time the new request joins the next iteration, like an
// open-loop arrival at an iteration's end.
//
// Frontend (SchedulerConfig::frontend_delay): every request reaches the
// engine a fixed time after its client sends it; the time is on the host, not
// in any iteration, so it lengthens each request's TTFT and end-to-end latency
// and leaves the engine's schedule as it was.
//
// Token accounting (vLLM's benchmark_serving.py): the prompt's prefill emits
// the first output token (TTFT = its iteration's end - arrival); each decode
// step emits one more (with speculative decoding, 1 + the accepted drafts); a
// request finishes when it has `output_tokens` tokens.
//
// Example:
//   absl::StatusOr<ServingRun> run = SimulateServing(requests, config,
//       [&](const IterationTotals& t) { return model.Cost(t); }, /*keep_iterations=*/true);
#ifndef CLUSTERSIM_STRATEGIES_SERVING_SCHEDULER_H_
#define CLUSTERSIM_STRATEGIES_SERVING_SCHEDULER_H_

#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "models/kv_footprint.h"
#include "sim/units.h"
#include "strategies/serving_iteration.h"

namespace clustersim::strategies {

struct ServingRequest {
  sim::Time arrival;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  // Leading prompt tokens whose KV is already cached (prefix caching);
  // REQUIRES: < prompt_tokens.
  int64_t cached_tokens = 0;
};

struct SchedulerConfig {
  int max_batch_size = 256;            // vLLM max_num_seqs
  int64_t max_tokens_per_step = 2048;  // vLLM max_num_batched_tokens
  bool chunked_prefill = false;
  int64_t kv_blocks = 0;
  int kv_block_size = 16;
  // The model's attention window (TransformerConfig::sliding_window; 0: none):
  // the iteration totals also sum its layers' windowed work, and its layers
  // hold only the blocks the window reaches (models/kv_footprint.h), weighed
  // by the two kinds of layers' KV bytes per token (InferenceMemory::kv_footprint;
  // 1 and 0 count whole blocks).
  int64_t sliding_window = 0;
  int64_t kv_full_weight = 1, kv_window_weight = 0;
  models::KvFootprint KvFootprint() const {
    return {.block_size = kv_block_size,
            .window = sliding_window,
            .full_weight = kv_full_weight,
            .window_weight = kv_window_weight};
  }
  // Takes the weights of `f` (of this config's block size and window).
  void SetKvWeights(const models::KvFootprint& f) {
    kv_full_weight = f.full_weight;
    kv_window_weight = f.window_weight;
  }
  double watermark = 0.01;
  // The whole blocks admission keeps free: watermark x kv_blocks, rounded up.
  int64_t WatermarkBlocks() const {
    return static_cast<int64_t>(std::ceil(watermark * static_cast<double>(kv_blocks)));
  }
  // Closed loop: > 0 clients send requests when their previous one finishes
  // (after think_time); 0: every request arrives at its own time.
  int closed_loop_clients = 0;
  sim::Duration think_time;
  // The request path outside the engine (inference.frontend): a request
  // reaches the engine this long after its client sends it. Records keep the
  // client's send time as `arrival`, so TTFT and end-to-end latency include
  // it; a closed-loop client's next request is sent when the last finishes
  // and reaches the engine this long later. Zero: none.
  sim::Duration frontend_delay;
  // Speculative decoding (strategies/serving_speculative.h): each decode step
  // verifies 1 + up to `speculative_tokens` drafted tokens (no more than the
  // request still needs or the token budget holds), holding KV blocks for
  // them, and emits DrawAcceptedTokens(acceptance_rate, ...) tokens. 0: off.
  int speculative_tokens = 0;
  double acceptance_rate = 0;
  uint64_t speculative_seed = 0;
  // Data-parallel attention (expert parallelism, strategies/serving_dp_placement.h)
  // over this many ranks; 1:
  // none. Without chunked prefill each admitted prompt runs whole on one
  // rank, the one with the fewest new tokens in the iteration, within that
  // rank's share of the token budget (max_tokens_per_step / ranks); decode
  // steps are spread evenly. The iteration's IterationTotals carry the
  // busiest rank's share (rank_tokens and its prompts), which every rank
  // waits for at the MoE all-to-alls.
  int attention_dp_ranks = 1;
  // TensorRT-LLM's in-flight batching without chunked context
  // (enable_chunked_context false): every iteration takes all decode steps
  // first, then admits whole prompts into the rest of the token budget, in
  // the same iteration. False: vLLM V0's prefill-alone iterations (above).
  bool mixed_whole_prompts = false;
  // TensorRT-LLM's GUARANTEED_NO_EVICT capacity scheduler (trtllm-bench's
  // default scheduler_policy): a request is admitted only when the blocks for
  // its whole length (prompt and every output token) are free, and holds them
  // from admission on, so no decode step ever preempts. False: blocks for the
  // prompt at admission and one at a time while decoding (vLLM).
  bool reserve_whole_request = false;
  // TensorRT-LLM's attention-DP balancing (attention_dp_config.enable_balance,
  // batching_wait_iters, timeout_iters; PyExecutor._balance_adp_requests),
  // with attention_dp_ranks > 1 and mixed_whole_prompts: new prompts are held
  // until every rank has one (queued requests >= ranks, within
  // max_batch_size), and then for `adp_batching_wait_iters` more iterations
  // while every rank decodes; a rank short of a prompt holds them for at most
  // `adp_timeout_iters` iterations, or none when some rank has nothing to
  // decode.
  bool adp_balance = false;
  int adp_batching_wait_iters = 0;
  int adp_timeout_iters = 0;
  // CUDA graphs with padding (TensorRT-LLM cuda_graph_config: batch_sizes,
  // enable_padding), in ascending order, per attention rank: an iteration of
  // decode steps alone runs the smallest captured batch that holds the
  // busiest rank's sequences, so every rank computes that many rows (the
  // padding rows run the GEMMs, experts and all-to-alls, not attention);
  // above the largest, no padding. Empty: none.
  std::vector<int> cuda_graph_batch_sizes;
  // Set by another thread to stop the simulation early (sim/run_control.h);
  // null: runs to the end.
  const std::atomic<bool>* cancel = nullptr;
};

struct RequestRecord {
  sim::Time arrival, first_token, finish;
  int64_t prompt_tokens = 0, output_tokens = 0;
  int64_t cached_tokens = 0;  // prefix-cache hits, as requested
  int preemptions = 0;
};

struct IterationRecord {
  sim::Time start, end;
  int64_t prefill_tokens = 0, decode_seqs = 0;
  int64_t batch = 0;                 // sequences in this iteration
  int64_t running = 0, waiting = 0;  // after scheduling this iteration
  int64_t kv_blocks_used = 0;
};

struct ServingRun {
  std::vector<RequestRecord> requests;      // in the order given
  std::vector<IterationRecord> iterations;  // when asked to keep them
  int64_t num_iterations = 0;
  sim::Duration busy;           // sum of iteration times
  sim::Duration communication;  // their collectives' share
  sim::Duration host;           // their host (CPU) share
  double flops = 0;             // model FLOPs of every iteration
  int64_t preemptions = 0;
  int64_t peak_running = 0;
  double mean_batch = 0;  // sequences per iteration, averaged over iterations
  sim::Time end;          // when the last request finished

  // Sequence decode steps and the tokens they emitted (more than one each
  // with speculative decoding).
  int64_t decode_steps = 0;
  int64_t decode_tokens = 0;
};

using IterationCostFn = std::function<IterationCost(const IterationTotals&)>;

// Simulates every request to completion on one replica. `requests` must be
// sorted by arrival (in a closed loop only the first clients' arrivals
// count). Errors (InvalidArgument) name the field when a request can never
// run: its prompt and output need more KV blocks than the cache holds, or
// (without chunked prefill) its prompt exceeds max_tokens_per_step.
// Always terminates: every iteration makes progress. CANCELLED once
// `config.cancel` is set.
absl::StatusOr<ServingRun> SimulateServing(const std::vector<ServingRequest>& requests,
                                           const SchedulerConfig& config,
                                           const IterationCostFn& cost, bool keep_iterations);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SERVING_SCHEDULER_H_
