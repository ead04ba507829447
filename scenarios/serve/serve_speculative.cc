#include "scenarios/serve/serve_speculative.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "scenarios/input/resolve_model.h"
#include "scenarios/serve/serve_runner.h"
#include "strategies/serving_speculative.h"

namespace clustersim::scenarios {
namespace {

using strategies::SpeculativeMethod;

constexpr char kField[] = "inference.speculative";

// The draft model's architecture, errors renamed to its field.
absl::Status ResolveDraft(const config::DraftModelConfig& in, const models::ReplicaModel& target,
                          models::TransformerConfig* out) {
  config::ModelConfig model;  // same field numbers: a byte-for-byte conversion
  if (!model.ParseFromString(in.SerializeAsString())) {
    return absl::InternalError("DraftModelConfig does not convert to ModelConfig");
  }
  if (absl::Status s = ResolveModel(model, out); !s.ok()) {
    const std::string field = absl::StrCat(kField, ".draft_model.");
    return absl::InvalidArgumentError(
        absl::StrReplaceAll(std::string(s.message()), {{"model.", field}}));
  }
  if (out->name == "custom") out->name = "draft";
  if (out->vocab_size != target.model.vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        kField, ".draft_model.vocab_size=", out->vocab_size,
        " differs from model.vocab_size=", target.model.vocab_size, " (", target.model.name,
        "); a draft model must share the target's tokenizer: use a smaller model of the same "
        "family, or method \"eagle\" / \"mtp\""));
  }
  const int tp = target.tensor_parallel;
  if (out->num_attention_heads % tp != 0 || out->ffn_hidden_size % tp != 0 ||
      out->vocab_size % tp != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kField, ".draft_model (", out->name, ") has ", out->num_attention_heads,
                     " attention heads and ffn_hidden_size ", out->ffn_hidden_size,
                     ", which inference.tensor_parallel_size=", tp,
                     " does not divide; pick a draft model it divides or a smaller tp"));
  }
  return absl::OkStatus();
}

double Ratio(double a, double b) { return b > 0 ? a / b : 0; }

}  // namespace

absl::Status ResolveSpeculative(const config::Scenario& in, ResolvedServe* r) {
  if (!in.inference().has_speculative()) return absl::OkStatus();
  const config::SpeculativeConfig& sp = in.inference().speculative();
  config::SpeculativeConfig* echo = r->echo.mutable_inference()->mutable_speculative();
  strategies::SpeculativeSpec spec;
  const std::string method =
      sp.has_method() ? sp.method() : (sp.has_draft_model() ? "draft" : "eagle");
  absl::StatusOr<SpeculativeMethod> m = strategies::ParseSpeculativeMethod(method);
  if (!m.ok()) return m.status();
  spec.method = *m;
  spec.num_tokens = sp.has_num_speculative_tokens() ? sp.num_speculative_tokens() : 4;
  if (spec.num_tokens < 1 || spec.num_tokens > 16) {
    return absl::InvalidArgumentError(absl::StrCat(kField,
                                                   ".num_speculative_tokens=", spec.num_tokens,
                                                   " must be between 1 and 16; e.g. 3 to 5"));
  }
  if (!sp.has_acceptance_rate()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kField,
                     ".acceptance_rate is required: the per-token acceptance probability of the "
                     "drafter on this data, e.g. 0.7"));
  }
  spec.acceptance_rate = sp.acceptance_rate();
  if (!(spec.acceptance_rate >= 0 && spec.acceptance_rate <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat(kField, ".acceptance_rate=", spec.acceptance_rate,
                     " must be in [0, 1]; it is the probability that one drafted token is "
                     "accepted, e.g. 0.7"));
  }
  spec.seed = sp.has_seed() ? sp.seed() : r->workload.seed;
  const models::ReplicaModel& target = r->memory.replica;
  if (target.pipeline_parallel != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(kField, " needs inference.pipeline_parallel_size=1 (got ",
                     target.pipeline_parallel, "); use tensor parallelism, or remove ", kField));
  }
  if (spec.method == SpeculativeMethod::kDraft) {
    if (!sp.has_draft_model()) {
      return absl::InvalidArgumentError(
          absl::StrCat(kField, ".draft_model is required for method \"draft\"; e.g. ",
                       "draft_model { preset: \"llama2-7b\" } or an inline architecture"));
    }
    if (absl::Status s = ResolveDraft(sp.draft_model(), target, &spec.draft); !s.ok()) return s;
    *echo->mutable_draft_model() = sp.draft_model();
  } else if (sp.has_draft_model()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kField, ".draft_model is used only by method \"draft\"; remove it or set ",
                     kField, ".method=\"draft\""));
  }
  echo->set_method(method);
  echo->set_num_speculative_tokens(spec.num_tokens);
  echo->set_acceptance_rate(spec.acceptance_rate);
  echo->set_seed(spec.seed);

  const strategies::DrafterMemory drafter = strategies::EstimateDrafterMemory(spec, target);
  r->memory.drafter_weights = drafter.weights;
  r->memory.drafter_kv_bytes_per_token = drafter.kv_bytes_per_token;
  r->scheduler.speculative_tokens = spec.num_tokens;
  r->scheduler.acceptance_rate = spec.acceptance_rate;
  r->scheduler.speculative_seed = spec.seed;
  r->speculative = spec;
  return absl::OkStatus();
}

