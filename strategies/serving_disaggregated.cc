#include "strategies/serving_disaggregated.h"

#include <algorithm>
#include <deque>
#include <string>

#include "absl/strings/str_cat.h"
#include "models/attention_window.h"
#include "sim/check.h"
#include "sim/simulator.h"

namespace clustersim::strategies {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct PrefillInstance {
  std::deque<int64_t> queue;
  int64_t queued_tokens = 0;  // prompts waiting, and the batch in flight
  int64_t free_blocks = 0;
  bool busy = false;
  std::vector<int64_t> batch;  // the iteration in flight
  sim::Duration batch_time;
  sim::Time link_free;  // when its transfer link is next idle
};

struct DecodeInstance {
  std::deque<int64_t> waiting;   // handed over (or swapped out), not yet pulled
  int64_t in_flight = 0;         // pulled, transferring
  std::vector<int64_t> ready;    // transferred, join at the next iteration
  std::vector<int64_t> running;  // in admission order
  int64_t free_blocks = 0;
  bool busy = false;
  int64_t Load() const {
    return static_cast<int64_t>(waiting.size() + ready.size() + running.size()) + in_flight;
  }
  int64_t Slots() const { return static_cast<int64_t>(ready.size() + running.size()) + in_flight; }
};

struct Sequence {
  int64_t generated = 0;       // output tokens so far (the first from the prefill)
  // KV cache units (models/kv_footprint.h; blocks without sliding windows):
  int64_t prefill_blocks = 0;  // held on the prefill instance until transferred
  int64_t blocks = 0;          // on the decode instance
  bool swapped = false;        // its KV is already on the decode side
  sim::Time prefill_end;
  sim::Duration prefill_time;  // its prefill iteration
};

class Deployment {
 public:
  Deployment(const std::vector<ServingRequest>& requests, const DisaggConfig& config,
             sim::Simulator& sim)
      : requests_(requests),
        config_(config),
        sim_(sim),
        seqs_(requests.size()),
        prefill_(config.prefill.instances),
        decode_(config.decode.instances),
        prefill_footprint_(config.prefill.scheduler.KvFootprint()),
        decode_footprint_(config.decode.scheduler.KvFootprint()),
        prefill_watermark_(config.prefill.scheduler.WatermarkBlocks() *
                           prefill_footprint_.UnitsPerBlock()),
        decode_watermark_(config.decode.scheduler.WatermarkBlocks() *
                          decode_footprint_.UnitsPerBlock()) {
    for (PrefillInstance& p : prefill_) {
      p.free_blocks = config.prefill.scheduler.kv_blocks * prefill_footprint_.UnitsPerBlock();
    }
    for (DecodeInstance& d : decode_) {
      d.free_blocks = config.decode.scheduler.kv_blocks * decode_footprint_.UnitsPerBlock();
    }
    run_.requests.resize(requests.size());
    run_.paths.resize(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      run_.requests[i].arrival = requests[i].arrival;
      run_.requests[i].prompt_tokens = requests[i].prompt_tokens;
      run_.requests[i].output_tokens = requests[i].output_tokens;
    }
  }

  void Arrive(int64_t i) {
    int p = 0;
    if (config_.routing == DisaggRouting::kRoundRobin) {
      p = static_cast<int>(next_prefill_++ % prefill_.size());
    } else {
      for (size_t k = 1; k < prefill_.size(); ++k) {
        if (prefill_[k].queued_tokens < prefill_[p].queued_tokens) p = static_cast<int>(k);
      }
    }
    run_.paths[i].prefill_instance = p;
    prefill_[p].queue.push_back(i);
    prefill_[p].queued_tokens += requests_[i].prompt_tokens;
    if (!prefill_[p].busy) StartPrefill(p);
  }

  DisaggRun Finish() { return std::move(run_); }

