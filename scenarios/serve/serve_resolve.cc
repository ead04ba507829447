#include "scenarios/serve/serve_resolve.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "models/engine_memory.h"
#include "models/fitted_constants.h"
#include "models/hf_quantization.h"
#include "models/power_model.h"
#include "models/serving_frontend.h"
#include "scenarios/input/resolve_cluster.h"
#include "scenarios/input/resolve_model.h"
#include "scenarios/serve/serve_resolve_internal.h"
#include "scenarios/serve/serve_speculative.h"
#include "sim/status_macros.h"
#include "strategies/serving_moe.h"

namespace clustersim::scenarios {
namespace {

using serve_resolve_internal::Bad;
using serve_resolve_internal::kMaxTokens;

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

  // Formats: unset, the checkpoint's own when its config.json states one
  // (models/hf_quantization.h), else bf16.
  std::string weight_dtype = inf.has_weight_dtype() ? inf.weight_dtype() : "";
  if (weight_dtype.empty() && in.model().has_model_config_file()) {
    absl::StatusOr<std::string> stated =
        models::LoadHfCheckpointWeightDtype(in.model().model_config_file());
    if (!stated.ok()) {
      return absl::Status(stated.status().code(),
                          absl::StrCat("model.model_config_file: ", stated.status().message()));
    }
    weight_dtype = *stated;
  }
  if (weight_dtype.empty()) weight_dtype = "bf16";
  absl::StatusOr<models::WeightFormat> wf =
      models::ParseWeightFormat(weight_dtype, "inference.weight_dtype");
  if (!wf.ok()) return wf.status();
  rep.weight_format = *wf;
  CLUSTERSIM_RETURN_IF_ERROR(models::CheckWeightFormatFitsModel(rep));
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

  // Workload (serve_workload_resolve.cc).
  CLUSTERSIM_RETURN_IF_ERROR(serve_resolve_internal::ResolveServeWorkload(
      inf.workload(), ei->mutable_workload(), &r.mode, &r.workload));
  const std::string kind = r.mode.kind;
  const strategies::ServingWorkload& sw = r.workload;
  CLUSTERSIM_RETURN_IF_ERROR(ResolveServeModeOptions(inf, ei, &r.mode));

