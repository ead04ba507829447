#include "scenarios/accuracy/inference_runs.h"

#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "models/device_capability.h"
#include "models/gpu_catalog.h"
#include "models/quantization.h"
#include "scenarios/accuracy/inference_row_cells.h"
#include "scenarios/accuracy/inference_row_model.h"
#include "scenarios/accuracy/inferred_tp.h"
#include "scenarios/accuracy/serving_modes.h"

namespace clustersim::scenarios {
namespace {

constexpr std::string_view kMetrics[] = {"output_tokens_per_s_per_gpu",
                                         "output_tokens_per_s_total",
                                         "gen_tokens_per_s",
                                         "prompt_tokens_per_s",
                                         "ttft_ms",
                                         "tpot_ms",
                                         "e2e_latency_ms",
                                         "weights_gib_per_gpu",
                                         "kv_cache_tokens",
                                         "max_concurrency",
                                         "kv_bytes_per_token",
                                         "requests_per_s",
                                         "ttft_p99_ms",
                                         "output_tokens_per_s_per_user",
                                         "speedup_vs_no_spec"};

bool ParseInt(const std::string& s, int* out) { return absl::SimpleAtoi(s, out) && *out > 0; }

// True when `framework` (lower case) is NVIDIA's MLPerf Inference submission
// of round v4.1 or later ("tensorrt-llm (nvidia mlperf inference v5.0 closed
// submission)"). Those submissions build TensorRT-LLM from its GitHub main:
// closed/NVIDIA/Makefile.build pins TRTLLM_PUBLIC_HASH 2d234357 ("7/16/2024
// Github main") in mlcommons/inference_results_v4.1 @ a2f5d66 and 2ea17cda
// ("2/18/2025 GitHub release main") in mlcommons/inference_results_v5.0 @
// 823da2c, both after v0.8 (February 2024); later rounds later still.
bool MlperfTrtllmAfter08(const std::string& framework) {
  constexpr std::string_view kRound = "mlperf inference v";
  const size_t at = framework.find(kRound);
  if (at == std::string::npos || framework.find("tensorrt-llm") == std::string::npos) return false;
  int major = 0, minor = 0;
  const std::vector<std::string> parts =
      absl::StrSplit(framework.substr(at + kRound.size(), 3), '.');
  if (parts.size() < 2 || !absl::SimpleAtoi(parts[0], &major) ||
      !absl::SimpleAtoi(parts[1].substr(0, 1), &minor)) {
    return false;
  }
  return major > 4 || (major == 4 && minor >= 1);
}

// True when `framework` (lower case) names a TensorRT-LLM version after 0.8
// ("tensorrt-llm 0.14.0 ...") or an MLPerf submission known to build one
// (MlperfTrtllmAfter08); false without a version.
bool TrtllmAfter08(const std::string& framework) {
  if (MlperfTrtllmAfter08(framework)) return true;
  const size_t at = framework.find("tensorrt-llm");
  if (at == std::string::npos) return false;
  // The version follows the name: "tensorrt-llm 0.14.0", "tensorrt-llm ~v1.0".
  const size_t digit =
      framework.find_first_not_of(" ~v", at + std::string_view("tensorrt-llm").size());
  if (digit == std::string::npos || !absl::ascii_isdigit(framework[digit])) return false;
  const std::vector<std::string> parts = absl::StrSplit(
      framework.substr(digit, framework.find_first_not_of("0123456789.", digit) - digit), '.');
  int major = 0, minor = 0;
  if (parts.size() < 2 || !absl::SimpleAtoi(parts[0], &major) ||
      !absl::SimpleAtoi(parts[1], &minor)) {
    return false;
  }
  return major > 0 || minor > 8;
}

// The tp of a row that states its GPU count but not the split
// (inferred_tp.h), from its params_b column and served weight format.
absl::StatusOr<InferredTp> InferRowTp(const sim::CsvTable& t, const sim::CsvTable::Row& row,
                                      const DtypeMatch& weights, const models::GpuSpec& gpu,
                                      int num_devices) {
  double params_b = 0;
  if (!absl::SimpleAtod(t.Get(row, "params_b"), &params_b) || !(params_b > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tp not stated and params_b '", t.Get(row, "params_b"),
        "' is not a positive number to infer it from; state the row's tp or params_b"));
  }
  // Only int8's per-channel scales depend on the input features; a typical k.
  constexpr int64_t kScaleInputFeatures = 4096;
  absl::StatusOr<models::WeightFormat> format =
      models::ParseWeightFormat(weights.name, "weight_dtype");
  if (!format.ok()) return format.status();
  const double bits = models::BitsPerWeight(
      *format, weights.group_size > 0 ? weights.group_size : 128, kScaleInputFeatures);
  return InferServingTp({.params = params_b * 1e9,
                         .weight_bytes = bits / 8,
                         .device_memory_gib = gpu.memory.ToGiB(),
                         .num_devices = num_devices});
}

// Fills `run` from `row`; sets run->not_supported on the first reason it meets.
void MapRow(const sim::CsvTable& t, const sim::CsvTable::Row& row, InferenceRun* run) {
  auto fail = [run](std::string reason) { run->not_supported = std::move(reason); };
  run->metric = t.Get(row, "metric");
  run->unit = t.Get(row, "unit");
  run->device = t.Get(row, "device");
  if (!absl::SimpleAtod(t.Get(row, "value"), &run->measured)) {
    return fail(absl::StrCat("value '", t.Get(row, "value"), "' is not a number"));
  }
  // Tables with deployment columns (serving-deployed/runs.csv): the benchmark
  // mode decides the workload, or names the features the row waits for.
  ServingModeMapping mode;
  if (HasServingModeColumns(t)) {
    mode = MapServingMode(t, row);
    if (!mode.not_supported.empty()) return fail(mode.not_supported);
    run->assumptions.insert(run->assumptions.end(), mode.assumptions.begin(),
                            mode.assumptions.end());
  }
  if (!IsKnownServingMetric(run->metric)) {
    return fail(
        absl::StrCat("metric '", run->metric, "' is not one the serving simulator produces"));
  }
  const std::string model = t.Get(row, "model");
  config::Scenario s;
  s.set_name(run->id);
  s.set_description(absl::StrCat(model, " / ", t.Get(row, "framework")));
  config::ModelConfig* m = s.mutable_model();
  if (std::string reason = MapRowModel(t, row, m, &run->assumptions); !reason.empty()) {
    return fail(std::move(reason));
  }

  DeviceMatch device = MatchDevice(run->device, &run->assumptions);
  if (!device.reason.empty()) return fail(device.reason);
  const models::GpuSpec& gpu = **models::GpuCatalog::Default().Find(device.catalog);
  int num_devices = 0, tp = 0;
  const bool infer_tp = mode.infer_tp && t.Get(row, "tp").empty();
  if (!ParseInt(t.Get(row, "num_devices"), &num_devices) ||
      (!infer_tp && !ParseInt(t.Get(row, "tp"), &tp))) {
    return fail(absl::StrCat("num_devices '", t.Get(row, "num_devices"), "' / tp '",
                             t.Get(row, "tp"), "' are not positive counts"));
  }
  s.mutable_cluster()->set_gpu(device.catalog);
  s.mutable_cluster()->set_num_gpus(num_devices);

  config::InferenceConfig* inf = s.mutable_inference();
  inf->set_tensor_parallel_size(tp);
  inf->set_pipeline_parallel_size(1);
  DtypeMatch weights = MatchDtype(t.Get(row, "weight_dtype"), false, &run->assumptions);
  if (!weights.reason.empty()) return fail(weights.reason);
  DtypeMatch kv = MatchDtype(t.Get(row, "kv_dtype"), true, &run->assumptions);
  if (!kv.reason.empty()) return fail(kv.reason);
  absl::StatusOr<models::DtypeExecution> w = models::DeviceSupports(
      gpu, weights.name, models::ServingTensor::kWeights, "inference.weight_dtype");
  if (!w.ok()) return fail(std::string(w.status().message()));
  inf->set_weight_dtype(weights.name);
  if (weights.group_size > 0) inf->set_quant_group_size(weights.group_size);
  if (infer_tp) {
    absl::StatusOr<InferredTp> inferred = InferRowTp(t, row, weights, gpu, num_devices);
    if (!inferred.ok()) return fail(std::string(inferred.status().message()));
    inf->set_tensor_parallel_size(inferred->tp);
    run->assumptions.push_back(inferred->text);
    run->inferred_tp = true;
  }
  if (!kv.name.empty()) {
    absl::StatusOr<models::DtypeExecution> k = models::DeviceSupports(
        gpu, kv.name, models::ServingTensor::kKvCache, "inference.kv_cache_dtype");
    if (!k.ok()) return fail(std::string(k.status().message()));
    inf->set_kv_cache_dtype(kv.name);
  }

  // Rows with a data set's lengths file take every request's lengths from it.
  std::string reason;
  const bool sampled = !mode.lengths_file.empty();
  const int prompt = sampled ? 0
                             : MatchLength(t.Get(row, "input_len"), "prompt", run->metric, 1,
                                           &run->assumptions, &reason);
  if (!reason.empty()) return fail(reason);
  const int output = sampled ? 0
                             : MatchLength(t.Get(row, "output_len"), "output", run->metric, 128,
                                           &run->assumptions, &reason);
  if (!reason.empty()) return fail(reason);
  int batch = 1;
  const std::string batch_text = t.Get(row, "batch_or_concurrency");
  // Offline, server and closed-loop rows take their request counts from the
  // mode mapping; only fixed batches need the column.
  const bool needs_batch = mode.workload_kind.empty() || mode.workload_kind == "fixed-batch";
  if (batch_text.empty()) {
    if (needs_batch && !IsMemoryMetric(run->metric)) return fail("batch_or_concurrency not stated");
  } else if (!ParseInt(batch_text, &batch)) {
    return fail(absl::StrCat("batch_or_concurrency '", batch_text, "' is not a positive count"));
  }
  // Decode attention of GQA models: TensorRT-LLM up to v0.8 runs the
  // per-query-head masked MHA kernel unless XQA is switched on
  // (TRTLLM_ENABLE_XQA=1), which its v0.8 performance page does for Llama 2
  // 70B only (that model's reproduce commands); later versions turn XQA on by
  // default (docs/source/advanced/gpt-attention.md: "This is default enabled.
  // To disable this, you need to use the flag --disable_xqa"); other
  // frameworks' GQA kernels group the heads (the simulator's default).
  const std::string framework = Lower(t.Get(row, "framework"));
  const bool gqa = m->has_num_query_groups() && m->num_query_groups() < m->num_attention_heads();
  if (gqa && TrtllmAfter08(framework)) {
    run->assumptions.push_back(
        MlperfTrtllmAfter08(framework)
            ? "GQA decode with XQA (on by default after TensorRT-LLM 0.8; NVIDIA's MLPerf v4.1+ "
              "code builds TensorRT-LLM from its July 2024 or later main)"
            : "GQA decode with XQA (on by default after TensorRT-LLM 0.8)");
  } else if (gqa && absl::StrContains(framework, "tensorrt-llm")) {
    if (absl::StrContains(framework, "0.8") && absl::StrContains(Lower(model), "70b")) {
      run->assumptions.push_back(
          "GQA decode with XQA (TRTLLM_ENABLE_XQA=1 in the source's Llama 2 "
          "70B commands)");
    } else {
      inf->set_decode_attention_grouped_gqa(false);
      run->assumptions.push_back(
          "GQA decode by the per-query-head masked MHA kernel (TensorRT-LLM <= 0.8 without XQA)");
    }
  }
  KvAccountingMatch accounting =
      MatchKvAccounting(t.Get(row, "framework"), t.Get(row, "source"), &run->assumptions);
  if (!accounting.reason.empty()) return fail(accounting.reason);
  if (!accounting.accounting.empty()) inf->set_kv_cache_accounting(accounting.accounting);
  if (accounting.mem_fraction_static > 0) {
    inf->set_memory_utilization(accounting.mem_fraction_static);
  }
  if (!sampled) m->set_seq_length(prompt + output);
  config::InferenceWorkload* wl = inf->mutable_workload();
  if (mode.workload_kind == "poisson") {
    wl->set_kind("poisson");
    wl->set_request_rate_per_s(mode.request_rate);
    wl->set_num_requests(mode.num_requests);
  } else {
    wl->set_kind("fixed-batch");
    wl->set_batch_size(batch);
  }
  wl->mutable_prompt_length()->set_kind("fixed");
  wl->mutable_prompt_length()->set_value(prompt);
  wl->mutable_output_length()->set_kind("fixed");
  wl->mutable_output_length()->set_value(output);
  if (HasServingModeColumns(t)) {
    const absl::Status applied = ApplyServingMode(mode, t, row, &s, &run->assumptions);
    if (!applied.ok()) return fail(std::string(applied.message()));
  }
  run->scenario = std::move(s);
}

// ", batch 8", ", poisson 2.5/s x 500", ", offline x 3000" (", offline x >= 24576,
// 600 s" with a duration), ", 25 clients x 50",
// ", server at p99 TTFT <= 2000 ms, TPOT <= 200 ms, 600 s, >= 100", then the
// speculation and pools when set.
std::string WorkloadText(const config::InferenceConfig& inf) {
  const config::InferenceWorkload& wl = inf.workload();
  std::string out;
  if (wl.kind() == "poisson") {
    out = absl::StrCat(", poisson ", wl.request_rate_per_s(), "/s x ", wl.num_requests());
  } else if (wl.kind() == "offline") {
    out = wl.has_duration_s()
              ? absl::StrCat(", offline x >= ", wl.num_requests(), ", ", wl.duration_s(), " s")
              : absl::StrCat(", offline x ", wl.num_requests());
  } else if (wl.kind() == "concurrency") {
    out = absl::StrCat(", ", wl.concurrency(), " clients x ", wl.num_requests(),
                       wl.warmup_requests() > 0
                           ? absl::StrCat(" after ", wl.warmup_requests(), " warm-up")
                           : std::string());
  } else if (wl.kind() == "server") {
    out = absl::StrCat(", server at p99 TTFT <= ", inf.target_time_to_first_token_ms(),
                       " ms, TPOT <= ", inf.target_time_per_output_token_ms(), " ms, ",
                       wl.duration_s(), " s, >= ", wl.num_requests());
  } else {
    out = absl::StrCat(", batch ", wl.batch_size());
  }
  if (inf.has_speculative()) {
    absl::StrAppend(&out, ", ", inf.speculative().method(), " k ",
                    inf.speculative().num_speculative_tokens());
  }
  if (inf.has_disaggregated()) {
    absl::StrAppend(&out, ", prefill ", inf.disaggregated().prefill().num_gpus(), " + decode ",
                    inf.disaggregated().decode().num_gpus(), " GPUs at tp ",
                    inf.disaggregated().decode().tensor_parallel_size());
  }
  return out;
}

}  // namespace