absl::Status ReportSpeculative(const ResolvedServe& s, const strategies::ServingRun& run,
                               config::ServeResult* result) {
  const strategies::SpeculativeSpec& spec = *s.speculative;
  config::ServeSpeculative* out = result->mutable_speculative();
  out->set_method(std::string(strategies::SpeculativeMethodName(spec.method)));
  if (spec.method == SpeculativeMethod::kDraft) out->set_draft_model(spec.draft.name);
  out->set_num_speculative_tokens(spec.num_tokens);
  out->set_acceptance_rate(spec.acceptance_rate);
  out->set_expected_accepted_tokens_per_step(
      strategies::ExpectedAcceptedTokens(spec.acceptance_rate, spec.num_tokens));
  out->set_mean_accepted_tokens_per_step(
      Ratio(static_cast<double>(run.decode_tokens), static_cast<double>(run.decode_steps)));
  out->set_drafter_weights_gib(s.memory.drafter_weights.ToGiB());
  out->set_drafter_kv_bytes_per_token(s.memory.drafter_kv_bytes_per_token.count());

  // The same requests without speculation: the drafter's memory goes back to
  // the KV cache; no targets or curve (only the figures compared here).
  ResolvedServe plain = s;
  plain.speculative.reset();
  plain.memory.drafter_weights = sim::Bytes(0);
  plain.memory.drafter_kv_bytes_per_token = sim::Bytes(0);
  plain.scheduler.speculative_tokens = 0;
  plain.target_tpot_ms = 0;
  plain.target_ttft_ms = 0;
  ServeOptions options;
  options.curve = false;
  absl::StatusOr<config::ServeResult> base = RunServe(plain, options);
  if (!base.ok()) return base.status();
  out->set_tpot_p50_ms_without(base->tpot_ms().p50());
  out->set_tpot_speedup(Ratio(base->tpot_ms().p50(), result->tpot_ms().p50()));
  out->set_e2e_p50_ms_without(base->e2e_ms().p50());
  out->set_e2e_speedup(Ratio(base->e2e_ms().p50(), result->e2e_ms().p50()));
  out->set_capacity_output_tokens_per_s_without(base->capacity_output_tokens_per_s());
  out->set_capacity_speedup(
      Ratio(result->capacity_output_tokens_per_s(), base->capacity_output_tokens_per_s()));
  out->set_assumptions(absl::StrCat(
      "chain of k drafted tokens, each accepted with probability alpha until the first "
      "rejection (Leviathan et al. 2023); ",
      spec.method == SpeculativeMethod::kDraft
          ? "the draft model runs k decode steps per iteration and prefills the prompts, on "
            "the target's GPUs at its tp and formats"
          : "the head is one target-shaped layer plus a 2h x h projection, run k times per "
            "iteration with the target's embedding and LM head",
      "; the host time is paid once per iteration"));
  return absl::OkStatus();
}

}  // namespace clustersim::scenarios
