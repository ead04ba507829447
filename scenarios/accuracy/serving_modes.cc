#include "scenarios/accuracy/serving_modes.h"

#include <cmath>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace clustersim::scenarios {
namespace {

constexpr std::string_view kModes[] = {"fixed-batch", "offline", "server",
                                       "concurrency", "poisson", "trace"};
constexpr std::string_view kFeatures[] = {
    "fixed-batch", "offline", "server", "concurrency", "poisson", "trace",       "spec",
    "disagg",      "moe",     "mla",    "fp4",         "fp8-kv",  "prefix-cache"};
// Setting columns that hold a count or a rate (empty = not stated).
constexpr std::string_view kNumericColumns[] = {"concurrency",
                                                "request_rate",
                                                "ttft_limit_ms",
                                                "tpot_limit_ms",
                                                "spec_tokens",
                                                "acceptance_len",
                                                "ep",
                                                "pp",
                                                "num_nodes"};
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

template <size_t N>
bool Contains(const std::string_view (&list)[N], std::string_view s) {
  for (std::string_view x : list) {
    if (x == s) return true;
  }
  return false;
}

std::set<std::string> Features(const sim::CsvTable& t, const sim::CsvTable::Row& row) {
  std::set<std::string> out;
  for (absl::string_view f : absl::StrSplit(t.Get(row, "feature"), ';', absl::SkipEmpty())) {
    out.insert(std::string(f));
  }
  return out;
}

// "a, b, c" of a list of names.
template <size_t N>
std::string Join(const std::string_view (&list)[N]) {
  std::string out;
  for (std::string_view x : list) absl::StrAppend(&out, out.empty() ? "" : ", ", std::string(x));
  return out;
}

// A whole count > 0 in `column`, or 0 when empty or not a count.
int Count(const sim::CsvTable& t, const sim::CsvTable::Row& row, std::string_view column) {
  int n = 0;
  return absl::SimpleAtoi(t.Get(row, column), &n) && n > 0 ? n : 0;
}

}  // namespace

bool IsKnownServingMode(std::string_view mode) { return Contains(kModes, mode); }
bool IsKnownServingFeature(std::string_view feature) { return Contains(kFeatures, feature); }

bool HasServingModeColumns(const sim::CsvTable& table) { return table.Column("mode") >= 0; }

ServingModeMapping MapServingMode(const sim::CsvTable& t, const sim::CsvTable::Row& row) {
  ServingModeMapping m;
  const std::string& mode = t.Get(row, "mode");
  const std::set<std::string> features = Features(t, row);
  std::vector<std::string> needs;
  // The benchmark mode first: what drives the requests.
  const int concurrency = Count(t, row, "concurrency");
  if (mode == "offline") {
    needs.push_back("offline max-throughput mode (all requests queued at once)");
  } else if (mode == "server") {
    needs.push_back("MLPerf Server mode (Poisson arrivals under p99 TTFT/TPOT limits)");
  } else if (mode == "trace") {
    needs.push_back("trace replay");
  } else if (mode == "concurrency" && concurrency != 1) {
    needs.push_back(absl::StrCat("closed-loop clients at fixed concurrency (",
                                 concurrency > 0 ? absl::StrCat(concurrency) : "not stated", ")"));
  } else if (!IsKnownServingMode(mode)) {
    m.not_supported = absl::StrCat("mode '", mode, "' is not one of ", Join(kModes));
    return m;
  }
  // Then the features the serving simulator does not have yet.
  if (features.count("trace")) {
    needs.push_back(absl::StrCat("dataset-driven request lengths (", t.Get(row, "dataset"), ")"));
  }
  if (features.count("spec")) {
    needs.push_back(absl::StrCat("speculative decoding (", t.Get(row, "spec_method"), ")"));
  }
  if (features.count("disagg")) needs.push_back("disaggregated prefill/decode");
  if (features.count("mla")) needs.push_back("multi-head latent attention (MLA)");
  if (features.count("fp4")) needs.push_back("FP4 weights");
  if (features.count("prefix-cache")) needs.push_back("prefix caching");
  if (const int ep = Count(t, row, "ep"); ep > 1) {
    needs.push_back(absl::StrCat("expert parallelism (ep ", ep, ")"));
  }
  if (t.Get(row, "attention_dp") == "true") needs.push_back("data-parallel attention");
  if (const int pp = Count(t, row, "pp"); pp > 1) {
    needs.push_back(absl::StrCat("pipeline-parallel serving (pp ", pp, ")"));
  }
  if (!needs.empty()) {
    m.not_supported = absl::StrCat("needs ", absl::StrJoin(needs, "; "));
    return m;
  }
  if (mode == "poisson") {
    double rate = 0;
    const int requests = Count(t, row, "batch_or_concurrency");
    if (!absl::SimpleAtod(t.Get(row, "request_rate"), &rate) || !(rate > 0) || requests == 0) {
      m.not_supported =
          absl::StrCat("poisson row needs request_rate > 0 (is '", t.Get(row, "request_rate"),
                       "') and the number of requests in batch_or_concurrency");
      return m;
    }
    m.workload_kind = "poisson";
    m.request_rate = rate;
    m.num_requests = requests;
    return m;
  }
  m.workload_kind = "fixed-batch";
  if (mode == "concurrency") {
    // One client sends its next request when the last one finishes: every
    // request runs alone, so the row is a batch of 1.
    m.assumptions.push_back("a closed loop of one client runs one request at a time: a batch of 1");
  }
  return m;
}

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
      return bad("mode", absl::StrCat("'", t.Get(row, "mode"), "' is not one of ", Join(kModes)));
    }
    const std::set<std::string> features = Features(t, row);
    if (features.empty()) return bad("feature", "is empty; list the features the row needs");
    for (const std::string& f : features) {
      if (!IsKnownServingFeature(f)) {
        return bad("feature", absl::StrCat("'", f, "' is not one of ", Join(kFeatures)));
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
