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
#include "models/fitted_constants.h"
#include "models/transformer_config.h"
#include "scenarios/input/resolve.h"
#include "scenarios/run/runner.h"

namespace clustersim::scenarios {
namespace {

// Parses an integer cell; false when empty or malformed.
bool Int(const std::string& cell, int* out) {
  return !cell.empty() && absl::SimpleAtoi(cell, out);
}

// The largest parallel size a row may state: far above any published run,
// small enough that products of three sizes fit an int.
constexpr int kMaxParallelSize = 1024;

// Reads the parallel-size cell `column` (tp, pp, dp, cp, vp) into `*out` when
// it is stated. False, with `*reason` naming the column, when it is stated but
// not an integer in 1..kMaxParallelSize (a 0 once divided by zero).
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

std::string GpuName(const std::string& cell) {
  const std::string g = absl::AsciiStrToLower(cell);
  if (absl::StartsWith(g, "a100-sxm4-80gb")) return "a100-sxm4-80gb";
  if (absl::StartsWith(g, "a100-sxm4-40gb")) return "a100-sxm4-40gb";
  if (absl::StartsWith(g, "h100-sxm")) return "h100-sxm5-80gb";
  return "";
}

// Megatron-LM pads the vocabulary to a multiple of 128 x tp.
int PaddedVocab(int vocab, int tp) {
  const int m = 128 * tp;
  return (vocab + m - 1) / m * m;
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

// The model preset a row's model name denotes ("LLAMA2-7B" -> llama2-7b), or
// "" when the catalog has none. NeMo's "Nemotron-340B" is Nemotron-4 340B.
std::string PresetFor(const std::string& model) {
  std::string name = absl::AsciiStrToLower(model);
  std::replace(name.begin(), name.end(), ' ', '-');
  if (name == "nemotron-340b") name = "nemotron4-340b";
  return models::ModelCatalog::Default().Find(name).ok() ? name : "";
}

// Runs `s` and returns the result, or the reason it cannot run.
absl::StatusOr<config::Result> Simulate(config::Scenario s, const ValidationOptions& options) {
  if (options.host_overhead_us >= 0) {
    s.mutable_training()->set_host_overhead_us_per_op(options.host_overhead_us);
  }
  if (options.framework_gemm_factor > 0) {
    s.mutable_training()->set_framework_gemm_factor(options.framework_gemm_factor);
  }
  if (options.framework_attention_factor > 0) {
    s.mutable_training()->set_framework_attention_factor(options.framework_attention_factor);
  }
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  if (!r.ok()) return r.status();
  if (options.resolve_only) return absl::CancelledError("not simulated (resolve only)");
  return RunScenario(*r, {});
}

struct PublishedAssumptions {
  int micro_batch;
  const char* recompute;
  bool sequence_parallel;
  bool distributed_optimizer;
  bool overlap_grad_reduce;
  const char* precision;
  // training.attention, decided per source from its date and software (never
  // per row); the reason is written next to each.
  const char* attention;
  const char* text;
  // parallelism.tp_comm_overlap and overlap_param_gather, only where the
  // source states them.
  bool tp_comm_overlap = false;
  bool overlap_param_gather = false;
};

// What each source leaves unstated, and what we run with (documented in
// docs/accuracy.md).
PublishedAssumptions AssumptionsFor(const std::string& source) {
  if (source == "NAR21") {
    // The paper's FLOP formula counts the recompute pass: full recompute.
    // Attention: unfused. The runs (Megatron-LM README, April 2021) predate
    // FlashAttention (Dao et al., May 2022).
    return {1, "full", false, false, false, "fp16", "unfused",
            "micro-batch 1, full recompute, fp16, no interleaving, vocab 51200, unfused "
            "attention (2021, before FlashAttention)"};
  }
  // Attention for NEMO2407 and NEMOLONG: flash, which on H100 is costed at
  // cuDNN's fused attention. Transformer Engine prefers cuDNN over flash-attn 2
  // on Hopper when both apply (TE v1.2 release notes, January 2024; NeMo PR
  // #9188). NeMo 24.03 (NEMOLONG) pinned TE commit bfe21c3d, NeMo 24.07 TE 1.8;
  // docs/accuracy.md has the sources.
  if (source == "NEMO2407") {
    return {1, "none", true, true, true, "fp8", "flash",
            "FP8 (Transformer Engine) where the notes say so; no recompute, sequence parallel "
            "when tp > 1, distributed optimizer, overlapped grad reduce; architecture from the "
            "model preset the row names; H100 attention at the fitted in-framework factor "
            "(models/data/fitted_constants.textproto; these rows are held out from its fit)"};
  }
  if (source == "NEMOLONG") {
    return {1, "none", true, true, true, "fp8", "flash",
            "global batch = data-parallel size (one sequence per replica; the table states no "
            "batch), micro-batch 1, FP8, no recompute, sequence parallel when tp > 1, "
            "distributed optimizer, overlapped grad reduce; Llama 2 7B preset; H100 attention at "
            "the fitted in-framework factor, of which these rows are the training split "
            "(models/data/fitted_constants.textproto)"};
  }
  if (source == "MCORE24") {
    // Attention: flash. Megatron-core (2024) runs attention through
    // Transformer Engine's fused FlashAttention/cuDNN kernels by default.
    // TP and parameter-gather overlap: the source's notes list
    // --tp-comm-overlap and --overlap-param-gather among its flags.
    return {1, "selective", true, true, true, "bf16", "flash",
            "micro-batch 1, selective recompute + sequence parallel, distributed optimizer, "
            "overlapped grad reduce, bf16, flash attention (Megatron-core + Transformer Engine), "
            "TP communication overlapped with GEMMs (--tp-comm-overlap, stated), parameter "
            "all-gather under the next forward (--overlap-param-gather, stated), H100 attention at "
            "the fitted in-framework factor (models/data/fitted_constants.textproto; held out from its "
            "fit)",
            true, true};
  }
  if (source == "KOR22") {
    // Attention: unfused. Korthikanti et al. (arXiv 2205.05198, May 2022)
    // account the softmax and dropout activations of Megatron's unfused
    // attention (Table 2's 5·a·s/h) and their selective recompute exists to
    // drop them; Megatron-LM gained FlashAttention only in 2023.
    return {1, "full", false, false, false, "fp16", "unfused",
            "vocab 51200, unfused attention (2022, before FlashAttention in Megatron-LM)"};
  }
  return {1, "full", false, false, false, "fp16", "flash", "vocab 51200, flash attention"};
}

// Korthikanti et al.'s memory rows state no batch: they describe the runs of
// the iteration-time rows of the same model and GPU count ("companion").
const sim::CsvTable::Row* Companion(const sim::CsvTable& t, const sim::CsvTable::Row& row) {
  for (const sim::CsvTable::Row& other : t.rows) {
    if (t.Get(other, "metric") == "iteration_time_s" &&
        t.Get(other, "model") == t.Get(row, "model") &&
        t.Get(other, "num_gpus") == t.Get(row, "num_gpus")) {
      return &other;
    }
  }
  return nullptr;
}

ValidationRow PublishedRow(const sim::CsvTable& t, const sim::CsvTable::Row& row,
                           const ValidationOptions& options) {
  ValidationRow v;
  v.id = t.Get(row, "id");
  v.source = v.id.substr(0, v.id.find('-'));
  v.metric = t.Get(row, "metric");
  if (!absl::SimpleAtod(t.Get(row, "value"), &v.measured) || v.measured <= 0) {
    v.reason = "no measured value";
    return v;
  }
  const std::string notes = t.Get(row, "notes");
  const std::string gpu = GpuName(t.Get(row, "gpu"));
  int layers = 0, hidden = 0, heads = 0, seq = 0, num_gpus = 0, tp = 0, pp = 0;
  const std::string preset = PresetFor(t.Get(row, "model"));
  const bool shape_stated = Int(t.Get(row, "layers"), &layers) &&
                            Int(t.Get(row, "hidden"), &hidden) && Int(t.Get(row, "heads"), &heads);
  if (gpu.empty()) {
    v.reason = absl::StrCat("GPU ", t.Get(row, "gpu"), " is not in the catalog");
  } else if ((!shape_stated && preset.empty()) || !Int(t.Get(row, "seq_len"), &seq) ||
             !Int(t.Get(row, "num_gpus"), &num_gpus)) {
    v.reason = absl::StrCat("model shape or GPU count not stated (and no preset named ",
                            t.Get(row, "model"), ")");
  } else if (t.Get(row, "tp").empty() || t.Get(row, "pp").empty()) {
    v.reason = "the source does not state the tensor/pipeline split";
  }
  if (!v.reason.empty()) return v;
  int cp = 1, vp = 1;
  if (!ParallelSize(t, row, "tp", &tp, &v.reason) || !ParallelSize(t, row, "pp", &pp, &v.reason) ||
      !ParallelSize(t, row, "cp", &cp, &v.reason)) {
    return v;
  }

  const PublishedAssumptions a = AssumptionsFor(v.source);
  config::Scenario s;
  s.set_name(v.id);
  s.mutable_cluster()->set_gpu(gpu);
  s.mutable_cluster()->set_num_gpus(num_gpus);
  int vocab = 51200;
  const bool vocab_stated = Int(t.Get(row, "vocab"), &vocab);
  if (preset.empty()) {
    GptModel(layers, hidden, heads, seq, vocab, &s);
  } else {
    // The preset the row names, with the dimensions the row states.
    config::ModelConfig* m = s.mutable_model();
    m->set_preset(preset);
    m->set_seq_length(seq);
    if (shape_stated) {
      m->set_num_layers(layers);
      m->set_hidden_size(hidden);
      m->set_num_attention_heads(heads);
    }
    if (vocab_stated) m->set_vocab_size(vocab);
  }
  config::ParallelismConfig* p = s.mutable_parallelism();
  p->set_tensor_model_parallel_size(tp);
  p->set_pipeline_model_parallel_size(pp);
  int mb = 0, gb = 0;
  std::string assumptions;
  const sim::CsvTable::Row* batch_row = &row;
  if (v.metric == "memory_gb" && t.Get(row, "micro_batch").empty()) {
    if (const sim::CsvTable::Row* c = Companion(t, row)) {
      batch_row = c;
      absl::StrAppend(&assumptions, "batch and vp of ", t.Get(*c, "id"), "; ");
    }
  }
  if (!t.Get(row, "cp").empty()) p->set_context_parallel_size(cp);
  if (!ParallelSize(t, *batch_row, "vp", &vp, &v.reason)) return v;
  if (vp > 1) p->set_virtual_pipeline_model_parallel_size(vp);
  if (!Int(t.Get(*batch_row, "micro_batch"), &mb)) {
    mb = a.micro_batch;
    absl::StrAppend(&assumptions, "micro-batch ", mb, "; ");
  }
  if (!Int(t.Get(*batch_row, "global_batch"), &gb)) {
    // NEMOLONG: the per-source assumption above; memory rows: one micro-batch
    // per replica (the batch does not change per-GPU memory).
    if (v.source != "NEMOLONG" && v.metric != "memory_gb") {
      v.reason = "global batch not stated";
      return v;
    }
    const int64_t derived = int64_t{mb} * (num_gpus / (tp * pp * cp));  // int64: no overflow
    if (derived > std::numeric_limits<int>::max()) {
      v.reason = absl::StrCat("micro_batch x data-parallel size = ", derived,
                              " exceeds 2^31 - 1; state global_batch");
      return v;
    }
    gb = static_cast<int>(derived);
  }
  std::string recompute = t.Get(row, "recompute");
  if (recompute.empty()) recompute = a.recompute;
  const std::string sp = t.Get(row, "seq_parallel");
  const bool sequence_parallel = sp.empty() ? (a.sequence_parallel && tp > 1) : sp == "yes";
  p->set_sequence_parallel(sequence_parallel);
  p->set_use_distributed_optimizer(a.distributed_optimizer);
  p->set_overlap_grad_reduce(a.overlap_grad_reduce);
  if (a.tp_comm_overlap && sequence_parallel) p->set_tp_comm_overlap(true);
  if (a.overlap_param_gather) p->set_overlap_param_gather(true);
  config::TrainingConfig* tr = s.mutable_training();
  tr->set_micro_batch_size(mb);
  tr->set_global_batch_size(gb);
  tr->set_recompute_granularity(recompute);
  tr->set_precision(absl::StrContains(notes, "FP8")    ? "fp8"
                    : absl::StrContains(notes, "fp16") ? "fp16"
                                                       : a.precision);
  tr->set_attention(a.attention);
  v.assumptions = absl::StrCat(assumptions, a.text);

  absl::StatusOr<config::Result> r = Simulate(s, options);
  if (!r.ok()) {
    v.reason = std::string(r.status().message());
    return v;
  }
  if (v.metric == "iteration_time_s") {
    v.predicted = r->step_time_s();
  } else if (v.metric == "tflops_per_gpu") {
    // Narayanan et al. count the recomputed forward pass (hardware FLOPs).
    v.predicted = v.source == "NAR21" ? r->hardware_tflops_per_gpu() : r->model_tflops_per_gpu();
  } else if (v.metric == "mfu_pct") {
    v.predicted = 100 * r->mfu();
  } else if (v.metric == "tokens_per_s_per_gpu") {
    v.predicted = r->tokens_per_s_per_gpu();
  } else if (v.metric == "memory_gb") {
    // Korthikanti et al. Figure 1: per-GPU model states of the transformer
    // layers (a middle stage, no embedding) and activations of the first stage.
    if (absl::StrContains(notes, "parameters+gradients+optimizer")) {
      v.reason = "model-state memory of a middle stage is checked in models/memory_model_test";
    } else {
      v.predicted = r->memory_breakdown_gib().activations();
    }
  } else {
    v.reason = absl::StrCat("metric ", v.metric, " is not supported");
  }
  if (!v.reason.empty()) return v;
  v.supported = true;
  v.error = (v.predicted - v.measured) / v.measured;
  return v;
}

// vTrain's cluster, as its authors describe it to their own simulator (every
// validation config of github.com/VIA-Research/vTrain at f8dda84: node_size 8,
// intra_node_bandwidth 150 GB/s, inter_node_bandwidth 800 Gbit/s per node):
// A100 SXM4 with NVLink3/NVSwitch (the 8-GPU all-reduce tables reach 229 GB/s
// bus bandwidth) and 4 x 200 Gbit/s HDR per node, half the 8 NICs of the
// dgx-a100 preset. The NICs sit one per PCIe switch of two GPUs, so two GPUs
// share each NIC (the DGX A100 board's pairing of GPUs on a switch).
void VtrainNode(config::CustomNodeConfig* n) {
  n->set_gpus_per_node(8);
  n->set_gpu_link("nvlink3");
  n->set_nvls(false);
  n->set_pcie("pcie4-x16");
  n->set_pcie_switches(4);
  n->set_nics(4);
  n->set_nic_link("ib-hdr");
}

ValidationRow VtrainRow(const sim::CsvTable& t, const sim::CsvTable::Row& row, const std::string& source,
                        int index, const ValidationOptions& options) {
  ValidationRow v;
  v.id = absl::StrCat(source, "-", index + 1);
  v.source = source;
  v.metric = "iteration_time_s";
  int gpus, gb, mb, hidden, heads, layers, seq;
  int tp = 0, dp = 0, pp = 0;  // 0: the cell is empty
  double ms = 0;
  if (!Int(t.Get(row, "# GPUs"), &gpus) || !Int(t.Get(row, "global batch"), &gb) ||
      !Int(t.Get(row, "micro batch"), &mb) || !Int(t.Get(row, "hidden size"), &hidden) ||
      !Int(t.Get(row, "attention heads"), &heads) || !Int(t.Get(row, "# layers"), &layers) ||
      !Int(t.Get(row, "sequence length"), &seq) ||
      !absl::SimpleAtod(t.Get(row, "iteration time (ms)"), &ms)) {
    v.reason = "malformed row";
    return v;
  }
  if (!ParallelSize(t, row, "tensor parallelism", &tp, &v.reason) ||
      !ParallelSize(t, row, "data parallelism", &dp, &v.reason) ||
      !ParallelSize(t, row, "pipeline parallelism", &pp, &v.reason)) {
    return v;
  }
  if (tp == 0 || dp == 0 || pp == 0) {
    v.reason = "malformed row";
    return v;
  }
  v.measured = ms / 1000.0;
  config::Scenario s;
  s.set_name(v.id);
  s.mutable_cluster()->set_gpu("a100-sxm4-80gb");
  s.mutable_cluster()->set_num_gpus(gpus);
  VtrainNode(s.mutable_cluster()->mutable_custom_node());
  GptModel(layers, hidden, heads, seq, PaddedVocab(50257, tp), &s);
  s.mutable_parallelism()->set_tensor_model_parallel_size(tp);
  s.mutable_parallelism()->set_pipeline_model_parallel_size(pp);
  s.mutable_training()->set_micro_batch_size(mb);
  s.mutable_training()->set_global_batch_size(gb);
  s.mutable_training()->set_recompute_granularity("full");
  s.mutable_training()->set_precision("fp16");
  // Attention: unfused. The source does not state it; Megatron-DeepSpeed's
  // --use-flash-attn is off by default, and the model vTrain profiles to
  // reproduce these runs (src/model/gpt_modeling.py at f8dda84) is Megatron's
  // unfused attention: baddbmm, FusedScaleMaskSoftmax, dropout, bmm.
  s.mutable_training()->set_attention("unfused");
  // Pipeline engine: the runs are Megatron-DeepSpeed (vTrain data/README.md),
  // whose pipeline parallelism is DeepSpeed's PipelineEngine.
  s.mutable_training()->set_pipeline_p2p_host_us(options.pipeline_p2p_host_us >= 0
                                                     ? options.pipeline_p2p_host_us
                                                     : models::Fitted().deepspeed_pipeline_p2p_host_us);
  v.assumptions =
      "A100 SXM4 80GB, 8 per node with NVLink3/NVSwitch and 4x HDR (vTrain's 800 Gbit/s per "
      "node), fp16, full recompute (vTrain use_checkpoint), 1F1B, "
      "GPT-2 vocabulary 50257 padded, unfused attention (vTrain's profiled Megatron model), "
      "DeepSpeed pipeline engine (blocking p2p, models/data/fitted_constants.textproto)";
  if (tp * dp * pp != gpus) {
    v.reason = "tp x dp x pp does not equal the GPU count";
    return v;
  }
  absl::StatusOr<config::Result> r = Simulate(s, options);
  if (!r.ok()) {
    v.reason = std::string(r.status().message());
    return v;
  }
  v.predicted = r->step_time_s();
  v.supported = true;
  v.error = (v.predicted - v.measured) / v.measured;
  return v;
}

}  // namespace

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
    report.rows.push_back(published ? PublishedRow(table, table.rows[i], options)
                                    : VtrainRow(table, table.rows[i], vtrain_source,
                                                static_cast<int>(i), options));
  }
  std::map<std::string, std::pair<int, double>> sums;
  double total = 0;
  for (const ValidationRow& r : report.rows) {
    if (!r.supported || r.metric == "memory_gb") continue;
    auto& [n, sum] = sums[r.source];
    ++n;
    sum += std::abs(r.error);
    total += std::abs(r.error);
    ++report.supported;
  }
  for (const auto& [source, ns] : sums) {
    report.by_source.push_back({source, ns.first, 100 * ns.second / ns.first});
  }
  report.overall_mape = report.supported > 0 ? 100 * total / report.supported : 0;
  return report;
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
  out += "\nMAPE by source (time and throughput rows):\n";
  for (const SourceSummary& s : report.by_source) {
    absl::StrAppendFormat(&out, "  %-14s %6.1f%%  (%d rows)%s\n", s.source, s.mape, s.rows,
                          s.mape > target_mape ? "  above the target" : "");
  }
  absl::StrAppendFormat(&out, "overall MAPE %.1f%% over %d rows; target %.0f%%: %s\n",
                        report.overall_mape, report.supported, target_mape,
                        report.overall_mape <= target_mape ? "met" : "MISSED");
  return out;
}

}  // namespace clustersim::scenarios
