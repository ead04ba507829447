#include "strategies/serving_scheduler.h"

#include <algorithm>
#include <deque>
#include <optional>

#include "absl/strings/str_cat.h"
#include "sim/check.h"
#include "sim/simulator.h"
#include "strategies/serving_closed_loop.h"
#include "strategies/serving_dp_placement.h"
#include "strategies/serving_speculative.h"

namespace clustersim::strategies {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Sequence {
  int64_t target = 0;     // tokens to prefill: prompt + tokens produced before (re)admission
  int64_t prefilled = 0;  // of target
  int64_t generated = 0;  // output tokens produced
  int64_t blocks = 0;  // KV cache units (models/kv_footprint.h; blocks without windows)
  int64_t decode_steps = 0;  // numbers the speculative acceptance draws
};

// One replica: the queue, the running batch and the paged KV cache.
class Server {
 public:
  Server(const std::vector<ServingRequest>& requests, const SchedulerConfig& config,
         const IterationCostFn& cost, bool keep, sim::Simulator& sim)
      : requests_(requests),
        config_(config),
        footprint_(config.KvFootprint()),
        cost_(cost),
        keep_(keep),
        sim_(sim),
        seqs_(requests.size()),
        free_blocks_(config.kv_blocks * footprint_.UnitsPerBlock()),
        watermark_blocks_(config.WatermarkBlocks() * footprint_.UnitsPerBlock()),
        placement_(config.attention_dp_ranks, config.max_tokens_per_step),
        balancer_(config.attention_dp_ranks, config.adp_batching_wait_iters,
                  config.adp_timeout_iters) {
    run_.requests.resize(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      run_.requests[i].arrival = requests[i].arrival;
      run_.requests[i].prompt_tokens = requests[i].prompt_tokens;
      run_.requests[i].output_tokens = requests[i].output_tokens;
      run_.requests[i].cached_tokens = requests[i].cached_tokens;
    }
    if (config.closed_loop_clients > 0) {
      clients_.emplace(config.closed_loop_clients, static_cast<int64_t>(requests.size()),
                       config.think_time);
    }
  }

  // Requests that arrive at their own times: all of them, or in a closed loop
  // the clients' first ones.
  int64_t OpenArrivals() const {
    return clients_ ? clients_->initial() : static_cast<int64_t>(requests_.size());
  }

  // Request i reaches the engine; its client sent it frontend_delay earlier.
  void Arrive(int64_t i) {
    run_.requests[i].arrival = sim_.Now() - config_.frontend_delay;
    waiting_.push_back(i);
    if (!busy_) StartIteration();
  }

  ServingRun Finish() {
    if (run_.num_iterations > 0) {
      run_.mean_batch = batch_sum_ / static_cast<double>(run_.num_iterations);
    }
    return std::move(run_);
  }

 private:
  bool Prefilling(int64_t i) const { return seqs_[i].prefilled < seqs_[i].target; }

  // Frees i's blocks and puts it back at the front of the queue.
  void Preempt(int64_t i) {
    Sequence& s = seqs_[i];
    free_blocks_ += s.blocks;
    s.blocks = 0;
    s.prefilled = 0;
    s.target = requests_[i].prompt_tokens + s.generated;
    running_.erase(std::find(running_.begin(), running_.end(), i));
    waiting_.push_front(i);
    ++run_.requests[i].preemptions;
    ++run_.preemptions;
  }

  int64_t budget_used(int64_t budget) const { return config_.max_tokens_per_step - budget; }

