// File: scenarios/accuracy/serving_row_features.h
//
// The speculative-decoding and disaggregation columns of a serving
// validation row (tests/validation/serving-deployed/runs.csv) read into the
// simulator's settings, or the precise reason they cannot be.
//
// Speculative decoding (`spec_method`, `spec_tokens`, `acceptance_len`):
// the row's mean tokens per target step L (accepted drafts plus the target's
// own token, as EAGLE and MTP papers report "acceptance length") and its k
// draft tokens give the per-token acceptance rate alpha by solving
//   L = (1 - alpha^(k+1)) / (1 - alpha)     (Leviathan et al. 2023, eq. 1)
// for alpha in [0, 1] (L rises from 1 at alpha 0 to k + 1 at alpha 1). No
// rate is ever assumed: a row without its acceptance length is refused.
// Methods: mtp, mtp-relaxed -> "mtp"; eagle2, eagle3 -> "eagle" (a chain;
// EAGLE's trees are not modelled); draft-target -> "draft", which needs a
// draft model the table has no column for.
//
// Disaggregation (`disagg_prefill`, `disagg_decode`): each pool's GPU count
// read from "(N GPUs)" in its cell; with the row's tp for both pools (the
// sources state no per-pool split otherwise).
//
// Example:
//   absl::StatusOr<double> a = AcceptanceRateFromLength(2.29, 3);  // ~0.634
//   SpeculativeRow s = MapSpeculativeRow(table, row);
//   if (!s.needs.empty()) std::cout << "needs " << s.needs;
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_SERVING_ROW_FEATURES_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_SERVING_ROW_FEATURES_H_

#include <string>

#include "absl/status/statusor.h"
#include "sim/csv_table.h"

namespace clustersim::scenarios {

// alpha for mean tokens per step `length` at k draft tokens; InvalidArgument
// when k < 1 or length is outside [1, k + 1].
absl::StatusOr<double> AcceptanceRateFromLength(double length, int k);

struct SpeculativeRow {
  std::string needs;   // non-empty: why the row cannot run
  std::string method;  // "mtp" | "eagle"
  int num_tokens = 0;
  double acceptance_rate = 0;
  double acceptance_length = 0;
};
SpeculativeRow MapSpeculativeRow(const sim::CsvTable& t, const sim::CsvTable::Row& row);

struct DisaggregatedRow {
  std::string needs;  // non-empty: why the row cannot run
  int prefill_gpus = 0;
  int decode_gpus = 0;
  int tp = 0;  // both pools
};
DisaggregatedRow MapDisaggregatedRow(const sim::CsvTable& t, const sim::CsvTable::Row& row);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_SERVING_ROW_FEATURES_H_