  // Scheduler and memory.
  strategies::SchedulerConfig& sc = r.scheduler;
  sc.chunked_prefill = inf.chunked_prefill();
  sc.attention_dp_ranks = std::max(1, rep.expert_parallel);
  sc.mixed_whole_prompts = inf.mixed_whole_prompts();
  if (inf.mixed_whole_prompts()) ei->set_mixed_whole_prompts(true);
  sc.reserve_whole_request = inf.reserve_whole_request();
  if (inf.reserve_whole_request()) ei->set_reserve_whole_request(true);
  r.dynamic_batch_size_tuning = inf.dynamic_batch_size_tuning();
  if (inf.dynamic_batch_size_tuning()) ei->set_dynamic_batch_size_tuning(true);
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
  absl::StatusOr<models::KvCacheAccounting> accounting =
      models::ParseKvCacheAccounting(inf.kv_cache_accounting());
  if (!accounting.ok()) return accounting.status();
  r.memory.accounting = *accounting;
  if (r.memory.accounting != models::KvCacheAccounting::kBudget &&
      inf.has_kv_cache_free_memory_fraction()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inference.kv_cache_accounting='", inf.kv_cache_accounting(),
        "' and inference.kv_cache_free_memory_fraction (TensorRT-LLM's accounting) both "
        "size the KV cache; keep one"));
  }
  // vLLM V1 profiles and schedules with `vllm serve`'s limits for the GPU.
  const bool vllm_v1 = r.memory.accounting == models::KvCacheAccounting::kVllmV1;
  const models::VllmBatchDefaults vllm = models::VllmServeDefaults(*r.gpu);
  sc.max_batch_size = inf.has_max_batch_size()
                          ? inf.max_batch_size()
                          : std::max(vllm_v1 ? vllm.max_num_seqs : 256,
                                     sw.poisson ? 0 : sw.batch_size);
  if (sc.max_batch_size < 1 || sc.max_batch_size > 100'000) {
    return Bad("inference.max_batch_size", sc.max_batch_size, "must be between 1 and 100000");
  }
  sc.max_tokens_per_step = inf.has_max_tokens_per_step()
                               ? inf.max_tokens_per_step()
                               : (sc.chunked_prefill
                                      ? (vllm_v1 ? vllm.max_num_batched_tokens : 2048)
                                      : std::max<int64_t>(
                                            vllm_v1 ? vllm.max_num_batched_tokens : 2048,
                                            longest));
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
  r.memory.memory_utilization =
      inf.has_memory_utilization() ? inf.memory_utilization()
      : r.memory.accounting == models::KvCacheAccounting::kSglang
          ? models::SglangDefaultMemFractionStatic(rep.tensor_parallel)
          : 0.9;
  if (!(r.memory.memory_utilization > 0 && r.memory.memory_utilization <= 1)) {
    return Bad("inference.memory_utilization", r.memory.memory_utilization, "must be in (0, 1]");
  }
  ei->set_max_batch_size(sc.max_batch_size);
  ei->set_max_tokens_per_step(static_cast<int32_t>(sc.max_tokens_per_step));
  ei->set_chunked_prefill(sc.chunked_prefill);
  ei->set_kv_block_size(sc.kv_block_size);
  ei->set_memory_utilization(r.memory.memory_utilization);
  if (r.memory.accounting != models::KvCacheAccounting::kBudget) {
    ei->set_kv_cache_accounting(std::string(models::KvCacheAccountingName(r.memory.accounting)));
  }
  if (inf.has_kv_cache_free_memory_fraction()) {
    r.memory.kv_free_memory_fraction = inf.kv_cache_free_memory_fraction();
    if (!(r.memory.kv_free_memory_fraction > 0 && r.memory.kv_free_memory_fraction <= 1)) {
      return Bad("inference.kv_cache_free_memory_fraction", r.memory.kv_free_memory_fraction,
                 "must be in (0, 1]");
    }
    ei->set_kv_cache_free_memory_fraction(r.memory.kv_free_memory_fraction);
  }
  const double host_us = inf.has_host_overhead_us_per_iteration()
                             ? inf.host_overhead_us_per_iteration()
                             : models::Fitted().serving_host_us_per_iteration;
  if (!(host_us >= 0 && host_us <= 1e7)) {
    return Bad("inference.host_overhead_us_per_iteration", host_us,
               "must be between 0 and 10000000 microseconds (0: a fully overlapped host)");
  }
  r.host_per_iteration = sim::Duration::FromSecondsDouble(host_us * 1e-6);
  ei->set_host_overhead_us_per_iteration(host_us);
  const double host_seq_us = inf.host_overhead_us_per_sequence();
  if (!(host_seq_us >= 0 && host_seq_us <= 1e6)) {
    return Bad("inference.host_overhead_us_per_sequence", host_seq_us,
               "must be between 0 and 1000000 microseconds");
  }
  r.host_per_sequence = sim::Duration::FromSecondsDouble(host_seq_us * 1e-6);
  r.host_overlapped = inf.host_overlapped();
  if (host_seq_us > 0) ei->set_host_overhead_us_per_sequence(host_seq_us);
  if (r.host_overlapped) ei->set_host_overlapped(true);
  const double eager_us = inf.eager_dispatch_us_per_kernel();
  if (!(eager_us >= 0 && eager_us <= 1e4)) {
    return Bad("inference.eager_dispatch_us_per_kernel", eager_us,
               "must be between 0 and 10000 microseconds (0: eager iterations cost what graph "
               "replays do)");
  }
  if (eager_us > 0 && sc.cuda_graph_batch_sizes.empty()) {
    return absl::InvalidArgumentError(
        "inference.eager_dispatch_us_per_kernel needs inference.cuda_graph_batch_sizes: "
        "an iteration runs eagerly only when it cannot replay a captured graph; list the "
        "captured sizes or set it to 0");
  }
  r.eager_dispatch_per_kernel = sim::Duration::FromSecondsDouble(eager_us * 1e-6);
  if (eager_us > 0) ei->set_eager_dispatch_us_per_kernel(eager_us);
  // The request path outside the engine (models/data/serving_frontends.textproto).
  const config::ServingFrontendConfig& fc = inf.frontend();
  const std::string frontend_name = fc.has_name() ? fc.name() : std::string("none");
  absl::StatusOr<const models::ServingFrontend*> frontend =
      models::FindServingFrontend(frontend_name);
  if (!frontend.ok()) return frontend.status();
  const double frontend_ms =
      fc.has_request_overhead_ms() ? fc.request_overhead_ms() : (*frontend)->request_overhead_ms;
  if (!(frontend_ms >= 0 && frontend_ms <= 1e6)) {
    return Bad("inference.frontend.request_overhead_ms", frontend_ms,
               "must be between 0 and 1000000 ms (0: no time outside the engine)");
  }
  sc.frontend_delay = sim::Duration::FromSecondsDouble(frontend_ms * 1e-3);
  if (inf.has_frontend()) {
    ei->mutable_frontend()->set_name(frontend_name);
    ei->mutable_frontend()->set_request_overhead_ms(frontend_ms);
  }
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

models::KernelModelParams ServingKernelParams(const models::GpuSpec& gpu) {
  models::KernelModelParams params;
  models::PowerModel::Default().SetSustainedGemmRatios(gpu, &params);
  return params;
}

}  // namespace clustersim::scenarios