  // One decode step for every running sequence past its prefill; preempts the
  // newest sequences while blocks run out.
  void ScheduleDecodes(int64_t* budget) {
    for (size_t r = 0; r < running_.size() && *budget > 0;) {
      const int64_t i = running_[r];
      Sequence& s = seqs_[i];
      if (Prefilling(i)) {
        ++r;
        continue;
      }
      const int64_t context = requests_[i].prompt_tokens + s.generated - 1;
      // The step's own token plus any drafted ones it verifies.
      const int64_t queries = std::min({int64_t{1} + config_.speculative_tokens,
                                        requests_[i].output_tokens - s.generated, *budget});
      const int64_t needed = footprint_.Units(context + queries, queries);
      if (needed - s.blocks > free_blocks_) {
        const int64_t victim = running_.back();
        Preempt(victim);
        if (victim == i) break;  // itself: every later one is gone too
        continue;                // retry i
      }
      // Windowed layers free the blocks their window has left, unless the
      // whole request's blocks are reserved.
      if (needed > s.blocks ||
          (footprint_.windowed() && !config_.reserve_whole_request && needed < s.blocks)) {
        free_blocks_ -= needed - s.blocks;
        s.blocks = needed;
      }
      work_.push_back({.new_tokens = queries, .context = context, .decode = true, .samples = true});
      owners_.push_back(i);
      *budget -= queries;
      ++r;
    }
  }

  // Prompt chunks of running partial prefills (chunked prefill only).
  void ScheduleRunningPrefills(int64_t* budget) {
    for (int64_t i : running_) {
      if (*budget == 0) return;
      if (!Prefilling(i) || std::find(owners_.begin(), owners_.end(), i) != owners_.end()) continue;
      Sequence& s = seqs_[i];
      const int64_t chunk = std::min(s.target - s.prefilled, *budget);
      work_.push_back({.new_tokens = chunk,
                       .context = s.prefilled,
                       .decode = false,
                       .samples = s.prefilled + chunk == s.target});
      owners_.push_back(i);
      *budget -= chunk;
    }
  }

  bool DataParallel() const { return config_.attention_dp_ranks > 1 && !config_.chunked_prefill; }

  // TensorRT-LLM's attention-DP balancing (SchedulerConfig::adp_balance):
  // whether this iteration may start new prompts.
  bool AdpAdmitsNow(int64_t decodes) {
    const int64_t slots = config_.max_batch_size - static_cast<int64_t>(running_.size());
    const int64_t startable =
        std::max<int64_t>(0, std::min(static_cast<int64_t>(waiting_.size()), slots));
    return balancer_.AdmitsNow(startable, decodes);
  }

  // Admits queued requests FCFS while sequences, tokens and blocks allow.
  void Admit(int64_t* budget) {
    while (!waiting_.empty() && *budget > 0 &&
           static_cast<int64_t>(running_.size()) < config_.max_batch_size) {
      const int64_t i = waiting_.front();
      Sequence& s = seqs_[i];
      if (s.target == 0) s.target = requests_[i].prompt_tokens + s.generated;
      const int64_t reserved = config_.reserve_whole_request
                                   ? requests_[i].prompt_tokens + requests_[i].output_tokens
                                   : s.target;
      // The prompt's blocks, of every layer while it is computed.
      const int64_t blocks = footprint_.Units(reserved, std::min(reserved, s.target));
      if (free_blocks_ - blocks < watermark_blocks_) return;
      const int64_t uncached = s.target - requests_[i].cached_tokens;
      const int64_t chunk = config_.chunked_prefill ? std::min(uncached, *budget) : uncached;
      // A recomputed sequence may outgrow the budget; alone it still runs.
      if (chunk > *budget && !work_.empty()) return;
      int rank = 0;
      if (DataParallel()) {
        rank = placement_.Place(chunk);
        if (rank < 0 && !work_.empty()) return;
        rank = std::max(rank, 0);
      }
      waiting_.pop_front();
      s.prefilled = requests_[i].cached_tokens;
      s.blocks = blocks;
      free_blocks_ -= blocks;
      running_.push_back(i);
      work_.push_back({.new_tokens = chunk,
                       .context = s.prefilled,
                       .decode = false,
                       .samples = chunk == uncached});
      owners_.push_back(i);
      if (DataParallel()) placement_.Assign(work_.size() - 1, rank, chunk);
      *budget -= std::min(chunk, *budget);
    }
  }

