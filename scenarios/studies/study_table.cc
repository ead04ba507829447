#include "scenarios/studies/study_table.h"

#include <algorithm>
#include <functional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace clustersim::scenarios {
namespace {

struct Metric {
  std::string_view name;
  int decimals;  // in text and csv
  std::function<double(const config::Result&)> value;
  bool needs_train = false;  // empty unless the run length is given
  bool boolean = false;
  // Only with a `reliability` section (scenarios/goodput/); text and JSON
  // show it when some row has it. CSV has its own goodput columns
  // (CsvGoodputMetrics), on request: a sweep fixes its header before any point runs.
  bool needs_goodput = false;
};

const std::vector<Metric>& Metrics() {
  static const std::vector<Metric>* const kMetrics = new std::vector<Metric>{
      {"step_time_s", 4, [](const config::Result& r) { return r.step_time_s(); }},
      {"tokens_per_s", 0, [](const config::Result& r) { return r.tokens_per_s(); }},
      {"mfu", 4, [](const config::Result& r) { return r.mfu(); }},
      {"bubble_ratio", 4, [](const config::Result& r) { return r.bubble_ratio(); }},
      {"exposed_comm_s", 4, [](const config::Result& r) { return r.exposed_comm_s(); }},
      {"peak_memory_gib", 2, [](const config::Result& r) { return r.peak_memory_gib(); }},
      {"fits_in_memory", 0, [](const config::Result& r) { return r.fits_in_memory() ? 1.0 : 0.0; },
       false, true},
      {"usd_per_gpu_hour", 3, [](const config::Result& r) { return r.cost().usd_per_gpu_hour(); }},
      {"usd_per_million_tokens", 4,
       [](const config::Result& r) { return r.cost().usd_per_million_tokens(); }},
      {"time_to_train_days", 2,
       [](const config::Result& r) { return r.train().time_to_train_days(); }, true},
      {"gpu_hours", 0, [](const config::Result& r) { return r.train().gpu_hours(); }, true},
      {"total_usd", 0, [](const config::Result& r) { return r.train().total_usd(); }, true},
      {"goodput_p50_days", 2,
       [](const config::Result& r) { return r.goodput().time_to_train_days().p50(); }, true, false,
       true},
      {"goodput_p90_days", 2,
       [](const config::Result& r) { return r.goodput().time_to_train_days().p90(); }, true, false,
       true},
      {"effective_training_time", 4,
       [](const config::Result& r) { return r.goodput().effective_training_time(); }, true, false,
       true},
      {"interruptions", 1,
       [](const config::Result& r) { return r.goodput().expected_interruptions(); }, true, false,
       true},
      {"goodput_total_usd", 0, [](const config::Result& r) { return r.goodput().total_usd(); },
       true, false, true},
  };
  return *kMetrics;
}

std::string Cell(const Metric& m, const config::Result& r) {
  if (m.needs_train && !r.has_train()) return "";
  if (m.needs_goodput && !r.has_goodput()) return "";
  if (m.boolean) return m.value(r) != 0 ? "yes" : "no";
  return absl::StrFormat("%.*f", m.decimals, m.value(r));
}

std::string CsvQuote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\"", "\"\""}}), "\"");
}

std::string JsonString(const std::string& s) {
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}}), "\"");
}

// cells[row][column], row 0 the header.
std::string Aligned(const std::vector<std::vector<std::string>>& cells) {
  std::vector<size_t> width;
  for (const auto& row : cells) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : cells) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      absl::StrAppend(&line, c == 0 ? "" : "  ", row[c],
                      std::string(c + 1 < row.size() ? width[c] - row[c].size() : 0, ' '));
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

// Full recompute of the first recompute_num_layers layers of each chunk.
bool IsBlockRecompute(const config::TrainingConfig& t) {
  return t.recompute_granularity() == "full" && t.recompute_method() == "block";
}

}  // namespace

