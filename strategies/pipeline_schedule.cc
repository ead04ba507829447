#include "strategies/pipeline_schedule.h"

#include <algorithm>
#include <deque>

#include "absl/strings/str_cat.h"
#include "sim/check.h"

namespace clustersim::strategies {
namespace {

std::vector<PipelineAction> GPipe(int m) {
  std::vector<PipelineAction> out;
  for (int i = 0; i < m; ++i) out.push_back({Pass::kForward, i, 0});
  for (int i = 0; i < m; ++i) out.push_back({Pass::kBackward, i, 0});
  return out;
}

std::vector<PipelineAction> OneFOneB(int stage, int p, int m) {
  std::vector<PipelineAction> out;
  const int warmup = std::min(p - stage - 1, m);
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back({Pass::kForward, f, 0});
  while (f < m) {
    out.push_back({Pass::kForward, f++, 0});
    out.push_back({Pass::kBackward, b++, 0});
  }
  while (b < m) out.push_back({Pass::kBackward, b++, 0});
  return out;
}

// Megatron-LM's interleaved schedule (schedules.py,
// forward_backward_pipelining_with_interleaving): virtual micro-batch k maps to
// chunk (k / p) % v and micro-batch (k / (p v)) p + k % p; backwards visit the
// chunks in reverse.
std::vector<PipelineAction> Interleaved(int stage, int p, int m, int v, int extra_warmup) {
  const int total = m * v;
  auto chunk_of = [&](int k, bool forward) {
    const int c = (k / p) % v;
    return forward ? c : v - 1 - c;
  };
  auto mb_of = [&](int k) { return (k / (p * v)) * p + k % p; };
  int warmup = (p - stage - 1) * 2 + (v - 1) * p + extra_warmup;
  warmup = std::min(warmup, total);
  std::vector<PipelineAction> out;
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back({Pass::kForward, mb_of(f), chunk_of(f, true)});
  while (f < total) {
    out.push_back({Pass::kForward, mb_of(f), chunk_of(f, true)});
    ++f;
    out.push_back({Pass::kBackward, mb_of(b), chunk_of(b, false)});
    ++b;
  }
  for (; b < total; ++b) out.push_back({Pass::kBackward, mb_of(b), chunk_of(b, false)});
  return out;
}

std::vector<PipelineAction> ZeroBubbleH1(int stage, int p, int m) {
  const int defer = p - stage - 1;
  std::vector<PipelineAction> out;
  std::deque<int> pending_w;
  auto backward = [&](int mb) {
    out.push_back({Pass::kBackwardInput, mb, 0});
    pending_w.push_back(mb);
    if (static_cast<int>(pending_w.size()) > defer) {
      out.push_back({Pass::kBackwardWeight, pending_w.front(), 0});
      pending_w.pop_front();
    }
  };
  const int warmup = std::min(defer, m);
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back({Pass::kForward, f, 0});
  while (f < m) {
    out.push_back({Pass::kForward, f++, 0});
    backward(b++);
  }
  // Cool-down: each deferred W fills the wait for the next input gradient.
  while (b < m) {
    backward(b++);
    if (!pending_w.empty() && b < m) {
      out.push_back({Pass::kBackwardWeight, pending_w.front(), 0});
      pending_w.pop_front();
    }
  }
  for (int mb : pending_w) out.push_back({Pass::kBackwardWeight, mb, 0});
  return out;
}

}  // namespace

std::string_view ScheduleName(Schedule s) {
  switch (s) {
    case Schedule::kGPipe: return "gpipe";
    case Schedule::k1F1B: return "1f1b";
    case Schedule::kInterleaved1F1B: return "interleaved-1f1b";
    case Schedule::kZeroBubbleH1: return "zb-h1";
  }
  return "?";
}

absl::StatusOr<Schedule> ParseSchedule(std::string_view name) {
  for (Schedule s : {Schedule::kGPipe, Schedule::k1F1B, Schedule::kInterleaved1F1B,
                     Schedule::kZeroBubbleH1}) {
    if (ScheduleName(s) == name) return s;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown pipeline schedule \"", std::string(name),
                   "\"; use gpipe, 1f1b, interleaved-1f1b or zb-h1"));
}

std::vector<PipelineAction> ScheduleForStage(Schedule schedule, int stage, int stages,
                                             int microbatches, int chunks, int extra_warmup) {
  SIM_CHECK(stage >= 0 && stage < stages && microbatches >= 1 && chunks >= 1)
      << "bad schedule request: stage " << stage << "/" << stages << ", m=" << microbatches
      << ", v=" << chunks;
  switch (schedule) {
    case Schedule::kGPipe: return GPipe(microbatches);
    case Schedule::k1F1B: return OneFOneB(stage, stages, microbatches);
    case Schedule::kInterleaved1F1B:
      SIM_CHECK(microbatches % stages == 0) << "interleaving needs m % p == 0";
      return Interleaved(stage, stages, microbatches, chunks, extra_warmup);
    case Schedule::kZeroBubbleH1: return ZeroBubbleH1(stage, stages, microbatches);
  }
  return {};
}

int PeakInFlight(const std::vector<PipelineAction>& actions) {
  int live = 0, peak = 0;
  for (const PipelineAction& a : actions) {
    if (a.pass == Pass::kForward) peak = std::max(peak, ++live);
    if (a.pass == Pass::kBackward || a.pass == Pass::kBackwardInput) --live;
  }
  return peak;
}

}  // namespace clustersim::strategies