  void StartIteration() {
    work_.clear();
    owners_.clear();
    placement_.Reset();
    int64_t budget = config_.max_tokens_per_step;
    if (config_.chunked_prefill) {
      ScheduleDecodes(&budget);
      ScheduleRunningPrefills(&budget);
      Admit(&budget);
    } else if (config_.mixed_whole_prompts) {
      ScheduleDecodes(&budget);
      const int64_t decodes = static_cast<int64_t>(work_.size());
      if (DataParallel()) placement_.SpreadDecodes(budget_used(budget));
      if (!DataParallel() || !config_.adp_balance || AdpAdmitsNow(decodes)) Admit(&budget);
    } else {
      Admit(&budget);
      if (work_.empty()) ScheduleDecodes(&budget);
    }
    if (work_.empty()) {
      // Nothing to run: idle until the next arrival. A queued request with
      // nothing running can always be admitted (checked up front), so an
      // empty iteration means an empty server.
      SIM_CHECK(waiting_.empty() || !running_.empty())
          << "serving scheduler: request " << waiting_.front() << " can never be admitted";
      busy_ = false;
      return;
    }
    busy_ = true;
    IterationTotals totals = Summarise(work_, config_.sliding_window);
    // Under data-parallel attention, the busiest rank's share of an iteration
    // with prompts; decode steps alone are spread evenly.
    if (DataParallel() && totals.prefill_tokens > 0) placement_.BusiestRank(work_, &totals);
    PadToCudaGraph(config_.cuda_graph_batch_sizes, config_.attention_dp_ranks, &totals);
    const IterationCost c = cost_(totals);
    ++run_.num_iterations;
    run_.busy += c.time;
    run_.communication += c.communication;
    run_.host += c.host;
    run_.flops += c.flops;
    batch_sum_ += static_cast<double>(work_.size());
    run_.peak_running = std::max<int64_t>(run_.peak_running, running_.size());
    if (keep_) {
      run_.iterations.push_back({.start = sim_.Now(),
                                 .end = sim_.Now() + c.time,
                                 .prefill_tokens = totals.prefill_tokens,
                                 .decode_seqs = totals.decode_seqs,
                                 .batch = static_cast<int64_t>(work_.size()),
                                 .running = static_cast<int64_t>(running_.size()),
                                 .waiting = static_cast<int64_t>(waiting_.size()),
                                 .kv_blocks_used = footprint_.Blocks(
                                     config_.kv_blocks * footprint_.UnitsPerBlock() -
                                     free_blocks_)});
    }
    sim_.ScheduleAfter(c.time, [this] { EndIteration(); });
  }

  void EndIteration() {
    for (size_t w = 0; w < work_.size(); ++w) {
      const int64_t i = owners_[w];
      Sequence& s = seqs_[i];
      if (!work_[w].decode) s.prefilled += work_[w].new_tokens;
      if (!work_[w].samples) continue;
      if (s.generated == 0) run_.requests[i].first_token = sim_.Now();
      int64_t tokens = 1;
      if (work_[w].decode) {
        if (work_[w].new_tokens > 1) {
          tokens = DrawAcceptedTokens(config_.acceptance_rate, work_[w].new_tokens - 1,
                                      config_.speculative_seed, i, s.decode_steps);
        }
        ++s.decode_steps;
        ++run_.decode_steps;
        run_.decode_tokens += tokens;
      }
      s.generated += tokens;
      if (s.generated == requests_[i].output_tokens) {
        run_.requests[i].finish = sim_.Now();
        run_.end = sim_.Now();
        free_blocks_ += s.blocks;
        s.blocks = 0;
        running_.erase(std::find(running_.begin(), running_.end(), i));
        if (clients_) SendNext();
      }
    }
    StartIteration();
  }

  // A closed-loop client sends its next request; with no think time it joins
  // the queue before the next iteration is scheduled.
  void SendNext() {
    const std::optional<ClosedLoopClients::Send> next = clients_->OnFinish(sim_.Now());
    if (!next) return;
    const int64_t i = next->request;
    const sim::Time reaches = next->at + config_.frontend_delay;
    if (reaches == sim_.Now()) {
      Arrive(i);
    } else {
      sim_.ScheduleAt(reaches, [this, i] { Arrive(i); });
    }
  }

