#include "scenarios/serve/serve_resolve.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "models/fitted_constants.h"
#include "scenarios/input/resolve_cluster.h"
#include "scenarios/input/resolve_model.h"
#include "scenarios/serve/serve_speculative.h"
#include "sim/status_macros.h"
#include "strategies/serving_length_samples.h"
#include "strategies/serving_moe.h"

namespace clustersim::scenarios {
namespace {

using strategies::LengthSpec;

// Longer requests than this are a typo, not a workload (and keep token
// arithmetic far from overflow).
constexpr int64_t kMaxTokens = 10'000'000;

absl::Status Bad(std::string_view field, const auto& value, std::string_view rule) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(field), "=", value, " ", std::string(rule)));
}

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

models::Dtype DefaultKvDtype(models::WeightFormat f) {
  switch (f) {
    case models::WeightFormat::kFp16:
    case models::WeightFormat::kInt4Gptq:
    case models::WeightFormat::kInt4Awq:
      return models::Dtype::kFp16;
    default:
      return models::Dtype::kBf16;
  }
}

}  // namespace

bool TensorParallelSplits(const models::TransformerConfig& m, int tp) {
  return m.num_attention_heads % tp == 0 && m.ffn_hidden_size % tp == 0;
}

absl::StatusOr<ResolvedServe> ResolveServe(const config::Scenario& in) {
  ResolvedServe r;
  models::ReplicaModel& rep = r.memory.replica;
  r.name = in.name().empty() ? "serve" : in.name();
  const config::InferenceConfig& inf = in.inference();
  config::Scenario& e = r.echo;
  e.set_name(r.name);
  if (!in.description().empty()) e.set_description(in.description());
  config::InferenceConfig* ei = e.mutable_inference();

  // Parallelism first: the default GPU count depends on it.
  rep.tensor_parallel = inf.has_tensor_parallel_size() ? inf.tensor_parallel_size() : 1;
  rep.pipeline_parallel = inf.has_pipeline_parallel_size() ? inf.pipeline_parallel_size() : 1;
  if (rep.tensor_parallel < 1 || rep.tensor_parallel > 1024) {
    return Bad("inference.tensor_parallel_size", rep.tensor_parallel, "must be between 1 and 1024");
  }
  if (rep.pipeline_parallel < 1 || rep.pipeline_parallel > 1024) {
    return Bad("inference.pipeline_parallel_size", rep.pipeline_parallel,
               "must be between 1 and 1024");
  }
  const int per_replica = rep.tensor_parallel * rep.pipeline_parallel;

  // Cluster.
  config::ClusterConfig cluster = in.cluster();
  if (!cluster.has_num_gpus()) cluster.set_num_gpus(per_replica);
  if (cluster.has_gpu() && !cluster.has_node() && !cluster.has_custom_node()) {
    absl::StatusOr<const models::GpuSpec*> gpu = models::GpuCatalog::Default().Find(cluster.gpu());
    if (gpu.ok() && !DefaultNodeFor(**gpu).ok()) {
      config::CustomNodeConfig* n = cluster.mutable_custom_node();
      n->set_gpus_per_node(cluster.num_gpus());
      n->set_pcie("pcie4-x16");
      cluster.clear_gpus_per_node();
    }
  }
  absl::StatusOr<ResolvedCluster> c = ResolveCluster(cluster);
  if (!c.ok()) return c.status();
  if (c->power_cap_w > 0) {
    // Refused rather than ignored: the serving cost model runs at the board limit.
    return absl::InvalidArgumentError(
        "cluster.power_cap_w: serve does not model a power cap (run does); remove it");
  }
  r.gpu = c->gpu;
  r.cluster = c->spec;
  r.num_gpus = c->num_gpus;
  r.gpus_per_node = c->gpus_per_node;
  if (r.num_gpus % per_replica != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster.num_gpus=", r.num_gpus, " is not a multiple of inference.tensor_parallel_size x ",
        "pipeline_parallel_size = ", per_replica, "; use ", per_replica, " or a multiple"));
  }
  r.replicas = r.num_gpus / per_replica;
  EchoCluster(*c, e.mutable_cluster());

  // Model.
  CLUSTERSIM_RETURN_IF_ERROR(ResolveModel(in.model(), &rep.model));
  EchoModel(rep.model, e.mutable_model());
  if (in.model().has_preset()) e.mutable_model()->set_preset(in.model().preset());
  if (!TensorParallelSplits(rep.model, rep.tensor_parallel)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inference.tensor_parallel_size=", rep.tensor_parallel,
        " must divide model.num_attention_heads=", rep.model.num_attention_heads,
        " and model.ffn_hidden_size=", rep.model.ffn_hidden_size, "; try 1, 2, 4 or 8"));
  }
  if (rep.model.num_layers % rep.pipeline_parallel != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("inference.pipeline_parallel_size=", rep.pipeline_parallel,
                     " must divide model.num_layers=", rep.model.num_layers));
  }
  ei->set_tensor_parallel_size(rep.tensor_parallel);
  ei->set_pipeline_parallel_size(rep.pipeline_parallel);
  if (inf.has_expert_parallel_size()) {
    rep.expert_parallel = inf.expert_parallel_size();
    CLUSTERSIM_RETURN_IF_ERROR(strategies::ValidateServingExpertParallel(rep));
    ei->set_expert_parallel_size(rep.expert_parallel);
  }

  // Formats.
  absl::StatusOr<models::WeightFormat> wf = models::ParseWeightFormat(
      inf.has_weight_dtype() ? inf.weight_dtype() : "bf16", "inference.weight_dtype");
  if (!wf.ok()) return wf.status();
  rep.weight_format = *wf;
  if (auto s =
          models::CheckWeightFormatSupported(*r.gpu, rep.weight_format, "inference.weight_dtype");
      !s.ok()) {
    return s;
  }
  // Default 128, or the largest of 64 and 32 that divides the hidden size
  // (gpt-oss: 2880 = 45 x 64).
  rep.quant_group_size = inf.has_quant_group_size()         ? inf.quant_group_size()
                         : rep.model.hidden_size % 128 == 0 ? 128
                         : rep.model.hidden_size % 64 == 0  ? 64
                                                            : 32;
  if (rep.quant_group_size < 1 || rep.model.hidden_size % rep.quant_group_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inference.quant_group_size=", rep.quant_group_size,
        " must divide model.hidden_size=", rep.model.hidden_size, "; use 32, 64 or 128"));
  }
  if (inf.has_kv_cache_dtype()) {
    absl::StatusOr<models::Dtype> kv =
        models::ParseKvCacheDtype(inf.kv_cache_dtype(), "inference.kv_cache_dtype");
    if (!kv.ok()) return kv.status();
    rep.kv_cache_dtype = *kv;
  } else {
    rep.kv_cache_dtype = DefaultKvDtype(rep.weight_format);
  }
  ei->set_weight_dtype(std::string(models::WeightFormatName(rep.weight_format)));
  ei->set_quant_group_size(rep.quant_group_size);
  ei->set_kv_cache_dtype(std::string(models::DtypeName(rep.kv_cache_dtype)));

  // Workload.
  const config::InferenceWorkload& w = inf.workload();
  config::InferenceWorkload* ew = ei->mutable_workload();
  const std::string kind =
      w.has_kind() ? w.kind() : (w.has_request_rate_per_s() ? "poisson" : "fixed-batch");
  if (kind != "poisson" && kind != "fixed-batch" && !IsBenchmarkMode(kind)) {
    return absl::InvalidArgumentError(
        absl::StrCat("inference.workload.kind=\"", kind,
                     "\" is not known; use poisson, fixed-batch, offline, server, concurrency "
                     "or trace"));
  }
  ew->set_kind(kind);
  r.mode.kind = kind;
  strategies::ServingWorkload& sw = r.workload;
  sw.poisson = kind == "poisson";
  sw.seed = w.seed();
  ew->set_seed(sw.seed);
  if (IsBenchmarkMode(kind)) {
    CLUSTERSIM_RETURN_IF_ERROR(ResolveBenchmarkWorkload(w, kind, ew, &r.mode, &sw));
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
  CLUSTERSIM_RETURN_IF_ERROR(ResolveServeModeOptions(inf, ei, &r.mode));

  // Scheduler and memory.
  strategies::SchedulerConfig& sc = r.scheduler;
  sc.chunked_prefill = inf.chunked_prefill();
  sc.attention_dp_ranks = std::max(1, rep.expert_parallel);
  sc.mixed_whole_prompts = inf.mixed_whole_prompts();
  if (inf.mixed_whole_prompts()) ei->set_mixed_whole_prompts(true);
  for (int i = 0; i < inf.cuda_graph_batch_sizes_size(); ++i) {
    const int size = inf.cuda_graph_batch_sizes(i);
    if (size < 1 || (i > 0 && size <= inf.cuda_graph_batch_sizes(i - 1))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "inference.cuda_graph_batch_sizes[", i, "]=", size,
          " must be >= 1 and above the one before; list the captured batches in ascending order"));
    }
    sc.cuda_graph_batch_sizes.push_back(size);
    ei->add_cuda_graph_batch_sizes(size);
  }
  if (inf.has_attention_dp_balance()) {
    const config::AttentionDpBalance& b = inf.attention_dp_balance();
    if (b.batching_wait_iters() < 0 || b.timeout_iters() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "inference.attention_dp_balance: batching_wait_iters=", b.batching_wait_iters(),
          " and timeout_iters=", b.timeout_iters(), " must be >= 0"));
    }
    if (rep.expert_parallel <= 1 || !inf.mixed_whole_prompts() || inf.chunked_prefill()) {
      return absl::InvalidArgumentError(
          "inference.attention_dp_balance needs expert_parallel_size > 1 and "
          "mixed_whole_prompts without chunked_prefill; remove it or set them");
    }
    sc.adp_balance = true;
    sc.adp_batching_wait_iters = b.batching_wait_iters();
    sc.adp_timeout_iters = b.timeout_iters();
    *ei->mutable_attention_dp_balance() = b;
  }
  const int64_t longest = sw.prompt.Longest() + sw.output.Longest();
  sc.max_batch_size = inf.has_max_batch_size() ? inf.max_batch_size()
                                               : std::max(256, sw.poisson ? 0 : sw.batch_size);
  if (sc.max_batch_size < 1 || sc.max_batch_size > 100'000) {
    return Bad("inference.max_batch_size", sc.max_batch_size, "must be between 1 and 100000");
  }
  sc.max_tokens_per_step = inf.has_max_tokens_per_step()
                               ? inf.max_tokens_per_step()
                               : (sc.chunked_prefill ? 2048 : std::max<int64_t>(2048, longest));
  if (sc.max_tokens_per_step < 1 || sc.max_tokens_per_step > kMaxTokens) {
    return Bad("inference.max_tokens_per_step", sc.max_tokens_per_step,
               "must be between 1 and 10000000");
  }
  if (!sc.chunked_prefill && sw.prompt.Longest() > sc.max_tokens_per_step) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inference.max_tokens_per_step=", sc.max_tokens_per_step, " is below the longest prompt (",
        sw.prompt.Longest(), " tokens); raise it or set inference.chunked_prefill"));
  }
  sc.kv_block_size = inf.has_kv_block_size() ? inf.kv_block_size() : 16;
  if (sc.kv_block_size < 1 || sc.kv_block_size > 4096) {
    return Bad("inference.kv_block_size", sc.kv_block_size, "must be between 1 and 4096 tokens");
  }
  r.memory.memory_utilization = inf.has_memory_utilization() ? inf.memory_utilization() : 0.9;
  if (!(r.memory.memory_utilization > 0 && r.memory.memory_utilization <= 1)) {
    return Bad("inference.memory_utilization", r.memory.memory_utilization, "must be in (0, 1]");
  }
  ei->set_max_batch_size(sc.max_batch_size);
  ei->set_max_tokens_per_step(static_cast<int32_t>(sc.max_tokens_per_step));
  ei->set_chunked_prefill(sc.chunked_prefill);
  ei->set_kv_block_size(sc.kv_block_size);
  ei->set_memory_utilization(r.memory.memory_utilization);
  const double host_us = inf.has_host_overhead_us_per_iteration()
                             ? inf.host_overhead_us_per_iteration()
                             : models::Fitted().serving_host_us_per_iteration;
  if (!(host_us >= 0 && host_us <= 1e7)) {
    return Bad("inference.host_overhead_us_per_iteration", host_us,
               "must be between 0 and 10000000 microseconds (0: a fully overlapped host)");
  }
  r.host_per_iteration = sim::Duration::FromSecondsDouble(host_us * 1e-6);
  ei->set_host_overhead_us_per_iteration(host_us);
  r.decode_attention_flops_per_sm_cycle =
      inf.has_decode_attention_flops_per_sm_cycle()
          ? inf.decode_attention_flops_per_sm_cycle()
          : models::Fitted().decode_attention_flops_per_sm_cycle;
  if (!(r.decode_attention_flops_per_sm_cycle >= 0 &&
        r.decode_attention_flops_per_sm_cycle <= 4096)) {
    return Bad("inference.decode_attention_flops_per_sm_cycle",
               r.decode_attention_flops_per_sm_cycle,
               "must be between 0 and 4096 FLOPs per SM per clock (0 turns the bound off)");
  }
  r.decode_attention_grouped_gqa =
      !inf.has_decode_attention_grouped_gqa() || inf.decode_attention_grouped_gqa();
  ei->set_decode_attention_flops_per_sm_cycle(r.decode_attention_flops_per_sm_cycle);
  ei->set_decode_attention_grouped_gqa(r.decode_attention_grouped_gqa);
  r.memory.kv_block_size = sc.kv_block_size;
  r.memory.max_batch_size = sc.max_batch_size;
  r.memory.max_tokens_per_step = static_cast<int>(sc.max_tokens_per_step);
  r.memory.sequence_length = longest;

  // Targets: explicit ones, else the MLPerf benchmark's limits.
  r.target_tpot_ms = r.mode.mlperf_tpot_ms;
  r.target_ttft_ms = r.mode.mlperf_ttft_ms;
  if (r.target_tpot_ms > 0) ei->set_target_time_per_output_token_ms(r.target_tpot_ms);
  if (r.target_ttft_ms > 0) ei->set_target_time_to_first_token_ms(r.target_ttft_ms);
  if (inf.has_target_time_per_output_token_ms()) {
    r.target_tpot_ms = inf.target_time_per_output_token_ms();
    if (!(r.target_tpot_ms > 0)) {
      return Bad("inference.target_time_per_output_token_ms", r.target_tpot_ms, "must be > 0");
    }
    ei->set_target_time_per_output_token_ms(r.target_tpot_ms);
  }
  if (inf.has_target_time_to_first_token_ms()) {
    r.target_ttft_ms = inf.target_time_to_first_token_ms();
    if (!(r.target_ttft_ms > 0)) {
      return Bad("inference.target_time_to_first_token_ms", r.target_ttft_ms, "must be > 0");
    }
    ei->set_target_time_to_first_token_ms(r.target_ttft_ms);
  }
  if (kind == "server" && r.target_tpot_ms <= 0 && r.target_ttft_ms <= 0) {
    return absl::InvalidArgumentError(
        "inference.workload.kind \"server\" needs a latency target: set "
        "inference.mlperf_benchmark (e.g. \"llama2-70b\") or "
        "target_time_to_first_token_ms / target_time_per_output_token_ms");
  }

  CLUSTERSIM_RETURN_IF_ERROR(ResolveSpeculative(in, &r));

  // Price.
  absl::StatusOr<ResolvedPricing> pricing = ResolvePricing(in.pricing(), *r.gpu, r.gpus_per_node);
  if (!pricing.ok()) return pricing.status();
  r.pricing = *std::move(pricing);
  EchoPricing(r.pricing, e.mutable_pricing());
  return r;
}

}  // namespace clustersim::scenarios
