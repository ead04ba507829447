#include "scenarios/accuracy/cross_validation.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "models/framework_profile.h"
#include "scenarios/accuracy/inference_runs.h"
#include "scenarios/input/loader.h"

namespace clustersim::scenarios {
namespace {

// A row that ran at every grid value: its errors there, in percent.
struct GridRow {
  std::string source, stack, gpu;
  int num_gpus = 0;
  std::vector<double> abs_error, time_error;
};

// Simulates every table at every grid value on `threads` workers; reports[g][t].
absl::StatusOr<std::vector<std::vector<ValidationReport>>> SimulateGrid(
    const std::vector<NamedTable>& tables, const std::vector<double>& grid,
    const CrossValidationOptions& options) {
  const int jobs = static_cast<int>(grid.size() * tables.size());
  std::vector<std::vector<ValidationReport>> reports(grid.size(),
                                                     std::vector<ValidationReport>(tables.size()));
  std::vector<absl::Status> status(jobs);
  std::atomic<int> next{0};
  std::mutex mu;
  int done = 0;
  auto work = [&] {
    for (int j = next++; j < jobs; j = next++) {
      const size_t g = j / tables.size(), t = j % tables.size();
      ValidationOptions v;
      v.framework_gemm_factor = grid[g];
      v.stride = options.stride;
      v.offset = options.offset;
      v.network_tier = options.network_tier;
      v.cancel = options.cancel;
      absl::StatusOr<ValidationReport> r = ValidateTable(tables[t].table, tables[t].origin, v);
      if (r.ok()) {
        reports[g][t] = *std::move(r);
      } else {
        status[j] = r.status();
      }
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (options.progress) options.progress(done, jobs);
    }
  };
  std::vector<std::thread> workers;
  for (int i = 1; i < std::max(1, options.threads); ++i) workers.emplace_back(work);
  work();
  for (std::thread& w : workers) w.join();
  for (const absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  return reports;
}

// The mean over sources (other than `left_out`) of their MAPE on `stack`'s
// rows at grid value g; NaN when no other source ran the stack.
double Objective(const std::vector<GridRow>& rows, const std::string& stack,
                 const std::string& left_out, size_t g) {
  std::map<std::string, ErrorTally> by_source;
  for (const GridRow& r : rows) {
    if (r.stack == stack && r.source != left_out) by_source[r.source].Add(r.abs_error[g], 0);
  }
  if (by_source.empty()) return std::nan("");
  double sum = 0;
  for (const auto& [source, s] : by_source) sum += s.Mape();
  return sum / by_source.size();
}

// The grid index with the lowest objective (ties to the larger factor), or
// `fallback` when the stack has no other source.
size_t BestIndex(const std::vector<GridRow>& rows, const std::string& stack,
                 const std::string& left_out, size_t grid_size, size_t fallback) {
  size_t best = fallback;
  double best_value = std::nan("");
  for (size_t g = 0; g < grid_size; ++g) {
    const double v = Objective(rows, stack, left_out, g);
    if (std::isnan(v)) return fallback;
    if (std::isnan(best_value) || v <= best_value + 1e-12) {
      best = g;
      best_value = v;
    }
  }
  return best;
}

// A row's out-of-source log ratio (measured / predicted step time) and the
// band built without its source, in log space.
struct BandCheck {
  double log_ratio, center, half;
};

// Fraction of `checks` inside their bands widened `scale`-fold about their
// centres.
double Coverage(const std::vector<BandCheck>& checks, double scale) {
  if (checks.empty()) return 0;
  int inside = 0;
  for (const BandCheck& c : checks) {
    inside += std::abs(c.log_ratio - c.center) <= scale * c.half + 1e-12 ? 1 : 0;
  }
  return static_cast<double>(inside) / checks.size();
}

// The smallest width scale (1 to 5 in steps of 0.02) at which the sources
// other than `skip` hold, on average, 80% of their rows in their bands; 5 if
// none does. Steps much coarser than one row's share of coverage overshoot 80%.
double ScaleWithout(const std::map<std::string, std::vector<BandCheck>>& checks,
                    const std::string& skip) {
  for (int fiftieths = 50; fiftieths <= 250; ++fiftieths) {
    double sum = 0;
    int n = 0;
    for (const auto& [source, c] : checks) {
      if (source == skip) continue;
      sum += Coverage(c, fiftieths / 50.0);
      ++n;
    }
    if (n > 0 && sum / n >= 0.8) return fiftieths / 50.0;
  }
  return 5;
}

// The prediction bands of `residuals` (out of source): each source's rows are
// checked against the bands built from every other source; the width scale
// that brings the other sources to 80% is fitted without the source it is
// checked on, and the shipped one on all of them.
void FitBands(const std::vector<models::IntervalResidual>& residuals, CrossValidation* cv) {
  std::map<std::string, std::vector<BandCheck>> checks;
  for (const SourceFold& fold : cv->sources) {
    std::vector<models::IntervalResidual> others;
    for (const models::IntervalResidual& r : residuals) {
      if (r.source != fold.source) others.push_back(r);
    }
    const std::vector<models::IntervalBand> bands = models::BuildBands(others);
    for (const models::IntervalResidual& r : residuals) {
      if (r.source != fold.source) continue;
      const models::StepInterval band = models::Lookup(bands, r.stack, r.generation, r.num_gpus);
      checks[fold.source].push_back({std::log(r.ratio),
                                     (std::log(band.p10) + std::log(band.p90)) / 2,
                                     (std::log(band.p90) - std::log(band.p10)) / 2});
    }
  }
  double inside_all = 0, coverage_sum = 0;
  for (SourceFold& fold : cv->sources) {
    const std::vector<BandCheck>& own = checks[fold.source];
    fold.band_coverage = Coverage(own, ScaleWithout(checks, fold.source));
    inside_all += fold.band_coverage * own.size();
    coverage_sum += fold.band_coverage;
  }
  cv->band_coverage = residuals.empty() ? 0 : inside_all / residuals.size();
  cv->band_coverage_source_mean = cv->sources.empty() ? 0 : coverage_sum / cv->sources.size();
  cv->band_width_scale = ScaleWithout(checks, "");
  cv->bands = models::BuildBands(residuals);
  for (models::IntervalBand& b : cv->bands) {
    const double center = (std::log(b.p10) + std::log(b.p90)) / 2;
    const double half = (std::log(b.p90) - std::log(b.p10)) / 2 * cv->band_width_scale;
    b.p10 = std::exp(center - half);
    b.p90 = std::exp(center + half);
  }
}

}  // namespace

absl::StatusOr<std::vector<NamedTable>> LoadTrainingTables(const std::vector<std::string>& paths) {
  std::vector<NamedTable> tables;
  for (const std::string& path : paths) {
    absl::StatusOr<std::string> text = ReadFile(path);
    if (!text.ok()) return text.status();
    absl::StatusOr<sim::CsvTable> table = sim::ParseCsv(*text, path);
    if (!table.ok()) return table.status();
    if (IsInferenceRunsTable(*table)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, " is a serving table; leave-one-source-out and fit cover the training tables "
                "(published-runs.csv, vtrain/, unseen/)"));
    }
    tables.push_back({path, *std::move(table)});
  }
  return tables;
}