  const std::vector<ServingRequest>& requests_;
  const SchedulerConfig& config_;
  const models::KvFootprint footprint_;
  const IterationCostFn& cost_;
  const bool keep_;
  sim::Simulator& sim_;
  std::vector<Sequence> seqs_;
  std::deque<int64_t> waiting_;
  std::vector<int64_t> running_;  // in admission order
  int64_t free_blocks_;  // in the footprint's units, as is the watermark
  const int64_t watermark_blocks_;
  bool busy_ = false;
  std::vector<SequenceWork> work_;  // the iteration in flight
  std::vector<int64_t> owners_;     // its sequences
  DpPromptPlacement placement_;  // data-parallel attention: the prompts' ranks
  AdpBalancer balancer_;
  double batch_sum_ = 0;
  std::optional<ClosedLoopClients> clients_;
  ServingRun run_;
};

}  // namespace

absl::StatusOr<ServingRun> SimulateServing(const std::vector<ServingRequest>& requests,
                                           const SchedulerConfig& config,
                                           const IterationCostFn& cost, bool keep_iterations) {
  if (config.max_batch_size < 1 || config.max_tokens_per_step < 1 || config.kv_block_size < 1) {
    return absl::InvalidArgumentError(
        "inference.max_batch_size, max_tokens_per_step and kv_block_size must be >= 1");
  }
  if (config.closed_loop_clients < 0 || config.think_time < sim::Duration::Zero()) {
    return absl::InvalidArgumentError(
        "inference.workload.concurrency and think_time_ms must be >= 0");
  }
  if (config.frontend_delay < sim::Duration::Zero()) {
    return absl::InvalidArgumentError("inference.frontend.request_overhead_ms must be >= 0");
  }
  const int64_t watermark = config.WatermarkBlocks();
  for (size_t i = 0; i < requests.size(); ++i) {
    const ServingRequest& r = requests[i];
    if (r.prompt_tokens < 1 || r.output_tokens < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("request ", i, ": prompt and output lengths must be >= 1 token (got ",
                       r.prompt_tokens, " and ", r.output_tokens, ")"));
    }
    if (r.cached_tokens < 0 || r.cached_tokens >= r.prompt_tokens) {
      return absl::InternalError(absl::StrCat("SimulateServing: request ", i, " caches ",
                                              r.cached_tokens, " of ", r.prompt_tokens,
                                              " prompt tokens; at least one must be computed"));
    }
    if (i > 0 && r.arrival < requests[i - 1].arrival) {
      return absl::InternalError("SimulateServing: requests must be sorted by arrival");
    }
    const int64_t whole = CeilDiv(r.prompt_tokens + r.output_tokens, config.kv_block_size);
    // Admission needs the blocks of the prompt and all but the last token
    // (all of them when the whole request is reserved) above the watermark.
    const int64_t prompt =
        config.reserve_whole_request
            ? whole
            : CeilDiv(r.prompt_tokens + r.output_tokens - 1, config.kv_block_size);
    if (whole > config.kv_blocks || prompt + watermark > config.kv_blocks) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", i, ": ", r.prompt_tokens, " prompt + ", r.output_tokens,
          " output tokens need ", whole, " KV blocks of ", config.kv_block_size,
          " tokens but the cache holds ", config.kv_blocks,
          "; shorten inference.workload.prompt_length / output_length, raise "
          "inference.tensor_parallel_size or quantise (inference.weight_dtype, kv_cache_dtype)"));
    }
    if (!config.chunked_prefill && r.prompt_tokens > config.max_tokens_per_step) {
      return absl::InvalidArgumentError(
          absl::StrCat("request ", i, ": prompt of ", r.prompt_tokens,
                       " tokens exceeds inference.max_tokens_per_step=", config.max_tokens_per_step,
                       "; raise it or set inference.chunked_prefill"));
    }
  }
  sim::Simulator sim;
  sim.SetCancelFlag(config.cancel);
  Server server(requests, config, cost, keep_iterations, sim);
  for (int64_t i = 0; i < server.OpenArrivals(); ++i) {
    sim.ScheduleAt(requests[i].arrival + config.frontend_delay, [&server, i] { server.Arrive(i); });
  }
  sim.Run();
  if (sim.Cancelled()) return absl::CancelledError("cancelled");
  return server.Finish();
}

}  // namespace clustersim::strategies
