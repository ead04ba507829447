// File: scenarios/accuracy/serving_mode_apply.cc
//
// Writes a serving row's mapping (serving_modes.h) into its scenario: the
// workload kind and size, request lengths, latency limits, speculative
// decoding, expert parallelism, disaggregated pools and the engine's limits,
// trtllm-bench's own where the row runs under it (with the tool's scheduler
// policy, KV share, chunking and CUDA graph sizes).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "models/gpu_catalog.h"
#include "scenarios/accuracy/serving_modes.h"
#include "scenarios/accuracy/trtllm_bench_settings.h"

namespace clustersim::scenarios {

absl::Status ApplyServingMode(const ServingModeMapping& m, const sim::CsvTable& t,
                              const sim::CsvTable::Row& row, config::Scenario* s,
                              std::vector<std::string>* assumptions) {
  config::InferenceConfig* inf = s->mutable_inference();
  config::InferenceWorkload* wl = inf->mutable_workload();
  if (m.workload_kind == "offline" || m.workload_kind == "server" ||
      m.workload_kind == "concurrency") {
    wl->clear_batch_size();
    wl->set_kind(m.workload_kind);
    wl->set_num_requests(m.num_requests);
  }
  if (m.workload_kind == "concurrency") wl->set_concurrency(m.concurrency);
  if (m.duration_s > 0) wl->set_duration_s(m.duration_s);
  if (!m.lengths_file.empty()) {
    wl->clear_prompt_length();
    wl->clear_output_length();
    wl->set_lengths_file(m.lengths_file);
    if (m.output_tokens_mean > 0) wl->set_output_tokens_mean(m.output_tokens_mean);
  }
  if (m.warmup_requests > 0) wl->set_warmup_requests(m.warmup_requests);
  if (m.ttft_limit_ms > 0) inf->set_target_time_to_first_token_ms(m.ttft_limit_ms);
  if (m.tpot_limit_ms > 0) inf->set_target_time_per_output_token_ms(m.tpot_limit_ms);
  if (!m.spec_method.empty()) {
    config::SpeculativeConfig* spec = inf->mutable_speculative();
    spec->set_method(m.spec_method);
    spec->set_num_speculative_tokens(m.spec_tokens);
    spec->set_acceptance_rate(m.spec_acceptance_rate);
  }
  if (!m.frontend.empty()) inf->mutable_frontend()->set_name(m.frontend);
  if (m.expert_parallel > 1) inf->set_expert_parallel_size(m.expert_parallel);
  for (int size : m.cuda_graph_batch_sizes) inf->add_cuda_graph_batch_sizes(size);
  if (m.max_batch_size > 0) inf->set_max_batch_size(m.max_batch_size);
  if (m.max_tokens_per_step > 0) inf->set_max_tokens_per_step(m.max_tokens_per_step);
  if (m.chunked_prefill) inf->set_chunked_prefill(true);
  if (m.prefill_gpus > 0) {
    config::DisaggregatedConfig* d = inf->mutable_disaggregated();
    d->mutable_prefill()->set_num_gpus(m.prefill_gpus);
    d->mutable_prefill()->set_tensor_parallel_size(m.disagg_tp);
    d->mutable_decode()->set_num_gpus(m.decode_gpus);
    d->mutable_decode()->set_tensor_parallel_size(m.disagg_tp);
    s->mutable_cluster()->set_num_gpus(m.prefill_gpus + m.decode_gpus);
    // Each pool carries its own parallelism; the colocated fields stay unset.
    inf->clear_tensor_parallel_size();
    inf->clear_pipeline_parallel_size();
  }
  if (m.trtllm_engine_defaults) {
    inf->set_max_batch_size(kTrtllmEngineMaxBatch);
    inf->set_max_tokens_per_step(kTrtllmEngineMaxTokens);
    inf->set_chunked_prefill(true);
  }
  if (m.trtllm_pytorch_runtime) {
    // The Python executor's per-sequence work, overlapped with the GPUs'.
    inf->set_host_overhead_us_per_sequence(kTrtllmPytorchHostUsPerSequence);
    inf->set_host_overlapped(true);
    // An iteration that cannot replay a captured graph dispatches its kernels
    // one by one.
    if (inf->cuda_graph_batch_sizes_size() > 0) {
      inf->set_eager_dispatch_us_per_kernel(kTrtllmPytorchEagerUsPerKernel);
    }
  }
  // Limits the row states replace the ones trtllm-bench would pick.
  if (!m.trtllm_bench || m.max_batch_size > 0) return absl::OkStatus();
  // trtllm-bench's own batch and token limits for this model, mapping and
  // lengths, from the row's architecture columns (an MoE row's scenario
  // takes its catalog preset) and the scenario's formats.
  absl::StatusOr<const models::GpuSpec*> gpu =
      models::GpuCatalog::Default().Find(s->cluster().gpu());
  if (!gpu.ok()) return gpu.status();
  double params_b = 0;
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0;
  if (!absl::SimpleAtod(t.Get(row, "params_b"), &params_b) || !(params_b > 0) ||
      !absl::SimpleAtoi(t.Get(row, "layers"), &layers) ||
      !absl::SimpleAtoi(t.Get(row, "hidden"), &hidden) ||
      !absl::SimpleAtoi(t.Get(row, "heads"), &heads) || heads < 1 ||
      !absl::SimpleAtoi(t.Get(row, "kv_heads"), &kv_heads)) {
    return absl::InvalidArgumentError(
        "trtllm-bench limits need the row's params_b, layers, hidden, heads and kv_heads");
  }
  const std::string kv_dtype =
      inf->has_kv_cache_dtype() ? inf->kv_cache_dtype() : std::string("bf16");
  TrtllmBenchModel tm{.params = params_b * 1e9,
                      .layers = layers,
                      .kv_heads = kv_heads,
                      .head_size = hidden / heads,
                      .tp = inf->tensor_parallel_size(),
                      .pp = std::max(1, inf->pipeline_parallel_size()),
                      .input_len = wl->prompt_length().value(),
                      .output_len = wl->output_length().value(),
                      .weight_bytes = inf->weight_dtype() == "fp8"     ? 1.0
                                      : inf->weight_dtype() == "nvfp4" ? 0.5
                                                                       : 2.0,
                      .kv_bytes = kv_dtype == "fp8" ? 1.0 : 2.0,
                      .device_memory_gib = (*gpu)->memory.ToGiB()};
  absl::StatusOr<TrtllmBenchLimits> limits = TrtllmBenchSettings(tm);
  if (!limits.ok()) return limits.status();
  // The PyTorch flow runs without chunked prefill (the tool's default):
  // whole prompts join the decode steps within a token limit raised to hold
  // them. The engine flow is simulated with its context chunked into the
  // engine's token limit.
  const bool pytorch = m.trtllm_bench_pytorch;
  const int max_tokens = pytorch ? TrtllmBenchUnchunkedMaxTokens(*limits, tm.input_len)
                                 : limits->max_num_tokens;
  // Under data-parallel attention the limits are each rank's (TensorRT-LLM
  // schedules every attention rank alone): the replica's are ep times them.
  const int ranks = std::max(1, m.expert_parallel);
  inf->set_max_batch_size(limits->max_batch_size * ranks);
  inf->set_max_tokens_per_step(max_tokens * ranks);
  inf->set_chunked_prefill(!pytorch);
  if (pytorch) inf->set_mixed_whole_prompts(true);
  // The tool's default scheduler policy, GUARANTEED_NO_EVICT, and its KV
  // accounting: a fraction of the memory left after the weights and a step's
  // activations (the same fraction its limits assume).
  inf->set_reserve_whole_request(true);
  inf->set_kv_cache_free_memory_fraction(tm.kv_fraction);
  // The engine flow's executor tunes its batch limit to the KV capacity
  // (ExecutorSettingsConfig.dynamic_max_batch_size, strategies/serving_dynamic_batch.h).
  if (!pytorch) inf->set_dynamic_batch_size_tuning(true);
  std::string graphs;
  if (!m.cuda_graph_batch_sizes.empty()) {
    const std::vector<int> kept = CapturedCudaGraphBatchSizes(
        m.cuda_graph_batch_sizes, limits->max_batch_size, max_tokens, /*padding=*/true);
    inf->clear_cuda_graph_batch_sizes();
    for (int size : kept) inf->add_cuda_graph_batch_sizes(size);
    if (kept.empty()) inf->clear_eager_dispatch_us_per_kernel();
    graphs = absl::StrFormat("; CUDA graphs captured up to batch %d", kept.empty() ? 0 : kept.back());
  }
  assumptions->push_back(absl::StrFormat(
      "trtllm-bench's own limits (bench/build/tuning.py): max batch %d, max tokens %d%s "
      "(KV for %.0f requests of ISL+OSL at 0.95 of free memory%s); KV cache 0.95 of the memory "
      "left after weights and activations; guaranteed-no-evict "
      "admission (KV of the whole request reserved); %s%s%s",
      limits->max_batch_size, max_tokens,
      ranks > 1 ? absl::StrFormat(" per attention rank (x%d)", ranks) : std::string(),
      limits->kv_cache_max_requests,
      max_tokens > limits->max_num_tokens
          ? absl::StrFormat("; tuned %d, raised to the prompt plus a batch", limits->max_num_tokens)
          : std::string(),
      pytorch ? "no chunked prefill: generation first, then whole prompts within the token limit"
              : "generation first, context chunked into the token budget",
      graphs,
      pytorch ? ""
              : "; dynamic batch size tuning (the executor caps the batch at its table's size "
                "for the KV capacity)"));
  return absl::OkStatus();
}

}  // namespace clustersim::scenarios