 private:
  // FCFS prompts within the batch, token and block limits; idle when none.
  void StartPrefill(int p) {
    PrefillInstance& in = prefill_[p];
    const SchedulerConfig& sc = config_.prefill.scheduler;
    in.batch.clear();
    work_.clear();
    int64_t budget = sc.max_tokens_per_step;
    while (!in.queue.empty() && static_cast<int64_t>(in.batch.size()) < sc.max_batch_size) {
      const int64_t i = in.queue.front();
      const int64_t prompt = requests_[i].prompt_tokens;
      const int64_t blocks = prefill_footprint_.Units(prompt, prompt);
      if (prompt > budget || in.free_blocks - blocks < prefill_watermark_) break;
      in.queue.pop_front();
      in.free_blocks -= blocks;
      seqs_[i].prefill_blocks = blocks;
      budget -= prompt;
      in.batch.push_back(i);
      work_.push_back({.new_tokens = prompt, .context = 0, .decode = false, .samples = true});
    }
    if (in.batch.empty()) {
      in.busy = false;
      return;
    }
    in.busy = true;
    const IterationCost c =
        config_.prefill.cost(Summarise(work_, config_.prefill.scheduler.sliding_window));
    in.batch_time = c.time;
    Account(&run_.prefill, c, static_cast<int64_t>(in.batch.size()));
    sim_.ScheduleAfter(c.time, [this, p] { EndPrefill(p); });
  }

  void EndPrefill(int p) {
    PrefillInstance& in = prefill_[p];
    std::vector<int64_t> done;
    done.swap(in.batch);
    for (int64_t i : done) {
      Sequence& s = seqs_[i];
      in.queued_tokens -= requests_[i].prompt_tokens;
      run_.requests[i].first_token = sim_.Now();
      s.generated = 1;
      s.prefill_end = sim_.Now();
      s.prefill_time = in.batch_time;
      if (requests_[i].output_tokens == 1) {
        in.free_blocks += s.prefill_blocks;
        s.prefill_blocks = 0;
        Complete(i);
        continue;
      }
      const int d = RouteDecode();
      run_.paths[i].decode_instance = d;
      decode_[d].waiting.push_back(i);
    }
    // Pull what fits now, then start the next prompts (with the blocks that
    // one-token requests freed).
    for (size_t d = 0; d < decode_.size(); ++d) Pull(static_cast<int>(d));
    StartPrefill(p);
  }

  int RouteDecode() {
    if (config_.routing == DisaggRouting::kRoundRobin) {
      return static_cast<int>(next_decode_++ % decode_.size());
    }
    int d = 0;
    for (size_t k = 1; k < decode_.size(); ++k) {
      if (decode_[k].Load() < decode_[d].Load()) d = static_cast<int>(k);
    }
    return d;
  }

  // Starts the transfers of waiting requests FCFS while blocks and batch
  // slots allow; swapped-out sequences come back without a transfer.
  void Pull(int d) {
    DecodeInstance& in = decode_[d];
    const SchedulerConfig& sc = config_.decode.scheduler;
    bool joined = false;
    while (!in.waiting.empty() && in.Slots() < sc.max_batch_size) {
      const int64_t i = in.waiting.front();
      Sequence& s = seqs_[i];
      // Sliding-window layers take only their window's blocks.
      const int64_t blocks = decode_footprint_.Units(requests_[i].prompt_tokens + s.generated, 1);
      if (in.free_blocks - blocks < decode_watermark_) break;
      in.waiting.pop_front();
      in.free_blocks -= blocks;
      s.blocks = blocks;
      if (s.swapped) {
        s.swapped = false;
        in.ready.push_back(i);
        joined = true;
        continue;
      }
      StartTransfer(i, d);
    }
    if (joined && !in.busy) StartDecode(d);
  }

  void StartTransfer(int64_t i, int d) {
    const Sequence& s = seqs_[i];
    const int p = run_.paths[i].prefill_instance;
    PrefillInstance& src = prefill_[p];
    const sim::Duration whole = config_.transfer(p, d, requests_[i].prompt_tokens);
    const sim::Time start = std::max(sim_.Now(), src.link_free);
    const sim::Duration time = config_.layerwise && start == s.prefill_end
                                   ? LayerwiseExposed(whole, s.prefill_time, config_.num_layers)
                                   : whole;
    src.link_free = start + time;
    ++decode_[d].in_flight;
    run_.paths[i].transfer_start = start;
    run_.paths[i].transfer_end = start + time;
    ++run_.transfers;
    run_.transferred_tokens += requests_[i].prompt_tokens;
    run_.transfer_busy += time;
    sim_.ScheduleAt(start + time, [this, i] { EndTransfer(i); });
  }

