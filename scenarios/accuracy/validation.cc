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
#include "models/transformer_config.h"
#include "scenarios/accuracy/recipe_parallelism.h"
#include "scenarios/accuracy/row_mapping.h"
#include "scenarios/input/resolve.h"
#include "scenarios/run/runner.h"

namespace clustersim::scenarios {
namespace {

// Parses an integer cell; false when empty or malformed.
bool Int(const std::string& cell, int* out) {
  return !cell.empty() && absl::SimpleAtoi(cell, out);
}

// The row's expert parallelism: its ep cell, 1 when empty or malformed.
int RowEp(const sim::CsvTable& t, const sim::CsvTable::Row& row) {
  int ep = 1;
  return Int(t.Get(row, "ep"), &ep) ? ep : 1;
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

// GB200 compute trays in an NVLink domain of `gpus` GPUs: the gb200-nvl72
// node (topology/data/nodes.textproto) cut to the job's segment.
void GraceBlackwellDomain(int gpus, config::CustomNodeConfig* n) {
  n->set_gpus_per_node(gpus);
  n->set_gpu_link("nvlink5");
  n->set_nvls(true);
  n->set_pcie("pcie5-x16");
  n->set_pcie_switches(gpus);
  n->set_nics(gpus);
  n->set_nic_link("ib-ndr");
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

// Gives the first and last of `pp` stages the layers that do not divide
// evenly (the others share the rest), as stacks with uneven partitions do
// (torchtitan, DeepSpeed's partition_method); true when it set them.
bool UnevenStages(int layers, int pp, config::ParallelismConfig* p) {
  if (pp < 2 || layers < pp || layers % pp == 0) return false;
  const int base = layers / pp, rem = layers % pp;
  const int first = pp == 2 ? layers - layers / 2 : base + (rem + 1) / 2;
  const int last = pp == 2 ? layers / 2 : base + rem / 2;
  p->set_first_pipeline_num_layers(first);
  p->set_last_pipeline_num_layers(last);
  return true;
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
  // A table with a framework column (tests/validation/unseen) names each row's
  // stack; published-runs.csv's sources each ran one.
  RowAssumptions a;
  if (t.Column("framework") >= 0) {
    absl::StatusOr<RowAssumptions> stack = AssumptionsForStack(t.Get(row, "framework"));
    if (!stack.ok()) {
      v.reason = std::string(stack.status().message());
      return v;
    }
    a = *std::move(stack);
  } else {
    a = AssumptionsForSource(v.source);
  }
  v.stack = a.framework;
  std::string gpu_note;
  const std::string gpu = CatalogGpu(t.Get(row, "gpu"), &gpu_note);
  v.gpu = gpu.empty() ? t.Get(row, "gpu").substr(0, t.Get(row, "gpu").find(' ')) : gpu;
  int layers = 0, hidden = 0, heads = 0, seq = 0, num_gpus = 0, tp = 0, pp = 0;
  const std::string preset = PresetFor(t.Get(row, "model"));
  const bool layers_stated = Int(t.Get(row, "layers"), &layers);
  const bool hidden_stated = Int(t.Get(row, "hidden"), &hidden);
  const bool heads_stated = Int(t.Get(row, "heads"), &heads);
  const bool shape_stated = layers_stated && hidden_stated && heads_stated;
  const std::string architecture =
      UnsupportedArchitecture(t.Get(row, "model"), notes, t.Get(row, "ep"));
  if (gpu.empty()) {
    v.reason = absl::StrCat("GPU ", t.Get(row, "gpu"), " is not in the catalog");
  } else if (!architecture.empty()) {
    v.reason = architecture;
  } else if (absl::StrContains(notes, "INCONSISTENT IN SOURCE")) {
    v.reason = "the source's own batch figures disagree (INCONSISTENT IN SOURCE in the notes)";
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

  v.num_gpus = num_gpus;
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
    if (layers_stated) m->set_num_layers(layers);
    if (hidden_stated) m->set_hidden_size(hidden);
    if (heads_stated) m->set_num_attention_heads(heads);
    if (vocab_stated) m->set_vocab_size(vocab);
  }
  config::ParallelismConfig* p = s.mutable_parallelism();
  p->set_tensor_model_parallel_size(tp);
  p->set_pipeline_model_parallel_size(pp);
  int mb = 0, gb = 0;
  std::string assumptions;
  // A stated board power limit (torchtitan's Grand Teton H100s at 500 W).
  if (const double cap_w = StatedPowerLimitW(t.Get(row, "gpu")); cap_w > 0) {
    s.mutable_cluster()->set_power_cap_w(cap_w);
    absl::StrAppend(&assumptions, "power limit ", cap_w, " W (stated); ");
  }
  // A stated Omni-Path fabric (BLOOM's Jean Zay A100 nodes: NVLink3 within
  // the node, 4 x 100 Gb/s OPA links to the NCCL subnet), one link per PCIe
  // switch shared by the GPUs on it.
  if (const int links = StatedOmniPathLinks(t.Get(row, "gpu"));
      links > 0 && gpu == "a100-sxm4-80gb") {
    config::CustomNodeConfig* n = s.mutable_cluster()->mutable_custom_node();
    n->set_gpus_per_node(8);
    n->set_gpu_link("nvlink3");
    n->set_nvls(false);
    n->set_pcie("pcie4-x16");
    n->set_pcie_switches(links);
    n->set_nics(links);
    n->set_nic_link("opa-100");
    absl::StrAppend(&assumptions, links, " x Omni-Path 100 Gb/s per 8-GPU node (stated); ");
  }
  if (const int domain = NvlinkDomainGpus(t.Get(row, "framework"), gpu, num_gpus); domain > 0) {
    GraceBlackwellDomain(domain, s.mutable_cluster()->mutable_custom_node());
    absl::StrAppend(&assumptions, "NVLink domains of ", domain,
                    " GPUs (the launcher's Slurm segment); ");
  }
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
  if (!layers_stated && !preset.empty()) {
    layers = models::ModelCatalog::Default().Find(preset)->num_layers;
  }
  // The recipe's pipeline layout and expert tensor parallelism, where the
  // table leaves them out (scenarios/accuracy/recipe_parallelism.h).
  const RecipeParallelism recipe =
      ForRecipe(t.Get(row, "framework"), notes, preset, gpu, layers, pp, vp, RowEp(t, row));
  if (!recipe.missing.empty()) {
    v.reason = recipe.missing;
    return v;
  }
  for (const int chunk_layers : recipe.layout) p->add_pipeline_layout(chunk_layers);
  if (recipe.mtp_num_layers > 0) s.mutable_model()->set_mtp_num_layers(recipe.mtp_num_layers);
  if (!recipe.text.empty()) absl::StrAppend(&assumptions, recipe.text, "; ");
  // A source that states its stage layout (Llama 3: one layer fewer on the
  // first and last stages) gives it in the optional stage-layer columns.
  int first_layers = 0, last_layers = 0;
  const bool layout_stated = Int(t.Get(row, "first_stage_layers"), &first_layers) &&
                             Int(t.Get(row, "last_stage_layers"), &last_layers);
  if (layout_stated && recipe.layout.empty()) {
    p->set_first_pipeline_num_layers(first_layers);
    p->set_last_pipeline_num_layers(last_layers);
  } else if (recipe.layout.empty() && vp == 1 && UnevenStages(layers, pp, p)) {
    absl::StrAppend(&assumptions, "uneven stages (first ", p->first_pipeline_num_layers(),
                    ", last ", p->last_pipeline_num_layers(), " layers); ");
  }
  const int dp = num_gpus / (tp * pp * cp);
  // Expert parallelism: carved out of dp x cp, or with expert tensor
  // parallel 1 (MoE parallel folding) out of a stage's tp x dp x cp ranks.
  int ep = 1;
  if (Int(t.Get(row, "ep"), &ep) && ep > 1) {
    const bool folded = recipe.expert_tensor_parallel == 1;
    const int ranks = folded ? tp * dp * cp : dp * cp;
    if (ep > ranks || ranks % ep != 0) {
      v.reason = absl::StrCat("expert parallel ", ep, " does not divide ",
                              folded ? "tp x dp x cp = " : "dp x cp = ", ranks,
                              folded ? "" : " and the source states no expert tensor parallelism");
      return v;
    }
    p->set_expert_model_parallel_size(ep);
    if (!recipe.moe_dispatcher.empty()) p->set_moe_token_dispatcher(recipe.moe_dispatcher);
    absl::StrAppend(&assumptions, "expert parallel ", ep, " (balanced routing); ");
  }
  if (recipe.expert_tensor_parallel > 0 && tp > 1) {
    p->set_expert_tensor_parallel_size(recipe.expert_tensor_parallel);
  }
  if (!Int(t.Get(*batch_row, "micro_batch"), &mb)) {
    if (a.micro_batch > 0) {
      mb = a.micro_batch;
      absl::StrAppend(&assumptions, "micro-batch ", mb, "; ");
    } else if (pp > 1) {
      // A pipeline splits each replica's batch into micro-batches of one
      // sequence (torchtitan's and Megatron's default micro-batch size).
      mb = 1;
      absl::StrAppend(&assumptions, "micro-batch 1 (pipeline); ");
    } else if (Int(t.Get(*batch_row, "global_batch"), &gb) && dp >= 1 && gb % dp == 0) {
      mb = gb / dp;  // the stack's recipe: one micro-batch per replica per step
    } else {
      v.reason = "micro-batch not stated and the global batch is not a multiple of dp";
      return v;
    }
  }
  if (!Int(t.Get(*batch_row, "global_batch"), &gb)) {
    // NEMOLONG: the per-source assumption above; memory rows: one micro-batch
    // per replica (the batch does not change per-GPU memory).
    if (v.source != "NEMOLONG" && v.metric != "memory_gb") {
      v.reason = "global batch not stated";
      return v;
    }
    const int64_t derived = int64_t{mb} * dp;  // int64: no overflow
    if (derived > std::numeric_limits<int>::max()) {
      v.reason = absl::StrCat("micro_batch x data-parallel size = ", derived,
                              " exceeds 2^31 - 1; state global_batch");
      return v;
    }
    gb = static_cast<int>(derived);
  }
  // "selective (op)" -> "selective": the simulator's selective is Megatron's,
  // or torchtitan's per-op policy ("selective+op") for a stack whose
  // selective is per-op. "selective+mlp_up" (a JAX remat policy the row
  // states) passes through.
  const std::string recompute_cell = t.Get(row, "recompute");
  std::string recompute = recompute_cell.substr(0, recompute_cell.find(" ("));
  if (a.op_selective && recompute == "selective" &&
      !absl::StrContains(recompute_cell, "(layer)")) {
    recompute = "selective+op";
    absl::StrAppend(&assumptions,
                    "per-op selective checkpointing (torchtitan's policy: every second mm, the "
                    "elementwise ops and the sequence-parallel gathers replayed; fp8 linears "
                    "replayed whole); ");
  }
  if (recompute.empty() && !recipe.recompute_modules.empty()) {
    recompute = "selective";
    for (const std::string& m : recipe.recompute_modules) {
      s.mutable_training()->add_recompute_modules(m);
    }
  }
  if (recompute.empty()) recompute = a.recompute;
  const std::string sp = t.Get(row, "seq_parallel");
  const bool sequence_parallel = sp.empty() ? (a.sequence_parallel && tp > 1) : sp == "yes";
  p->set_sequence_parallel(sequence_parallel);
  p->set_use_distributed_optimizer(a.distributed_optimizer);
  p->set_overlap_grad_reduce(a.overlap_grad_reduce);
  if (a.tp_comm_overlap && sequence_parallel) p->set_tp_comm_overlap(true);
  if (a.overlap_param_gather) p->set_overlap_param_gather(true);
  // FSDP's SHARD_GRAD_OP keeps parameters whole: ZeRO stage 2.
  if (a.zero_stage > 0) {
    const int stage = pp > 1 && a.zero_stage_with_pipeline > 0 ? a.zero_stage_with_pipeline
                                                                 : a.zero_stage;
    p->set_zero_stage(absl::StrContains(notes, "SHARD_GRAD_OP") ? 2 : stage);
  }
  config::TrainingConfig* tr = s.mutable_training();
  tr->set_framework(a.framework);
  // Composer's FSDP mixed precision PURE reduces in bf16 (DEFAULT: fp32, the
  // pytorch-fsdp profile's value).
  if (absl::StrContains(notes, "FSDP MP mode PURE")) {
    tr->set_grad_reduce_bytes(2);
  } else if (a.grad_reduce_bytes > 0) {
    tr->set_grad_reduce_bytes(a.grad_reduce_bytes);
  }
  if (a.eager_unless_compiled) {
    if (StatesCompile(absl::StrCat(notes, " ", t.Get(row, "source")))) {
      absl::StrAppend(&assumptions, "torch.compile (stated): fused elementwise kernels; ");
    } else {
      tr->set_elementwise("eager");
      absl::StrAppend(&assumptions,
                      "eager PyTorch (no torch.compile stated; the stack's default): composite "
                      "RMSNorm, RoPE and SwiGLU kernels; ");
    }
  }
  tr->set_micro_batch_size(mb);
  tr->set_global_batch_size(gb);
  tr->set_recompute_granularity(recompute);
  const std::string precision = t.Get(row, "precision");
  tr->set_precision(!precision.empty()                   ? precision
                    : absl::StrContains(notes, "FP8")    ? "fp8"
                    : absl::StrContains(notes, "fp16") ? "fp16"
                                                       : a.precision);
  if (!a.attention.empty()) tr->set_attention(a.attention);
  v.assumptions = absl::StrCat(assumptions, a.text, gpu_note.empty() ? "" : "; ", gpu_note);

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
  // Throughput metrics: the step time they imply is measured / predicted.
  v.time_error = v.metric == "iteration_time_s" ? v.error : v.measured / v.predicted - 1;
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
  v.stack = "megatron-deepspeed";
  v.gpu = "a100-sxm4-80gb";
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
  v.num_gpus = gpus;
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
  s.mutable_training()->set_framework("megatron-deepspeed");
  if (options.pipeline_p2p_host_us >= 0) {
    s.mutable_training()->set_pipeline_p2p_host_us(options.pipeline_p2p_host_us);
  }
  v.assumptions =
      "A100 SXM4 80GB, 8 per node with NVLink3/NVSwitch and 4x HDR (vTrain's 800 Gbit/s per "
      "node), fp16, full recompute (vTrain use_checkpoint), 1F1B, "
      "GPT-2 vocabulary 50257 padded, unfused attention (vTrain's profiled Megatron model), "
      "megatron-deepspeed profile: DeepSpeed pipeline engine (blocking p2p, "
      "models/data/frameworks.textproto)";
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
  v.time_error = v.error;
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
  return report;
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
  return out;
}

}  // namespace clustersim::scenarios
