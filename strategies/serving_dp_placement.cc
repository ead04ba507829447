#include "strategies/serving_dp_placement.h"

#include <algorithm>

namespace clustersim::strategies {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

DpPromptPlacement::DpPromptPlacement(int ranks, int64_t max_tokens_per_step)
    : ranks_(std::max(1, ranks)), per_rank_(max_tokens_per_step / ranks_) {
  Reset();
}

void DpPromptPlacement::Reset() {
  work_rank_.clear();
  rank_load_.assign(ranks_, 0);
}

void DpPromptPlacement::SpreadDecodes(int64_t tokens) {
  for (int64_t& load : rank_load_) load = CeilDiv(tokens, ranks_);
}

int DpPromptPlacement::Place(int64_t chunk) const {
  const auto least = std::min_element(rank_load_.begin(), rank_load_.end());
  if (*least + chunk > per_rank_) return -1;
  return static_cast<int>(least - rank_load_.begin());
}

void DpPromptPlacement::Assign(size_t index, int rank, int64_t chunk) {
  rank_load_[rank] += chunk;
  work_rank_.resize(std::max(work_rank_.size(), index + 1), -1);
  work_rank_[index] = rank;
}

void DpPromptPlacement::BusiestRank(const std::vector<SequenceWork>& work,
                                    IterationTotals* t) const {
  const int busiest =
      static_cast<int>(std::max_element(rank_load_.begin(), rank_load_.end()) - rank_load_.begin());
  std::vector<SequenceWork> prompts;
  for (size_t w = 0; w < work.size(); ++w) {
    if (!work[w].decode && w < work_rank_.size() && work_rank_[w] == busiest) {
      prompts.push_back(work[w]);
    }
  }
  const IterationTotals p = Summarise(prompts, t->window);
  t->rank_tokens = rank_load_[busiest];
  t->rank_prefill_tokens = p.prefill_tokens;
  t->rank_prefill_kv_tokens = p.prefill_kv_tokens;
  t->rank_prefill_pairs = p.prefill_pairs;
  t->rank_window_prefill_kv_tokens = p.window_prefill_kv_tokens;
  t->rank_window_prefill_pairs = p.window_prefill_pairs;
}

bool AdpBalancer::AdmitsNow(int64_t startable, int64_t decodes) {
  const bool every_rank_prompt = startable >= ranks_;
  const bool every_rank_decodes = decodes >= ranks_;
  if (every_rank_prompt) {
    waiting_iters_ = 0;
    if (!every_rank_decodes) return true;
    if (batching_iters_ < batching_wait_iters_) {
      ++batching_iters_;
      return false;
    }
    batching_iters_ = 0;
    return true;
  }
  ++waiting_iters_;
  if (waiting_iters_ >= timeout_iters_ || !every_rank_decodes) {
    waiting_iters_ = 0;
    return true;
  }
  return false;
}

void PadToCudaGraph(const std::vector<int>& batch_sizes, int ranks, IterationTotals* t) {
  if (batch_sizes.empty()) return;
  if (t->prefill_tokens > 0) {
    t->eager = true;
    return;
  }
  if (t->decode_queries != t->decode_seqs) return;
  const int64_t r = std::max(1, ranks);
  const int64_t per_rank = CeilDiv(t->decode_seqs, r);
  for (int size : batch_sizes) {
    if (size >= per_rank) {
      t->tokens = std::max(t->tokens, size * r);
      return;
    }
  }
  t->eager = true;
}

}  // namespace clustersim::strategies