absl::StatusOr<CrossValidation> LeaveOneSourceOut(const std::vector<NamedTable>& tables,
                                                  const CrossValidationOptions& options) {
  CrossValidation cv;
  // Every profile's shipped value is a grid point: the in-sample figures and
  // the fallback of a stack with one source are read off the grid.
  std::map<std::string, double> shipped;
  std::vector<double> grid = options.gemm_grid;
  for (const models::FrameworkProfile& p : models::FrameworkCatalog::Default().profiles()) {
    shipped[p.name] = p.gemm_factor.value;
    grid.push_back(p.gemm_factor.value);
  }
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end(),
                         [](double a, double b) { return std::abs(a - b) < 1e-9; }),
             grid.end());
  for (double g : grid) {
    if (!(g > 0 && g <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("GEMM factor grid value ", g, " must be in (0, 1]"));
    }
  }
  cv.grid = grid;
  auto index_of = [&](double v) {
    return static_cast<size_t>(
        std::min_element(grid.begin(), grid.end(),
                         [v](double a, double b) { return std::abs(a - v) < std::abs(b - v); }) -
        grid.begin());
  };

  absl::StatusOr<std::vector<std::vector<ValidationReport>>> reports =
      SimulateGrid(tables, grid, options);
  if (!reports.ok()) return reports.status();

  std::vector<GridRow> rows;
  for (size_t t = 0; t < tables.size(); ++t) {
    const std::vector<ValidationRow>& first = (*reports)[0][t].rows;
    for (size_t i = 0; i < first.size(); ++i) {
      GridRow row{first[i].source, first[i].stack, first[i].gpu, first[i].num_gpus, {}, {}};
      bool ran = first[i].metric != "memory_gb";
      for (size_t g = 0; g < grid.size() && ran; ++g) {
        const ValidationRow& v = (*reports)[g][t].rows[i];
        ran = v.supported;
        row.abs_error.push_back(100 * std::abs(v.error));
        row.time_error.push_back(100 * v.time_error);
      }
      if (ran) {
        rows.push_back(std::move(row));
      } else if (first[i].metric != "memory_gb") {
        ++cv.not_run;
      }
    }
  }
  cv.rows = static_cast<int>(rows.size());
  std::vector<ValidationRow> simulated;
  for (size_t t = 0; t < tables.size(); ++t) {
    for (const ValidationRow& r : (*reports)[0][t].rows) {
      if (r.simulated) simulated.push_back(r);
    }
  }
  cv.memory = CheckMemory(simulated);
  for (const ValidationRow& r : simulated) {
    if (!r.fits) ++cv.misfits_by_source[r.source];
  }

  std::map<std::string, std::set<std::string>> stacks_of_source, sources_of_stack;
  for (const GridRow& r : rows) {
    stacks_of_source[r.source].insert(r.stack);
    sources_of_stack[r.stack].insert(r.source);
  }
  auto shipped_index = [&](const std::string& stack) {
    auto it = shipped.find(stack);
    return index_of(it == shipped.end() ? 1.0 : it->second);
  };

  ErrorTally in_all, out_all;
  std::map<std::pair<std::string, std::string>, ErrorTally> groups;
  std::vector<models::IntervalResidual> residuals;
  for (const auto& [source, stacks] : stacks_of_source) {
    SourceFold fold;
    fold.source = source;
    fold.stacks = absl::StrJoin(stacks, ",");
    std::map<std::string, size_t> chosen;
    std::vector<std::string> notes;
    for (const std::string& stack : stacks) {
      const size_t fallback = shipped_index(stack);
      chosen[stack] = BestIndex(rows, stack, source, grid.size(), fallback);
      const bool alone = sources_of_stack[stack].size() == 1;
      notes.push_back(absl::StrFormat("%s %.2f%s", stack, grid[chosen[stack]],
                                      alone ? " (shipped: no other source)" : ""));
    }
    fold.fitted_without = absl::StrJoin(notes, "; ");
    ErrorTally in, out;
    for (const GridRow& r : rows) {
      if (r.source != source) continue;
      const size_t gi = shipped_index(r.stack), go = chosen[r.stack];
      in.Add(r.abs_error[gi], r.time_error[gi]);
      out.Add(r.abs_error[go], r.time_error[go]);
      in_all.Add(r.abs_error[gi], 0);
      out_all.Add(r.abs_error[go], 0);
      groups[{r.stack, r.gpu}].Add(r.abs_error[go], r.time_error[go]);
      // time_error = predicted / measured step time - 1, in percent.
      residuals.push_back({r.source, r.stack, models::GpuGeneration(r.gpu), r.num_gpus,
                           1 / (1 + r.time_error[go] / 100)});
    }
    fold.rows = in.rows;
    fold.in_sample_mape = in.Mape();
    fold.in_sample_signed = in.Signed();
    fold.out_of_source_mape = out.Mape();
    fold.out_of_source_signed = out.Signed();
    cv.sources.push_back(fold);
  }
  FitBands(residuals, &cv);
  cv.in_sample_mape = in_all.Mape();
  cv.out_of_source_mape = out_all.Mape();
  double sum = 0;
  for (const SourceFold& f : cv.sources) sum += f.out_of_source_mape;
  cv.out_of_source_source_mean = cv.sources.empty() ? 0 : sum / cv.sources.size();
  for (const auto& [key, s] : groups) {
    cv.by_group.push_back({key.first, key.second, s.rows, s.Mape(), s.Signed()});
  }
  for (const auto& [stack, sources] : sources_of_stack) {
    StackFit fit;
    fit.stack = stack;
    fit.shipped = grid[shipped_index(stack)];
    fit.sources = static_cast<int>(sources.size());
    for (const GridRow& r : rows) fit.rows += r.stack == stack ? 1 : 0;
    for (size_t g = 0; g < grid.size(); ++g) fit.objective.push_back(Objective(rows, stack, "", g));
    fit.fitted = grid[BestIndex(rows, stack, "", grid.size(), shipped_index(stack))];
    cv.fits.push_back(fit);
  }
  return cv;
}

