#include "scenarios/accuracy/serving_row_features.h"

#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace clustersim::scenarios {
namespace {

// Mean tokens per step at acceptance rate a and k drafts: 1 + a + ... + a^k
// (the closed form loses its precision near a = 1).
double TokensPerStep(double a, int k) {
  double sum = 0, term = 1;
  for (int i = 0; i <= k; ++i, term *= a) sum += term;
  return sum;
}

// N of "... (N GPUs)" in a pool cell, or 0.
int PoolGpus(const std::string& cell) {
  static const std::regex kGpus(R"((\d+)\s*GPUs?\b)");
  std::smatch m;
  int n = 0;
  if (!std::regex_search(cell, m, kGpus) || !absl::SimpleAtoi(m[1].str(), &n)) return 0;
  return n;
}

}  // namespace

absl::StatusOr<double> AcceptanceRateFromLength(double length, int k) {
  if (k < 1 || !(length >= 1) || length > k + 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "acceptance length ", length, " must be in [1, k + 1] for k = ", k, " draft tokens"));
  }
  // TokensPerStep rises monotonically in a on [0, 1]: bisect.
  double lo = 0, hi = 1;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (TokensPerStep(mid, k) < length ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

SpeculativeRow MapSpeculativeRow(const sim::CsvTable& t, const sim::CsvTable::Row& row) {
  SpeculativeRow s;
  const std::string& method = t.Get(row, "spec_method");
  const std::string label = absl::StrCat("speculative decoding (", method, ")");
  if (method == "draft-target") {
    s.needs = absl::StrCat(label, ": the draft model, which the table does not name");
    return s;
  }
  if (method == "mtp" || method == "mtp-relaxed") {
    s.method = "mtp";
  } else if (method == "eagle2" || method == "eagle3") {
    s.method = "eagle";
  } else {
    s.needs = absl::StrCat(label, ": a method of mtp, mtp-relaxed, eagle2, eagle3");
    return s;
  }
  const std::string& length_cell = t.Get(row, "acceptance_len");
  if (length_cell.empty()) {
    s.needs = absl::StrCat(label, ": the acceptance length the source does not state");
    return s;
  }
  if (!absl::SimpleAtoi(t.Get(row, "spec_tokens"), &s.num_tokens) || s.num_tokens < 1) {
    s.needs = absl::StrCat(label, ": the number of draft tokens (spec_tokens '",
                           t.Get(row, "spec_tokens"), "')");
    return s;
  }
  absl::StatusOr<double> a = absl::SimpleAtod(length_cell, &s.acceptance_length)
                                 ? AcceptanceRateFromLength(s.acceptance_length, s.num_tokens)
                                 : absl::InvalidArgumentError("not a number");
  if (!a.ok()) {
    s.needs = absl::StrCat(label, ": acceptance_len '", length_cell, "': ", a.status().message());
    return s;
  }
  s.acceptance_rate = *a;
  return s;
}

DisaggregatedRow MapDisaggregatedRow(const sim::CsvTable& t, const sim::CsvTable::Row& row) {
  DisaggregatedRow d;
  const std::string& prefill = t.Get(row, "disagg_prefill");
  const std::string& decode = t.Get(row, "disagg_decode");
  d.prefill_gpus = PoolGpus(prefill);
  d.decode_gpus = PoolGpus(decode);
  if (d.prefill_gpus == 0 || d.decode_gpus == 0) {
    d.needs = absl::StrCat("disaggregated prefill/decode: both pools' GPU counts (prefill '",
                           prefill, "', decode '", decode, "')");
    return d;
  }
  if (!absl::SimpleAtoi(t.Get(row, "tp"), &d.tp) || d.tp < 1) {
    d.needs =
        "disaggregated prefill/decode: the pools' tensor parallelism the source does not state";
  }
  return d;
}

}  // namespace clustersim::scenarios
