#include "scenarios/accuracy/trtllm_bench_settings.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_format.h"

namespace clustersim::scenarios {
namespace {

// n rounded up to a multiple of `step`.
int RoundUp(double n, int step) { return step * static_cast<int>(std::ceil(n / step)); }

}  // namespace

absl::StatusOr<TrtllmBenchLimits> TrtllmBenchSettings(const TrtllmBenchModel& m) {
  if (m.layers < 1 || m.kv_heads < 1 || m.head_size < 1 || m.tp < 1 || m.pp < 1 ||
      m.input_len < 1 || m.output_len < 1 || !(m.device_memory_gib > 0) || !(m.params > 0)) {
    return absl::InvalidArgumentError(
        "trtllm-bench settings need positive layers, KV heads, head size, tp, pp, lengths, "
        "parameters and device memory");
  }
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const double bytes_per_token =
      2.0 * m.layers * std::max(m.tp, m.kv_heads) * m.head_size * m.kv_bytes / kGiB;
  const double engine = m.params * m.weight_bytes / kGiB;
  const double total = m.device_memory_gib * m.tp * m.pp;
  if (total < engine) {
    return absl::InvalidArgumentError(
        absl::StrFormat("trtllm-bench: the weights need %.2f GiB but %d GPU(s) hold %.2f GiB",
                        engine, m.tp * m.pp, total));
  }
  TrtllmBenchLimits out;
  out.kv_cache_max_requests =
      (total - engine) * m.kv_fraction / (bytes_per_token * (m.input_len + m.output_len));
  if (out.kv_cache_max_requests < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "trtllm-bench: the KV cache holds %.2f requests of %d tokens (fewer than one)",
        out.kv_cache_max_requests, m.input_len + m.output_len));
  }
  const double raw_bs = std::min(out.kv_cache_max_requests, 4096.0) / m.pp;
  const double raw_tokens =
      std::min(raw_bs * (1.0 + static_cast<double>(m.input_len) / m.output_len), 32768.0);
  out.max_batch_size = raw_bs < 256    ? std::max(64, RoundUp(raw_bs, 32))
                       : raw_bs < 1024 ? RoundUp(raw_bs, 128)
                                       : RoundUp(raw_bs, 256);
  out.max_num_tokens = raw_tokens < 4096   ? std::max(2048, RoundUp(raw_tokens, 256))
                       : raw_tokens < 8192 ? RoundUp(raw_tokens, 512)
                                           : RoundUp(raw_tokens, 1024);
  return out;
}

int TrtllmBenchUnchunkedMaxTokens(const TrtllmBenchLimits& limits, int max_input_len) {
  return std::max(limits.max_num_tokens, max_input_len + limits.max_batch_size);
}

std::vector<int> CapturedCudaGraphBatchSizes(const std::vector<int>& sizes, int max_batch_size,
                                             int max_num_tokens, bool padding) {
  // The largest decode-only batch: one token per sequence.
  const int bound = std::min(max_batch_size, max_num_tokens);
  std::vector<int> kept;
  for (int size : sizes) {
    if (size <= bound) {
      kept.push_back(size);
      continue;
    }
    // A padded batch may stop at the bound instead of the larger size.
    if (padding && (kept.empty() || kept.back() != bound)) kept.push_back(bound);
    break;
  }
  return kept;
}

}  // namespace clustersim::scenarios
