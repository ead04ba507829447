// File: strategies/serving_trace_reader.h
//
// Reads the request traces that real deployments publish, for replaying their
// arrival times and lengths through the serving scheduler
// (`inference.workload.kind: "trace"`):
//
// - Azure LLM inference trace (github.com/Azure/AzurePublicDataset,
//   AzureLLMInferenceTrace_{code,conv}.csv; Patel et al., "Splitwise", ISCA
//   2024): a CSV with the header TIMESTAMP,ContextTokens,GeneratedTokens
//   (any column order, other columns ignored). TIMESTAMP is a wall-clock time
//   "YYYY-MM-DD HH:MM:SS[.fraction]", optionally with a UTC offset ("Z",
//   "+00:00"), e.g. 2023-11-16 18:15:46.6805900 (the 2023 files have 100 ns
//   ticks), or a number of seconds.
// - Mooncake trace (github.com/kvcache-ai/Mooncake, mooncake_trace.jsonl;
//   Qin et al., "Mooncake", FAST 2025): one JSON object per line with
//   "timestamp" (milliseconds), "input_length", "output_length" and
//   optionally "hash_ids", one id per 512-token block of the prompt, equal
//   ids meaning equal content (strategies/serving_prefix_cache.h).
//
// Arrivals are relative to the first record (its arrival is zero). Blank
// lines are skipped. Bad input is INVALID_ARGUMENT naming the origin (the
// scenario field and path), the line, the field and a fix: a missing column
// or key, a value that is not a number, a length below 1 token or above 10^7,
// a negative time, a time before the previous record's, a file without
// records; an unreadable path is NOT_FOUND.
//
// Example:
//   absl::StatusOr<RequestTrace> t = ReadRequestTrace("trace.csv", RequestTraceFormat::kAzure,
//                                                     "inference.workload.trace_file");
//   // t->requests[i].arrival, .prompt_tokens, .output_tokens
#ifndef CLUSTERSIM_STRATEGIES_SERVING_TRACE_READER_H_
#define CLUSTERSIM_STRATEGIES_SERVING_TRACE_READER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "strategies/serving_scheduler.h"

namespace clustersim::strategies {

enum class RequestTraceFormat { kAzure, kMooncake };

struct RequestTrace {
  std::vector<ServingRequest> requests;        // in file order, arrivals from zero
  std::vector<std::vector<int64_t>> hash_ids;  // per request (Mooncake); empty lists otherwise
  bool has_hash_ids = false;                   // some record had "hash_ids"
};

// `origin` prefixes every message, e.g. "inference.workload.trace_file=t.csv".
absl::StatusOr<RequestTrace> ParseAzureTrace(std::string_view text, std::string_view origin);
absl::StatusOr<RequestTrace> ParseMooncakeTrace(std::string_view text, std::string_view origin);

// Reads `path` (sim/input_file.h) and parses it; `field` names the scenario
// field that holds the path.
absl::StatusOr<RequestTrace> ReadRequestTrace(const std::string& path, RequestTraceFormat format,
                                              std::string_view field);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SERVING_TRACE_READER_H_