std::string StrategyLabel(const config::Scenario& s, bool show_precision) {
  const config::ParallelismConfig& p = s.parallelism();
  const config::TrainingConfig& t = s.training();
  std::string out = absl::StrCat("tp", p.tensor_model_parallel_size(), " pp",
                                 p.pipeline_model_parallel_size());
  if (p.virtual_pipeline_model_parallel_size() > 1) {
    absl::StrAppend(&out, " vp", p.virtual_pipeline_model_parallel_size());
  }
  if (p.context_parallel_size() > 1) absl::StrAppend(&out, " cp", p.context_parallel_size());
  if (p.expert_model_parallel_size() > 1) absl::StrAppend(&out, " ep", p.expert_model_parallel_size());
  absl::StrAppend(&out, " dp", p.data_parallel_size(), " mbs", t.micro_batch_size(), " gbs",
                  t.global_batch_size(), " rc-");
  if (IsBlockRecompute(t)) {
    absl::StrAppend(&out, "block", t.recompute_num_layers());
  } else {
    absl::StrAppend(&out, t.recompute_granularity());
  }
  if (t.cpu_offload_layers() > 0) absl::StrAppend(&out, " offload", t.cpu_offload_layers());
  if (p.zero_stage() > 0) {
    absl::StrAppend(&out, " zero", p.zero_stage());
    if (p.data_parallel_shard_size() > 0) {
      absl::StrAppend(&out, " shard", p.data_parallel_shard_size());
    }
  } else if (p.use_distributed_optimizer()) {
    absl::StrAppend(&out, " distopt");
  }
  if (p.sequence_parallel()) absl::StrAppend(&out, " sp");
  if (p.pipeline_model_parallel_size() > 1) absl::StrAppend(&out, " ", p.pipeline_schedule());
  const std::string precision = t.has_precision() ? t.precision() : "bf16";
  if (show_precision || precision == "fp8") absl::StrAppend(&out, " ", precision);
  return out;
}

std::string StudyJsonObject(const StudyRow& row) {
  const config::Result& r = row.result;
  std::string out =
      absl::StrCat("{\"label\": ", JsonString(row.label),
                   ", \"strategy\": ", JsonString(StrategyLabel(r.scenario(), row.show_precision)));
  if (IsBlockRecompute(r.scenario().training())) {
    absl::StrAppend(&out, ", \"recompute_method\": \"block\", \"recompute_num_layers\": ",
                    r.scenario().training().recompute_num_layers());
  }
  for (const Metric& m : Metrics()) {
    if (m.needs_train && !r.has_train()) continue;
    if (m.needs_goodput && !r.has_goodput()) continue;
    absl::StrAppend(&out, ", ", JsonString(std::string(m.name)), ": ",
                    m.boolean ? (m.value(r) != 0 ? "true" : "false")
                              : absl::StrFormat("%.9g", m.value(r)));
  }
  return absl::StrCat(out, "}");
}

namespace {

// A JSON string's contents starting at `pos` (just after the opening quote).
std::string JsonStringAt(const std::string& line, size_t pos) {
  std::string out;
  for (size_t i = pos; i < line.size() && line[i] != '"'; ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) ++i;
    out += line[i];
  }
  return out;
}

}  // namespace

std::string StudyJsonLabel(const std::string& line) {
  constexpr std::string_view kPrefix = "{\"label\": \"";
  if (line.rfind(kPrefix, 0) != 0) return "";
  return JsonStringAt(line, kPrefix.size());
}

std::optional<double> StudyJsonNumber(const std::string& line, std::string_view key) {
  const std::string needle = absl::StrCat("\"", std::string(key), "\": ");
  const size_t at = line.find(needle);
  if (at == std::string::npos) return std::nullopt;
  const size_t start = at + needle.size();
  const size_t end = line.find_first_of(",}", start);
  double v;
  if (!absl::SimpleAtod(line.substr(start, end - start), &v)) return std::nullopt;
  return v;
}

