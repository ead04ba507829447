// File: scenarios/accuracy/serving_deployed_table.cc
//
// The serving-deployed table's well-formedness check (serving_modes.h):
// required columns, unique ids, a source per row, numbers where numbers
// belong, known modes and features.
#include <cmath>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "scenarios/accuracy/serving_modes.h"
#include "scenarios/accuracy/serving_modes_internal.h"

namespace clustersim::scenarios {
namespace {

using serving_modes_internal::Count;
using serving_modes_internal::Features;
using serving_modes_internal::KnownFeatures;
using serving_modes_internal::KnownModes;

// Setting columns that hold a count or a rate (empty = not stated).
constexpr std::string_view kNumericColumns[] = {"concurrency",
                                                "request_rate",
                                                "ttft_limit_ms",
                                                "tpot_limit_ms",
                                                "spec_tokens",
                                                "acceptance_len",
                                                "ep",
                                                "pp",
                                                "num_nodes",
                                                "max_batch_size",
                                                "max_num_tokens"};
constexpr std::string_view kRequiredColumns[] = {"id",
                                                 "source",
                                                 "model",
                                                 "device",
                                                 "num_devices",
                                                 "tp",
                                                 "weight_dtype",
                                                 "kv_dtype",
                                                 "framework",
                                                 "input_len",
                                                 "output_len",
                                                 "batch_or_concurrency",
                                                 "metric",
                                                 "value",
                                                 "unit",
                                                 "notes",
                                                 "mode",
                                                 "feature",
                                                 "concurrency",
                                                 "request_rate",
                                                 "ttft_limit_ms",
                                                 "tpot_limit_ms",
                                                 "spec_method",
                                                 "spec_tokens",
                                                 "acceptance_len",
                                                 "disagg_prefill",
                                                 "disagg_decode",
                                                 "ep",
                                                 "pp",
                                                 "attention_dp",
                                                 "num_nodes",
                                                 "dataset"};

}  // namespace

absl::Status CheckServingDeployedTable(const sim::CsvTable& t, std::string_view origin) {
  for (std::string_view c : kRequiredColumns) {
    if (t.Column(c) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(origin), ": column '", std::string(c),
                       "' is missing (see tests/validation/serving-deployed/README.md)"));
    }
  }
  std::set<std::string> ids;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const sim::CsvTable::Row& row = t.rows[i];
    const std::string& id = t.Get(row, "id");
    auto bad = [&](std::string_view column, std::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(std::string(origin), " line ", t.row_lines[i],
                                                     " (", id, "): ", std::string(column), " ",
                                                     std::string(why)));
    };
    if (id.empty()) return bad("id", "is empty");
    if (!ids.insert(id).second) return bad("id", "repeats an earlier row");
    if (t.Get(row, "source").empty()) return bad("source", "is empty; every row names its source");
    double value = 0;
    if (!absl::SimpleAtod(t.Get(row, "value"), &value) || !std::isfinite(value)) {
      return bad("value", absl::StrCat("'", t.Get(row, "value"), "' is not a number"));
    }
    if (t.Get(row, "metric").empty() || t.Get(row, "unit").empty()) {
      return bad("metric/unit", "is empty");
    }
    if (!IsKnownServingMode(t.Get(row, "mode"))) {
      return bad("mode", absl::StrCat("'", t.Get(row, "mode"), "' is not one of ", KnownModes()));
    }
    const std::set<std::string> features = Features(t, row);
    if (features.empty()) return bad("feature", "is empty; list the features the row needs");
    for (const std::string& f : features) {
      if (!IsKnownServingFeature(f)) {
        return bad("feature", absl::StrCat("'", f, "' is not one of ", KnownFeatures()));
      }
    }
    for (std::string_view c : kNumericColumns) {
      double x = 0;
      const std::string& cell = t.Get(row, c);
      if (!cell.empty() && (!absl::SimpleAtod(cell, &x) || !(x >= 0))) {
        return bad(c, absl::StrCat("'", cell, "' is not a number >= 0"));
      }
    }
    const std::string& dp = t.Get(row, "attention_dp");
    if (!dp.empty() && dp != "true" && dp != "false") {
      return bad("attention_dp", absl::StrCat("'", dp, "' is not true, false or empty"));
    }
    if (t.Get(row, "mode") == "fixed-batch" && Count(t, row, "batch_or_concurrency") == 0) {
      return bad("batch_or_concurrency", "must give the batch of a fixed-batch row");
    }
  }
  return absl::OkStatus();
}

}  // namespace clustersim::scenarios