  void EndTransfer(int64_t i) {
    Sequence& s = seqs_[i];
    const int p = run_.paths[i].prefill_instance;
    const int d = run_.paths[i].decode_instance;
    prefill_[p].free_blocks += s.prefill_blocks;
    s.prefill_blocks = 0;
    if (!prefill_[p].busy) StartPrefill(p);
    DecodeInstance& in = decode_[d];
    --in.in_flight;
    in.ready.push_back(i);
    if (!in.busy) StartDecode(d);
  }

  // Frees the newest running sequence's blocks and puts it back at the front
  // of the queue (swapped out).
  void SwapOut(int d) {
    DecodeInstance& in = decode_[d];
    const int64_t victim = in.running.back();
    in.running.pop_back();
    in.free_blocks += seqs_[victim].blocks;
    seqs_[victim].blocks = 0;
    seqs_[victim].swapped = true;
    in.waiting.push_front(victim);
    ++run_.requests[victim].preemptions;
    ++run_.decode.preemptions;
  }

  void StartDecode(int d) {
    DecodeInstance& in = decode_[d];
    in.running.insert(in.running.end(), in.ready.begin(), in.ready.end());
    in.ready.clear();
    // Every running sequence writes the KV of its newest token this step.
    for (size_t r = 0; r < in.running.size();) {
      Sequence& s = seqs_[in.running[r]];
      const int64_t needed =
          decode_footprint_.Units(requests_[in.running[r]].prompt_tokens + s.generated, 1);
      if (needed <= s.blocks) {
        // Windowed layers free the blocks their window has left.
        in.free_blocks += s.blocks - needed;
        s.blocks = needed;
        ++r;
        continue;
      }
      if (in.free_blocks < needed - s.blocks) {
        SwapOut(d);  // the newest; if that was this one, r now equals the size
        continue;
      }
      in.free_blocks -= needed - s.blocks;
      s.blocks = needed;
      ++r;
    }
    if (in.running.empty()) {
      in.busy = false;
      return;
    }
    in.busy = true;
    IterationTotals t;
    t.window = config_.decode.scheduler.sliding_window;
    for (int64_t i : in.running) {
      const int64_t kv = requests_[i].prompt_tokens + seqs_[i].generated;
      t.decode_kv_tokens += kv;
      if (t.window > 0) {
        t.window_decode_kv_tokens += models::WindowedKvTokens(kv - 1, 1, t.window);
      }
    }
    t.tokens = t.sampled = t.decode_seqs = static_cast<int64_t>(in.running.size());
    const IterationCost c = config_.decode.cost(t);
    Account(&run_.decode, c, t.decode_seqs);
    run_.decode.peak_running =
        std::max<int64_t>(run_.decode.peak_running, static_cast<int64_t>(in.running.size()));
    sim_.ScheduleAfter(c.time, [this, d] { EndDecode(d); });
  }

  void EndDecode(int d) {
    DecodeInstance& in = decode_[d];
    bool freed = false;
    std::erase_if(in.running, [&](int64_t i) {
      Sequence& s = seqs_[i];
      ++s.generated;
      if (s.generated < requests_[i].output_tokens) return false;
      in.free_blocks += s.blocks;
      s.blocks = 0;
      Complete(i);
      freed = true;
      return true;
    });
    if (freed) Pull(d);
    StartDecode(d);
  }

  void Complete(int64_t i) {
    run_.requests[i].finish = sim_.Now();
    run_.end = std::max(run_.end, sim_.Now());
  }

  static void Account(DisaggPoolRun* pool, const IterationCost& c, int64_t batch) {
    ++pool->iterations;
    pool->busy += c.time;
    pool->flops += c.flops;
    pool->batch_sum += static_cast<double>(batch);
  }

