#include "scenarios/accuracy/validation.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "models/transformer_config.h"
#include "scenarios/accuracy/validation_rows.h"
#include "scenarios/input/resolve.h"
#include "scenarios/run/runner.h"

namespace clustersim::scenarios {
namespace validation_internal {
namespace {

// The largest parallel size a row may state: far above any published run,
// small enough that products of three sizes fit an int.
constexpr int kMaxParallelSize = 1024;

}  // namespace

bool Int(const std::string& cell, int* out) {
  return !cell.empty() && absl::SimpleAtoi(cell, out);
}

bool ParallelSize(const sim::CsvTable& t, const sim::CsvTable::Row& row, std::string_view column, int* out,
                  std::string* reason) {
  const std::string& cell = t.Get(row, column);
  if (cell.empty()) return true;
  int v = 0;
  if (!absl::SimpleAtoi(cell, &v) || v < 1 || v > kMaxParallelSize) {
    *reason = absl::StrCat("column '", std::string(column), "' is '", cell,
                           "'; a parallel size must be an integer from 1 to ", kMaxParallelSize);
    return false;
  }
  *out = v;
  return true;
}

void GptModel(int layers, int hidden, int heads, int seq, int vocab, config::Scenario* s) {
  config::ModelConfig* m = s->mutable_model();
  m->set_num_layers(layers);
  m->set_hidden_size(hidden);
  m->set_num_attention_heads(heads);
  m->set_seq_length(seq);
  m->set_vocab_size(vocab);
  // ffn_hidden_size is left unset: Resolve defaults it to 4 x hidden and
  // refuses a hidden size whose 4x overflows (4 * hidden here was signed
  // overflow for hidden sizes over 2^29, found by fuzzing).
}

absl::StatusOr<config::Result> Simulate(config::Scenario s, const ValidationOptions& options,
                                        std::string* kept) {
  if (options.host_overhead_us >= 0) {
    s.mutable_training()->set_host_overhead_us_per_op(options.host_overhead_us);
  }
  if (options.framework_gemm_factor > 0) {
    s.mutable_training()->set_framework_gemm_factor(options.framework_gemm_factor);
  }
  if (options.framework_attention_factor > 0) {
    s.mutable_training()->set_framework_attention_factor(options.framework_attention_factor);
  }
  if (!options.network_tier.empty()) s.mutable_network()->set_tier(options.network_tier);
  if (options.keep_scenarios && kept != nullptr) {
    google::protobuf::TextFormat::PrintToString(s, kept);
  }
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  if (!r.ok()) return r.status();
  if (options.resolve_only) return absl::CancelledError("not simulated (resolve only)");
  // A row reads the step time and the memory model's peak, and neither
  // depends on the memory timeline or on merging compute chains (RunOptions):
  // with the timeline off and the chains merged, a run keeps no per-task
  // details and a fraction of the tasks.
  RunOptions run;
  run.memory_timeline = false;
  run.merge_compute_chains = true;
  return RunScenario(*r, run);
}

void RecordMemory(const config::Result& r, ValidationRow* v) {
  v->simulated = true;
  v->memory_gib = r.peak_memory_gib();
  v->memory_capacity_gib = r.memory_capacity_gib();
  v->fits = r.fits_in_memory();
}

}  // namespace validation_internal

using validation_internal::PublishedRow;
using validation_internal::VtrainRow;

absl::StatusOr<ValidationReport> ValidateTable(const sim::CsvTable& table, std::string_view origin,
                                               const ValidationOptions& options) {
  ValidationReport report;
  report.origin = std::string(origin);
  const bool published = table.Column("id") >= 0 && table.Column("metric") >= 0;
  const bool vtrain = table.Column("iteration time (ms)") >= 0;
  if (!published && !vtrain) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(origin), ": not a validation table (expected published-runs.csv columns "
        "id,...,metric,value or vTrain's '# GPUs,...,iteration time (ms)')"));
  }
  const std::string vtrain_source =
      table.Column("Parameters (billion)") >= 0 ? "vTrain-multi" : "vTrain-single";
  const int stride = std::max(1, options.stride);
  for (size_t i = std::max(0, options.offset); i < table.rows.size(); i += stride) {
    if (options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed)) {
      return absl::CancelledError("cancelled");
    }
    report.rows.push_back(published ? PublishedRow(table, table.rows[i], options)
                                    : VtrainRow(table, table.rows[i], vtrain_source,
                                                static_cast<int>(i), options));
  }
  std::map<std::string, ErrorTally> sources;
  std::map<std::pair<std::string, std::string>, ErrorTally> groups;
  ErrorTally all;
  for (const ValidationRow& r : report.rows) {
    if (!r.supported || r.metric == "memory_gb") continue;
    for (ErrorTally* t : {&sources[r.source], &groups[{r.stack, r.gpu}], &all}) {
      t->Add(100 * std::abs(r.error), 100 * r.time_error);
    }
  }
  for (const auto& [source, t] : sources) {
    report.by_source.push_back({source, t.rows, t.Mape(), t.Signed()});
  }
  for (const auto& [key, t] : groups) {
    report.by_group.push_back({key.first, key.second, t.rows, t.Mape(), t.Signed()});
  }
  report.supported = all.rows;
  report.overall_mape = all.Mape();
  report.memory = CheckMemory(report.rows);
  return report;
}