namespace {

// The sweep CSV's goodput columns: result.goodput's own fields, in days and
// dollars as `run` prints them.
const std::vector<Metric>& CsvGoodputMetrics() {
  static const std::vector<Metric>* const kMetrics = new std::vector<Metric>{
      {"goodput_percent", 2,
       [](const config::Result& r) { return 100 * r.goodput().effective_training_time(); }},
      {"goodput_p10_days", 2,
       [](const config::Result& r) { return r.goodput().time_to_train_days().p10(); }},
      {"goodput_p50_days", 2,
       [](const config::Result& r) { return r.goodput().time_to_train_days().p50(); }},
      {"goodput_p90_days", 2,
       [](const config::Result& r) { return r.goodput().time_to_train_days().p90(); }},
      {"interruptions", 1,
       [](const config::Result& r) { return r.goodput().expected_interruptions(); }},
      {"goodput_total_usd", 0, [](const config::Result& r) { return r.goodput().total_usd(); }},
  };
  return *kMetrics;
}

}  // namespace

std::string StudyCsvHeader(bool goodput) {
  std::string out = "label,strategy";
  for (const Metric& m : Metrics()) {
    if (!m.needs_goodput) absl::StrAppend(&out, ",", std::string(m.name));
  }
  if (goodput) {
    for (const Metric& m : CsvGoodputMetrics()) absl::StrAppend(&out, ",", std::string(m.name));
  }
  return absl::StrCat(out, "\n");
}

std::string StudyCsvRow(const StudyRow& row, bool goodput) {
  std::string out = absl::StrCat(
      CsvQuote(row.label), ",", CsvQuote(StrategyLabel(row.result.scenario(), row.show_precision)));
  for (const Metric& m : Metrics()) {
    if (!m.needs_goodput) absl::StrAppend(&out, ",", CsvQuote(Cell(m, row.result)));
  }
  if (goodput) {
    for (const Metric& m : CsvGoodputMetrics()) {
      absl::StrAppend(&out, ",", row.result.has_goodput() ? Cell(m, row.result) : "");
    }
  }
  return absl::StrCat(out, "\n");
}

absl::StatusOr<std::string> FormatStudyTable(const std::vector<StudyRow>& rows,
                                             std::string_view format, bool side_by_side) {
  const bool any_goodput = std::any_of(rows.begin(), rows.end(),
                                       [](const StudyRow& r) { return r.result.has_goodput(); });
  std::vector<Metric> metrics;
  for (const Metric& m : Metrics()) {
    if (!m.needs_goodput || any_goodput) metrics.push_back(m);
  }
  if (format == "json") {
    std::string out = "[\n";
    for (size_t i = 0; i < rows.size(); ++i) {
      absl::StrAppend(&out, "  ", StudyJsonObject(rows[i]), i + 1 < rows.size() ? ",\n" : "\n");
    }
    return absl::StrCat(out, "]\n");
  }
  if (format == "csv") {
    std::string out = StudyCsvHeader(any_goodput);
    for (const StudyRow& row : rows) out += StudyCsvRow(row, any_goodput);
    return out;
  }
  if (format != "text") {
    return absl::InvalidArgumentError(
        absl::StrCat("--format=", std::string(format), " is not known; use text, csv or json"));
  }
  // One row per result.
  std::vector<std::vector<std::string>> cells;
  cells.push_back({"label", "strategy"});
  for (const Metric& m : metrics) cells[0].emplace_back(m.name);
  for (const StudyRow& row : rows) {
    std::vector<std::string> line = {row.label,
                                     StrategyLabel(row.result.scenario(), row.show_precision)};
    for (const Metric& m : metrics) line.push_back(Cell(m, row.result));
    cells.push_back(std::move(line));
  }
  if (!side_by_side) return Aligned(cells);
  std::vector<std::vector<std::string>> transposed(cells[0].size());
  for (size_t c = 0; c < cells[0].size(); ++c) {
    for (const auto& line : cells) transposed[c].push_back(line[c]);
  }
  return Aligned(transposed);
}

}  // namespace clustersim::scenarios
