// File: strategies/serving_disaggregated.h
//
// Disaggregated prefill/decode serving (DistServe, Zhong et al. OSDI 2024;
// Splitwise, Patel et al. ISCA 2024; Mooncake, Qin et al. 2024) simulated as
// events on one sim::Simulator: a pool of prefill instances runs prompts only,
// a pool of decode instances generates only, and each request's prompt KV
// cache moves from the one to the other over the cluster's links.
//
// A request's life:
//   1. arrival: routed to a prefill instance ("least-loaded": fewest queued
//      prompt tokens, the iteration in flight included; or "round-robin").
//   2. prefill: FCFS prefill-only iterations within max_batch_size prompts,
//      max_tokens_per_step tokens and the instance's KV blocks (the prompt's
//      blocks, watermark kept free). The iteration's end emits the first token:
//      TTFT = that end - arrival. A one-token request finishes there.
//   3. hand-over: routed to a decode instance ("least-loaded": fewest
//      sequences running, ready, in flight or waiting; or "round-robin"). The
//      decode instance pulls its waiting requests FCFS when it has blocks for
//      the prompt and the first token (watermark kept free) and a batch slot;
//      the KV stays in (and holds) the prefill instance's blocks until then.
//   4. transfer: over the link queue of the source prefill instance (FIFO; one
//      transfer at a time), taking transfer(p, d, prompt tokens). With
//      layer-wise transfer and a pull at the very end of the prefill, each
//      layer's KV left while later layers computed: with T the whole
//      transfer, L layers and C the prefill iteration, layer l is ready at
//      l·C/L and its send takes T/L, so the last send ends
//      max(T/L, T - (L-1)·C/L) after the iteration (only the last layer's
//      share when the link keeps up). The link is charged that exposed part.
//      A transfer that waited for memory moves the whole cache afterwards.
//      When it ends, the prefill blocks are freed.
//   5. decode: decode-only continuous batching: every iteration one token for
//      every running sequence; blocks grow one at a time as a sequence
//      crosses a block edge; when none is free the newest running sequence is
//      swapped out (its blocks freed; it waits at the front of the queue and
//      comes back without a copy cost when blocks allow). TPOT =
//      (finish - first token) / (output - 1): the transfer and the decode
//      queue count, as in DistServe.
// Everything is deterministic: ties break by instance index and the
// simulator's (time, seq) order.
//
// Example:
//   DisaggConfig c{.prefill = {.instances = 2, .scheduler = p, .cost = pc},
//                  .decode = {.instances = 1, .scheduler = d, .cost = dc},
//                  .transfer = [](int, int, int64_t tokens) { return sim::Microseconds(tokens); }};
//   absl::StatusOr<DisaggRun> run = SimulateDisaggregated(requests, c);
#ifndef CLUSTERSIM_STRATEGIES_SERVING_DISAGGREGATED_H_
#define CLUSTERSIM_STRATEGIES_SERVING_DISAGGREGATED_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/units.h"
#include "strategies/serving_scheduler.h"

namespace clustersim::strategies {

enum class DisaggRouting { kLeastLoaded, kRoundRobin };

struct DisaggPoolSetup {
  int instances = 1;
  // max_batch_size, max_tokens_per_step, kv_blocks, kv_block_size and
  // watermark of one instance (chunked_prefill and cancel are ignored).
  SchedulerConfig scheduler;
  // The cost of one iteration of one instance (all instances are alike).
  IterationCostFn cost;
};

// Time to move the KV cache of `tokens` prompt tokens from prefill instance
// `p` to decode instance `d`, the whole cache at once.
using KvTransferFn = std::function<sim::Duration(int p, int d, int64_t tokens)>;

struct DisaggConfig {
  DisaggPoolSetup prefill, decode;
  KvTransferFn transfer;
  bool layerwise = false;
  int num_layers = 1;  // for layer-wise transfer; >= 1
  DisaggRouting routing = DisaggRouting::kLeastLoaded;
  // Set by another thread to stop early (sim/run_control.h); null: none.
  const std::atomic<bool>* cancel = nullptr;
};

// One request's disaggregated path (times valid when output_tokens > 1).
struct DisaggRequestPath {
  int prefill_instance = -1, decode_instance = -1;
  sim::Time transfer_start, transfer_end;
};

struct DisaggPoolRun {
  int64_t iterations = 0;
  sim::Duration busy;  // summed over instances
  double flops = 0;
  double batch_sum = 0;  // sequences over all iterations
  int64_t preemptions = 0;
  int64_t peak_running = 0;  // on one instance
};

struct DisaggRun {
  std::vector<RequestRecord> requests;  // in the order given
  std::vector<DisaggRequestPath> paths;
  DisaggPoolRun prefill, decode;
  int64_t transfers = 0;
  int64_t transferred_tokens = 0;
  sim::Duration transfer_busy;  // summed link time
  sim::Time end;                // when the last request finished
};

// Simulates every request to completion. `requests` must be sorted by
// arrival. Errors (InvalidArgument) name the field when a request can never
// run: its prompt exceeds a prefill instance's blocks or
// inference.disaggregated.prefill.max_tokens_per_step, or its whole sequence
// a decode instance's blocks; a pool without instances. CANCELLED once
// `cancel` is set. Always terminates.
absl::StatusOr<DisaggRun> SimulateDisaggregated(const std::vector<ServingRequest>& requests,
                                                const DisaggConfig& config);

// Exposed transfer time of a layer-wise transfer that starts as its prefill
// iteration (`prefill`) ends: max(T / L, T - (L - 1) x prefill / L).
sim::Duration LayerwiseExposed(sim::Duration whole, sim::Duration prefill, int num_layers);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SERVING_DISAGGREGATED_H_