  const std::vector<ServingRequest>& requests_;
  const DisaggConfig& config_;
  sim::Simulator& sim_;
  std::vector<Sequence> seqs_;
  std::vector<PrefillInstance> prefill_;
  std::vector<DecodeInstance> decode_;
  const models::KvFootprint prefill_footprint_, decode_footprint_;
  const int64_t prefill_watermark_, decode_watermark_;  // in the footprints' units
  uint64_t next_prefill_ = 0, next_decode_ = 0;
  std::vector<SequenceWork> work_;
  DisaggRun run_;
};

absl::Status CheckPool(const DisaggPoolSetup& pool, const std::string& field) {
  const SchedulerConfig& c = pool.scheduler;
  if (pool.instances < 1) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".num_instances=", pool.instances,
                                                   " must be >= 1; give the pool an instance"));
  }
  if (c.max_batch_size < 1 || c.max_tokens_per_step < 1 || c.kv_block_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".max_batch_size, max_tokens_per_step and kv_block_size must be >= 1"));
  }
  if (!pool.cost) return absl::InternalError(absl::StrCat(field, ": no cost function"));
  return absl::OkStatus();
}

}  // namespace

sim::Duration LayerwiseExposed(sim::Duration whole, sim::Duration prefill, int num_layers) {
  const int64_t layers = std::max(1, num_layers);
  const sim::Duration last = whole / layers;
  const sim::Duration backlog = whole - prefill / layers * (layers - 1);
  return std::max(last, backlog);
}

absl::StatusOr<DisaggRun> SimulateDisaggregated(const std::vector<ServingRequest>& requests,
                                                const DisaggConfig& config) {
  const std::string prefill_field = "inference.disaggregated.prefill";
  const std::string decode_field = "inference.disaggregated.decode";
  if (auto s = CheckPool(config.prefill, prefill_field); !s.ok()) return s;
  if (auto s = CheckPool(config.decode, decode_field); !s.ok()) return s;
  if (!config.transfer) return absl::InternalError("SimulateDisaggregated: no transfer function");
  const SchedulerConfig& ps = config.prefill.scheduler;
  const SchedulerConfig& ds = config.decode.scheduler;
  for (size_t i = 0; i < requests.size(); ++i) {
    const ServingRequest& r = requests[i];
    if (r.prompt_tokens < 1 || r.output_tokens < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("request ", i, ": prompt and output lengths must be >= 1 token (got ",
                       r.prompt_tokens, " and ", r.output_tokens, ")"));
    }
    if (i > 0 && r.arrival < requests[i - 1].arrival) {
      return absl::InternalError("SimulateDisaggregated: requests must be sorted by arrival");
    }
    if (r.prompt_tokens > ps.max_tokens_per_step) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", i, ": prompt of ", r.prompt_tokens, " tokens exceeds ", prefill_field,
          ".max_tokens_per_step=", ps.max_tokens_per_step, "; raise it"));
    }
    const int64_t prompt_blocks = CeilDiv(r.prompt_tokens, ps.kv_block_size);
    if (prompt_blocks + ps.WatermarkBlocks() > ps.kv_blocks) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", i, ": a prompt of ", r.prompt_tokens, " tokens needs ", prompt_blocks,
          " KV blocks but a prefill instance holds ", ps.kv_blocks, "; raise ", prefill_field,
          ".tensor_parallel_size or shorten inference.workload.prompt_length"));
    }
    const models::KvFootprint decode_footprint = ds.KvFootprint();
    const int64_t whole =
        decode_footprint.Blocks(decode_footprint.Units(r.prompt_tokens + r.output_tokens, 1));
    if (r.output_tokens > 1 && whole + ds.WatermarkBlocks() > ds.kv_blocks) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", i, ": ", r.prompt_tokens, " prompt + ", r.output_tokens,
          " output tokens need ", whole, " KV blocks but a decode instance holds ", ds.kv_blocks,
          "; raise ", decode_field, ".tensor_parallel_size or shorten the lengths"));
    }
  }
  sim::Simulator sim;
  sim.SetCancelFlag(config.cancel);
  Deployment deployment(requests, config, sim);
  for (size_t i = 0; i < requests.size(); ++i) {
    sim.ScheduleAt(requests[i].arrival,
                   [&deployment, i] { deployment.Arrive(static_cast<int64_t>(i)); });
  }
  sim.Run();
  if (sim.Cancelled()) return absl::CancelledError("cancelled");
  return deployment.Finish();
}

}  // namespace clustersim::strategies