bool IsKnownServingMetric(std::string_view metric) {
  for (std::string_view m : kMetrics) {
    if (m == metric) return true;
  }
  return false;
}

std::string InferenceRun::Setup() const {
  if (!scenario) return "";
  const config::Scenario& s = *scenario;
  const config::InferenceConfig& inf = s.inference();
  const config::InferenceWorkload& wl = inf.workload();
  return absl::StrCat(
      s.description().substr(0, s.description().find(" / ")), " on ", s.cluster().num_gpus(), "x ",
      s.cluster().gpu(), " (tp ", inf.tensor_parallel_size(), "), weights ", inf.weight_dtype(),
      inf.has_quant_group_size() ? absl::StrCat(" g", inf.quant_group_size()) : "", ", kv ",
      inf.has_kv_cache_dtype() ? inf.kv_cache_dtype() : "default",
      wl.has_lengths_file() ? absl::StrCat(", lengths ", wl.lengths_file())
                            : absl::StrCat(", prompt ", wl.prompt_length().value(), ", output ",
                                           wl.output_length().value()),
      WorkloadText(inf));
}

bool IsInferenceRunsTable(const sim::CsvTable& table) {
  for (std::string_view c : {"id", "device", "tp", "weight_dtype", "kv_dtype", "input_len",
                             "output_len", "batch_or_concurrency", "metric", "value"}) {
    if (table.Column(c) < 0) return false;
  }
  return true;
}

absl::StatusOr<std::vector<InferenceRun>> MapInferenceRuns(const sim::CsvTable& table) {
  for (std::string_view c :
       {"id",           "source",   "model",     "layers",    "hidden",      "heads",
        "kv_heads",     "ffn",      "vocab",     "device",    "num_devices", "tp",
        "weight_dtype", "kv_dtype", "framework", "input_len", "output_len",  "batch_or_concurrency",
        "metric",       "value",    "unit"}) {
    if (table.Column(c) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("inference runs table: column '", std::string(c),
                       "' is missing; the header must have the columns of "
                       "tests/validation/inference-runs.csv"));
    }
  }
  std::vector<InferenceRun> runs;
  runs.reserve(table.rows.size());
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const sim::CsvTable::Row& row = table.rows[i];
    InferenceRun run;
    run.id = table.Get(row, "id");
    run.source = table.Get(row, "source");
    run.line = table.row_lines[i];
    MapRow(table, row, &run);
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace clustersim::scenarios