bool BandCalibrated(const CrossValidation& cv) {
  return cv.band_coverage_source_mean >= 0.75 && cv.band_coverage_source_mean <= 0.85;
}

std::string FormatCrossValidation(const CrossValidation& cv, double overall_target,
                                  double source_target) {
  std::string out = absl::StrFormat(
      "leave-one-source-out: %d rows run (%d not run), each stack's GEMM factor refitted "
      "without the source on a grid of %d (%s)\n\n",
      cv.rows, cv.not_run, cv.grid.size(), absl::StrJoin(cv.grid, " "));
  absl::StrAppendFormat(&out, "%-14s %-26s %5s  %22s  %22s  %7s  %s\n", "source", "stacks",
                        "rows", "out of source (signed)", "in sample (signed)", "in band",
                        "predicted with");
  std::vector<std::string> above;
  for (const SourceFold& f : cv.sources) {
    absl::StrAppendFormat(&out,
                          "%-14s %-26s %5d  %8.1f%% (%+6.1f%%)   %8.1f%% (%+6.1f%%)   %6.0f%%  %s%s\n",
                          f.source, f.stacks, f.rows, f.out_of_source_mape,
                          f.out_of_source_signed, f.in_sample_mape, f.in_sample_signed,
                          100 * f.band_coverage, f.fitted_without,
                          f.out_of_source_mape > source_target ? "  ABOVE" : "");
    if (f.out_of_source_mape > source_target) above.push_back(f.source);
  }
  out += "\nout of source, by stack and GPU (signed: mean step-time error, negative: too fast):\n" +
         FormatGroupSummaries(cv.by_group);
  absl::StrAppendFormat(
      &out,
      "\nout-of-source MAPE %.1f%% over %d rows (mean of sources %.1f%%); in sample %.1f%%\n"
      "target %.0f%% overall: %s; no source above %.0f%%: %s\n"
      "80%% prediction band (quantiles widened %.2fx so that the other sources hold 80%% "
      "of their rows on average), built without each source: holds %.1f%% of its rows, "
      "%.1f%% averaged over sources; target 75-85%% averaged over sources: %s\n",
      cv.out_of_source_mape, cv.rows, cv.out_of_source_source_mean, cv.in_sample_mape,
      overall_target, cv.out_of_source_mape <= overall_target ? "met" : "MISSED", source_target,
      above.empty() ? "met" : absl::StrCat("MISSED (", absl::StrJoin(above, ", "), ")"),
      cv.band_width_scale, 100 * cv.band_coverage, 100 * cv.band_coverage_source_mean,
      BandCalibrated(cv) ? "met" : "MISSED");
  std::vector<std::string> by_source;
  for (const auto& [source, n] : cv.misfits_by_source) {
    by_source.push_back(absl::StrCat(source, " ", n));
  }
  // Rows that measured memory, not step time, count here but not in the MAPE.
  const int memory_only = cv.memory.simulated - cv.rows;
  absl::StrAppendFormat(&out,
                        "memory: %d of %d training runs that ran are predicted not to fit their "
                        "GPU (each is a miss of the memory model)%s%s\n",
                        cv.memory.misfits.size(), cv.memory.simulated,
                        by_source.empty() ? "" : absl::StrCat("; by source: ",
                                                              absl::StrJoin(by_source, ", ")),
                        memory_only > 0 ? absl::StrFormat("; the %d runs are the %d rows above "
                                                          "and %d measured for memory only",
                                                          cv.memory.simulated, cv.rows,
                                                          memory_only)
                                        : "");
  return out;
}

std::string FormatStackFits(const CrossValidation& cv) {
  std::string out = absl::StrFormat("%-20s %7s %7s %7s %5s   objective (mean of source MAPEs) at",
                                    "stack", "shipped", "fitted", "sources", "rows");
  for (double g : cv.grid) absl::StrAppendFormat(&out, " %6.2f", g);
  out += "\n";
  for (const StackFit& f : cv.fits) {
    absl::StrAppendFormat(&out, "%-20s %7.2f %7.2f %7d %5d   %35s", f.stack, f.shipped, f.fitted,
                          f.sources, f.rows, "");
    for (double o : f.objective) absl::StrAppendFormat(&out, " %5.1f%%", o);
    out += "\n";
  }
  return out;
}

}  // namespace clustersim::scenarios
