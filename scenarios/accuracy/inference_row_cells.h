// File: scenarios/accuracy/inference_row_cells.h
//
// Readers of a serving table's free-text cells (inference-runs.csv and the
// serving-deployed table): the device, the weight and KV-cache formats and
// the request lengths as the sources write them, mapped to the simulator's
// names. Each reader records what it assumed in `assumptions` and says why
// a cell cannot be mapped in its `reason`.
//
// Example:
//   std::vector<std::string> notes;
//   DeviceMatch d = MatchDevice("H100 SXM 80GB", &notes);  // "h100-sxm5-80gb"
//   DtypeMatch w = MatchDtype("AWQ 4-bit", false, &notes);  // "int4-awq", group 128
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_INFERENCE_ROW_CELLS_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_INFERENCE_ROW_CELLS_H_

#include <string>
#include <string_view>
#include <vector>

namespace clustersim::scenarios {

// Metrics of the memory plan: the workload's lengths and batch do not enter them.
bool IsMemoryMetric(std::string_view metric);

// Single-stream decode metrics: the prompt length barely enters them.
bool IsDecodeMetric(std::string_view metric);

// Lower case of `s`.
std::string Lower(std::string_view s);

// The catalog name for a device text, or a reason it has none.
struct DeviceMatch {
  std::string catalog;
  std::string reason;
};
DeviceMatch MatchDevice(const std::string& text, std::vector<std::string>* assumptions);

// A weight or KV dtype text -> the scenario's name ("int4-gptq", ...).
struct DtypeMatch {
  std::string name;    // "" = not stated (the simulator's default)
  int group_size = 0;  // 4-bit formats only
  std::string reason;  // not supported
};
// `kv`: the text is a KV-cache format (no 4-bit formats; empty means the
// default), else a weight format.
DtypeMatch MatchDtype(const std::string& text, bool kv, std::vector<std::string>* assumptions);

// A length cell: "" (not stated), ">500" (a lower bound), "0", or a count.
// Returns the tokens to simulate (`unstated_decode` for an unstated length of
// a decode-rate metric, 1 for a memory metric), or sets `reason`.
int MatchLength(const std::string& text, const std::string& what, const std::string& metric,
                int unstated_decode, std::vector<std::string>* assumptions, std::string* reason);

// The engine KV accounting a framework cell implies
// (inference.kv_cache_accounting, models/engine_memory.h): "sglang" for
// SGLang, with the cell's --mem-fraction-static when it names one; "vllm-v1"
// for vLLM when the first date (YYYY-MM-DD) in `source` is on or after
// v0.9.0's release, 2025-05-15 (the V1 profile run the accounting reads is
// v0.9-v0.10's; earlier versions profiled differently); else "" (the
// generic budget).
struct KvAccountingMatch {
  std::string accounting;
  double mem_fraction_static = 0;  // 0 = not stated
  std::string reason;              // not supported
};
KvAccountingMatch MatchKvAccounting(const std::string& framework, const std::string& source,
                                    std::vector<std::string>* assumptions);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_INFERENCE_ROW_CELLS_H_
