// The `inference.workload` part of ResolveServe (serve_resolve.h): the workload
// kind, request rate or batch, and the prompt and output lengths, from fixed,
// uniform or normal distributions or a lengths_file's samples.
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scenarios/serve/serve_resolve_internal.h"
#include "sim/status_macros.h"
#include "strategies/serving_length_samples.h"

namespace clustersim::scenarios::serve_resolve_internal {
namespace {

using strategies::LengthSpec;

absl::StatusOr<LengthSpec> ResolveLength(const config::LengthDistribution& d, int64_t fallback,
                                         const std::string& field,
                                         config::LengthDistribution* echo) {
  LengthSpec s;
  const std::string kind = d.has_kind() ? d.kind() : "fixed";
  echo->set_kind(kind);
  auto in_range = [&](std::string_view name, int64_t v) -> absl::Status {
    if (v < 1 || v > kMaxTokens) {
      return Bad(absl::StrCat(field, ".", std::string(name)), v,
                 "must be between 1 and 10000000 tokens");
    }
    return absl::OkStatus();
  };
  if (kind == "fixed") {
    s.kind = LengthSpec::Kind::kFixed;
    s.value = d.has_value() ? d.value() : fallback;
    CLUSTERSIM_RETURN_IF_ERROR(in_range("value", s.value));
    echo->set_value(static_cast<int32_t>(s.value));
    return s;
  }
  if (kind != "uniform" && kind != "normal") {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".kind=\"", kind, "\" is not known; use fixed, uniform or normal"));
  }
  if (!d.has_max()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".max is required for a ", kind, " length; set the longest length"));
  }
  s.min = d.has_min() ? d.min() : 1;
  s.max = d.max();
  CLUSTERSIM_RETURN_IF_ERROR(in_range("min", s.min));
  CLUSTERSIM_RETURN_IF_ERROR(in_range("max", s.max));
  if (s.max < s.min) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".max=", s.max, " is below ", field, ".min=", s.min, "; swap them"));
  }
  echo->set_min(static_cast<int32_t>(s.min));
  echo->set_max(static_cast<int32_t>(s.max));
  if (kind == "uniform") {
    s.kind = LengthSpec::Kind::kUniform;
    return s;
  }
  s.kind = LengthSpec::Kind::kNormal;
  s.mean = d.has_mean() ? d.mean() : (s.min + s.max) / 2.0;
  s.stddev = d.stddev();
  if (!(s.mean >= 1) || !(s.stddev >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".mean=", s.mean, " and .stddev=", s.stddev, " must be >= 1 and >= 0 tokens"));
  }
  echo->set_mean(s.mean);
  echo->set_stddev(s.stddev);
  return s;
}

}  // namespace

