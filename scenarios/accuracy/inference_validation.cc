#include "scenarios/accuracy/inference_validation.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "scenarios/serve/serve_disagg_resolve.h"
#include "scenarios/serve/serve_disagg_runner.h"
#include "scenarios/serve/serve_resolve.h"
#include "scenarios/serve/serve_runner.h"
#include "strategies/serving_length_samples.h"

namespace clustersim::scenarios {

absl::StatusOr<double> PredictServingMetric(const config::Scenario& scenario,
                                            std::string_view metric) {
  // Speculative decoding's gain: the output rate with it over the same
  // scenario without it (two runs).
  if (metric == "speedup_vs_no_spec") {
    if (!scenario.inference().has_speculative()) {
      return absl::InvalidArgumentError(
          "metric 'speedup_vs_no_spec' needs a scenario with inference.speculative set");
    }
    config::Scenario plain = scenario;
    plain.mutable_inference()->clear_speculative();
    absl::StatusOr<double> with = PredictServingMetric(scenario, "output_tokens_per_s_total");
    if (!with.ok()) return with.status();
    absl::StatusOr<double> without = PredictServingMetric(plain, "output_tokens_per_s_total");
    if (!without.ok()) return without.status();
    if (!(*without > 0)) return absl::InternalError("the run without speculation produced nothing");
    return *with / *without;
  }
  // Throughput and latency rows come from the simulated timeline; the curve's
  // re-simulations are not needed here. Disaggregated deployments run on
  // their two pools (serve_disagg_runner.h), as `clustersim serve` does.
  absl::StatusOr<config::ServeResult> r;
  if (scenario.inference().has_disaggregated()) {
    absl::StatusOr<ResolvedDisagg> d = ResolveDisagg(scenario);
    if (!d.ok()) return d.status();
    r = RunDisaggServe(*d, scenario, {});
  } else {
    absl::StatusOr<ResolvedServe> resolved = ResolveServe(scenario);
    if (!resolved.ok()) return resolved.status();
    r = RunServe(*resolved, {.curve = false});
  }
  if (!r.ok()) return r.status();
  const config::ServeMemory& mem = r->memory();
  const double prompt = scenario.inference().workload().prompt_length().value();
  const double batch = std::max(1, scenario.inference().workload().batch_size());
  if (metric == "output_tokens_per_s_per_gpu") return r->output_tokens_per_s_per_gpu();
  if (metric == "output_tokens_per_s_total") return r->output_tokens_per_s();
  // trtllm-bench's per-user output throughput: each request's output tokens
  // over its latency, which for requests running side by side is the total
  // rate shared among them (the clients of a closed loop, else the batch).
  if (metric == "output_tokens_per_s_per_user") {
    const config::InferenceWorkload& wl = scenario.inference().workload();
    if (wl.kind() == "concurrency") return r->output_tokens_per_s() / std::max(1, wl.concurrency());
    if (wl.kind() == "fixed-batch") return r->output_tokens_per_s() / batch;
    return absl::InvalidArgumentError(absl::StrCat(
        "metric 'output_tokens_per_s_per_user' needs a fixed batch or a closed loop of clients, "
        "not workload kind '",
        wl.kind(), "'"));
  }
  // Generation rate of the decode phase (llama.cpp's tg): tokens per second of
  // each sequence between its tokens, times the batch.
  if (metric == "gen_tokens_per_s") return batch * 1000.0 / r->tpot_ms().mean();
  // Prompt processing rate (llama.cpp's pp): the batch's prompt tokens over
  // the time to the first token.
  if (metric == "prompt_tokens_per_s") return batch * prompt * 1000.0 / r->ttft_ms().mean();
  if (metric == "ttft_ms") return r->ttft_ms().mean();
  if (metric == "tpot_ms") return r->tpot_ms().mean();
  if (metric == "e2e_latency_ms") return r->e2e_ms().mean();
  if (metric == "ttft_p99_ms") return r->ttft_ms().p99();
  if (metric == "requests_per_s") return r->requests_per_s();
  if (metric == "weights_gib_per_gpu") return mem.weights_gib();
  if (metric == "kv_bytes_per_token") return static_cast<double>(mem.kv_bytes_per_token());
  const double kv_tokens = static_cast<double>(mem.kv_blocks()) * mem.kv_block_size();
  if (metric == "kv_cache_tokens") return kv_tokens;
  // vLLM's "maximum concurrency for L tokens per request": KV tokens / L.
  if (metric == "max_concurrency" && mem.sequence_length() > 0) {
    return kv_tokens / static_cast<double>(mem.sequence_length());
  }
  return absl::InvalidArgumentError(
      absl::StrCat("metric '", std::string(metric), "' is not produced by the serving simulator"));
}

absl::StatusOr<InferenceValidationReport> ValidateInferenceTable(
    const sim::CsvTable& table, std::string_view origin,
    const InferenceValidationOptions& options) {
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(table);
  if (!runs.ok()) {
    return absl::Status(runs.status().code(),
                        absl::StrCat(std::string(origin), ": ", runs.status().message()));
  }
  InferenceValidationReport report;
  report.origin = std::string(origin);
  double sum_abs = 0;
  for (size_t i = 0; i < runs->size(); ++i) {
    if (static_cast<int>(i) < options.offset ||
        (static_cast<int>(i) - options.offset) % std::max(1, options.stride) != 0) {
      continue;
    }
    InferenceRun& run = (*runs)[i];
    // A data set's lengths file is named relative to the table; a model given
    // by its dimensions takes the longest prompt plus the longest output as its
    // sequence length, as a row of fixed lengths takes prompt plus output.
    if (run.scenario && run.scenario->inference().workload().has_lengths_file()) {
      config::InferenceWorkload* wl = run.scenario->mutable_inference()->mutable_workload();
      const size_t slash = origin.rfind('/');
      if (slash != std::string_view::npos && !absl::StartsWith(wl->lengths_file(), "/")) {
        wl->set_lengths_file(
            absl::StrCat(std::string(origin.substr(0, slash + 1)), wl->lengths_file()));
      }
      absl::StatusOr<std::vector<strategies::LengthSample>> samples =
          strategies::ReadLengthSamples(wl->lengths_file(), "inference.workload.lengths_file");
      if (samples.ok() && !samples->empty() && wl->output_tokens_mean() > 0) {
        strategies::ScaleOutputLengths(wl->output_tokens_mean(), *samples);
      }
      if (samples.ok() && !run.scenario->model().has_preset()) {
        int64_t prompt = 0, output = 0;
        for (const strategies::LengthSample& x : *samples) {
          prompt = std::max(prompt, x.prompt_tokens);
          output = std::max(output, x.output_tokens);
        }
        run.scenario->mutable_model()->set_seq_length(static_cast<int32_t>(prompt + output));
      }
    }
    if (run.scenario && options.host_us >= 0) {
      run.scenario->mutable_inference()->set_host_overhead_us_per_iteration(options.host_us);
    }
    if (run.scenario && options.decode_attention_flops_per_sm_cycle >= 0) {
      run.scenario->mutable_inference()->set_decode_attention_flops_per_sm_cycle(
          options.decode_attention_flops_per_sm_cycle);
    }
    InferenceValidationRow row;
    if (!run.scenario) {
      row.not_run = absl::StrCat("not supported: ", run.not_supported);
    } else {
      absl::StatusOr<double> p = PredictServingMetric(*run.scenario, run.metric);
      if (!p.ok()) {
        row.not_run = std::string(p.status().message());
      } else if (run.measured != 0) {
        row.predicted = *p;
        row.error_pct = (*p - run.measured) / run.measured * 100;
        sum_abs += std::abs(row.error_pct);
        ++report.ran;
      } else {
        row.not_run = "measured value is 0 (no relative error)";
      }
    }
    row.run = std::move(run);
    report.rows.push_back(std::move(row));
  }
  report.mape = report.ran > 0 ? sum_abs / report.ran : 0;
  return report;
}

std::string FormatInferenceValidationReport(const InferenceValidationReport& report,
                                            double target_pct) {
  std::string out =
      absl::StrCat("inference validation: ", report.origin, " (", report.rows.size(), " rows)\n");
  for (const InferenceValidationRow& r : report.rows) {
    absl::StrAppendFormat(&out, "%-16s %-28s measured %g %s\n", r.run.id, r.run.metric,
                          r.run.measured, r.run.unit);
    if (r.run.scenario) {
      absl::StrAppend(&out, "    setup: ", r.run.Setup(), "\n");
    }
    if (!r.run.assumptions.empty()) {
      absl::StrAppend(&out, "    assumes: ", absl::StrJoin(r.run.assumptions, "; "), "\n");
    }
    if (r.predicted) {
      absl::StrAppendFormat(&out, "    predicted %g %s (%+.1f%%)\n", *r.predicted, r.run.unit,
                            r.error_pct);
    } else {
      absl::StrAppend(&out, "    not run: ", r.not_run, "\n");
    }
  }
  int mapped = 0;
  for (const InferenceValidationRow& r : report.rows) mapped += r.run.scenario ? 1 : 0;
  absl::StrAppendFormat(&out, "rows: %d, mapped to a scenario: %d, not supported: %d, ran: %d\n",
                        static_cast<int>(report.rows.size()), mapped,
                        static_cast<int>(report.rows.size()) - mapped, report.ran);
  if (report.ran > 0) {
    absl::StrAppendFormat(&out, "MAPE %.1f%% over %d rows (target %.0f%%)\n", report.mape,
                          report.ran, target_pct);
    // Rows whose tp the mapping chose stand apart from stated configurations.
    int inferred = 0;
    double inferred_abs = 0;
    for (const InferenceValidationRow& r : report.rows) {
      if (r.predicted && r.run.inferred_tp) {
        ++inferred;
        inferred_abs += std::abs(r.error_pct);
      }
    }
    if (inferred > 0) {
      absl::StrAppendFormat(&out,
                            "  of which %d rows with an inferred tp (not stated): MAPE %.1f%%; "
                            "the other %d rows: MAPE %.1f%%\n",
                            inferred, inferred_abs / inferred, report.ran - inferred,
                            report.ran > inferred ? (report.mape * report.ran - inferred_abs) /
                                                        (report.ran - inferred)
                                                  : 0.0);
    }
  } else {
    absl::StrAppend(&out, "MAPE: n/a (no row ran)\n");
  }
  return out;
}

}  // namespace clustersim::scenarios