MemoryCheck CheckMemory(const std::vector<ValidationRow>& rows) {
  MemoryCheck check;
  for (const ValidationRow& r : rows) {
    if (!r.simulated) continue;
    ++check.simulated;
    if (!r.fits) check.misfits.push_back(r.id);
  }
  return check;
}

std::string FormatMemoryCheck(const std::vector<ValidationRow>& rows) {
  const MemoryCheck check = CheckMemory(rows);
  if (check.simulated == 0) return "";
  std::string out = absl::StrFormat(
      "memory: %d of %d runs that ran are predicted not to fit their GPU (each is a miss of the "
      "memory model)",
      check.misfits.size(), check.simulated);
  std::vector<std::string> listed;
  for (const ValidationRow& r : rows) {
    if (r.simulated && !r.fits) {
      listed.push_back(
          absl::StrFormat("%s %.1f of %.1f GiB", r.id, r.memory_gib, r.memory_capacity_gib));
    }
  }
  if (!listed.empty()) absl::StrAppend(&out, ": ", absl::StrJoin(listed, ", "));
  return out + "\n";
}

std::string FormatGroupSummaries(const std::vector<GroupSummary>& groups) {
  std::string out;
  for (const GroupSummary& g : groups) {
    absl::StrAppendFormat(&out, "  %-20s %-16s %6.1f%%  signed %+6.1f%%  (%d rows)%s\n", g.stack,
                          g.gpu, g.mape, g.mean_signed, g.rows,
                          std::abs(g.mean_signed) > kGroupBiasBound
                              ? absl::StrFormat("  bias beyond +-%.0f%%", kGroupBiasBound)
                              : "");
  }
  return out;
}

std::string FormatValidationReport(const ValidationReport& report, double target_mape) {
  std::string out = absl::StrFormat("validation: %s\n%-16s %-14s %-21s %12s %12s %8s\n",
                                    report.origin, "id", "source", "metric", "measured",
                                    "predicted", "error");
  for (const ValidationRow& r : report.rows) {
    if (!r.supported) continue;
    absl::StrAppendFormat(&out, "%-16s %-14s %-21s %12.4g %12.4g %+7.1f%%\n", r.id, r.source,
                          r.metric, r.measured, r.predicted, 100 * r.error);
  }
  int unsupported = 0;
  for (const ValidationRow& r : report.rows) unsupported += r.supported ? 0 : 1;
  if (unsupported > 0) {
    absl::StrAppendFormat(&out, "\nnot run (%d rows):\n", unsupported);
    for (const ValidationRow& r : report.rows) {
      if (!r.supported) absl::StrAppendFormat(&out, "  %-16s %s\n", r.id, r.reason);
    }
  }
  std::map<std::string, std::string> assumed;
  for (const ValidationRow& r : report.rows) {
    if (r.supported && !r.assumptions.empty()) assumed.emplace(r.source, r.assumptions);
  }
  if (!assumed.empty()) {
    out += "\nassumed where the source is silent:\n";
    for (const auto& [source, text] : assumed) {
      absl::StrAppendFormat(&out, "  %-14s %s\n", source, text);
    }
  }
  out += "\nMAPE by source (time and throughput rows), and mean signed step-time error "
         "(negative: too fast):\n";
  for (const SourceSummary& s : report.by_source) {
    absl::StrAppendFormat(&out, "  %-14s %6.1f%%  signed %+6.1f%%  (%d rows)%s\n", s.source,
                          s.mape, s.mean_signed, s.rows,
                          s.mape > target_mape ? "  above the target" : "");
  }
  out += "by stack and GPU:\n" + FormatGroupSummaries(report.by_group);
  absl::StrAppendFormat(&out, "overall MAPE %.1f%% over %d rows; target %.0f%%: %s\n",
                        report.overall_mape, report.supported, target_mape,
                        report.overall_mape <= target_mape ? "met" : "MISSED");
  return out + FormatMemoryCheck(report.rows);
}

}  // namespace clustersim::scenarios