absl::Status ResolveServeWorkload(const config::InferenceWorkload& w,
                                  config::InferenceWorkload* ew, ServeMode* mode,
                                  strategies::ServingWorkload* sw_out) {
  const std::string kind =
      w.has_kind() ? w.kind() : (w.has_request_rate_per_s() ? "poisson" : "fixed-batch");
  if (kind != "poisson" && kind != "fixed-batch" && !IsBenchmarkMode(kind)) {
    return absl::InvalidArgumentError(
        absl::StrCat("inference.workload.kind=\"", kind,
                     "\" is not known; use poisson, fixed-batch, offline, server, concurrency "
                     "or trace"));
  }
  ew->set_kind(kind);
  mode->kind = kind;
  strategies::ServingWorkload& sw = *sw_out;
  sw.poisson = kind == "poisson";
  sw.seed = w.seed();
  ew->set_seed(sw.seed);
  if (IsBenchmarkMode(kind)) {
    CLUSTERSIM_RETURN_IF_ERROR(ResolveBenchmarkWorkload(w, kind, ew, mode, &sw));
  } else if (w.has_concurrency() || w.has_think_time_ms() || w.has_trace_file() ||
             w.has_warmup_requests()) {
    return absl::InvalidArgumentError(absl::StrCat("inference.workload.",
                                                   w.has_trace_file()        ? "trace_file"
                                                   : w.has_warmup_requests() ? "warmup_requests"
                                                                             : "concurrency",
                                                   " does not apply to kind \"", kind,
                                                   "\"; set kind \"trace\" or \"concurrency\""));
  } else if (w.has_duration_s()) {
    return absl::InvalidArgumentError(
        absl::StrCat("inference.workload.duration_s does not apply to kind \"", kind,
                     "\"; set kind \"server\" or \"offline\", or use num_requests"));
  } else if (sw.poisson) {
    if (!w.has_request_rate_per_s()) {
      return absl::InvalidArgumentError(
          "inference.workload.request_rate_per_s is required for a poisson workload; e.g. 4");
    }
    sw.rate_per_s = w.request_rate_per_s();
    if (!(sw.rate_per_s > 0 && sw.rate_per_s <= 1e6)) {
      return Bad("inference.workload.request_rate_per_s", sw.rate_per_s,
                 "must be > 0 and <= 1e6 requests per second");
    }
    sw.num_requests = w.has_num_requests() ? w.num_requests() : 200;
    if (sw.num_requests < 1 || sw.num_requests > 1'000'000) {
      return Bad("inference.workload.num_requests", sw.num_requests,
                 "must be between 1 and 1000000");
    }
    ew->set_request_rate_per_s(sw.rate_per_s);
    ew->set_num_requests(sw.num_requests);
  } else {
    sw.batch_size = w.has_batch_size() ? w.batch_size() : 1;
    if (sw.batch_size < 1 || sw.batch_size > 100'000) {
      return Bad("inference.workload.batch_size", sw.batch_size, "must be between 1 and 100000");
    }
    ew->set_batch_size(sw.batch_size);
  }
  if (kind == "trace") {
    if (w.has_prompt_length() || w.has_output_length()) {
      return absl::InvalidArgumentError(
          "inference.workload.prompt_length and output_length do not apply to kind \"trace\" "
          "(the trace gives every request's lengths); remove them");
    }
    if (w.has_lengths_file()) {
      return absl::InvalidArgumentError(
          "inference.workload.lengths_file does not apply to kind \"trace\" (the trace gives "
          "every request's lengths); remove it");
    }
    if (w.has_output_tokens_mean()) {
      return absl::InvalidArgumentError(
          "inference.workload.output_tokens_mean does not apply to kind \"trace\" (the trace "
          "gives every request's lengths); remove it");
    }
  } else if (w.has_lengths_file()) {
    if (w.has_prompt_length() || w.has_output_length()) {
      return absl::InvalidArgumentError(
          "inference.workload.prompt_length and output_length do not apply with lengths_file "
          "(its samples give every request's lengths); remove them");
    }
    absl::StatusOr<std::vector<strategies::LengthSample>> samples =
        strategies::ReadLengthSamples(w.lengths_file(), "inference.workload.lengths_file");
    if (!samples.ok()) return samples.status();
    if (w.has_output_tokens_mean()) {
      const double mean = w.output_tokens_mean();
      if (!(mean > 0 && mean <= 1e7)) {
        return Bad("inference.workload.output_tokens_mean", mean,
                   "must be in (0, 1e7]: the mean output tokens per request; remove it to keep "
                   "the lengths file's outputs");
      }
      strategies::ScaleOutputLengths(mean, *samples);
      ew->set_output_tokens_mean(mean);
    }
    int64_t prompt = 0, output = 0;
    for (const strategies::LengthSample& x : *samples) {
      prompt = std::max(prompt, x.prompt_tokens);
      output = std::max(output, x.output_tokens);
    }
    // The longest sample sizes memory and the default token budget.
    sw.prompt = {.kind = strategies::LengthSpec::Kind::kFixed, .value = prompt};
    sw.output = {.kind = strategies::LengthSpec::Kind::kFixed, .value = output};
    sw.samples = *std::move(samples);
    ew->set_lengths_file(w.lengths_file());
  } else if (w.has_output_tokens_mean()) {
    return absl::InvalidArgumentError(
        "inference.workload.output_tokens_mean scales a lengths_file's outputs; set "
        "inference.workload.lengths_file or use output_length instead");
  } else {
    absl::StatusOr<LengthSpec> prompt = ResolveLength(
        w.prompt_length(), 1024, "inference.workload.prompt_length", ew->mutable_prompt_length());
    if (!prompt.ok()) return prompt.status();
    absl::StatusOr<LengthSpec> output = ResolveLength(
        w.output_length(), 128, "inference.workload.output_length", ew->mutable_output_length());
    if (!output.ok()) return output.status();
    sw.prompt = *prompt;
    sw.output = *output;
  }
  return absl::OkStatus();
}

}  // namespace clustersim::scenarios::serve_resolve_internal
