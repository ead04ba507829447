// File: scenarios/accuracy/published_row.cc
//
// A row of published-runs.csv or the unseen table as a scenario: the model
// (stated shape or a named preset), the cluster facts it states, the
// parallelism and batch it states or its recipe implies, and its software
// stack's profile; simulated and compared with the measured metric. What the
// row leaves out and the mapping fills in is written to the row's
// assumptions.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "models/transformer_config.h"
#include "scenarios/accuracy/bridge_cuda_graphs.h"
#include "scenarios/accuracy/bridge_presets.h"
#include "scenarios/accuracy/published_row_stack.h"
#include "scenarios/accuracy/recipe_parallelism.h"
#include "scenarios/accuracy/row_mapping.h"
#include "scenarios/accuracy/validation_rows.h"

namespace clustersim::scenarios::validation_internal {
namespace {

// The row's expert parallelism: its ep cell, 1 when empty or malformed.
int RowEp(const sim::CsvTable& t, const sim::CsvTable::Row& row) {
  int ep = 1;
  return Int(t.Get(row, "ep"), &ep) ? ep : 1;
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
  n->set_host_link("nvlink-c2c-gb200");
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

// The cluster facts a row states beyond the GPU: a board power limit, an
// Omni-Path fabric, the NVLink domain of a Grace Blackwell job.
void StatedCluster(const sim::CsvTable& t, const sim::CsvTable::Row& row, const std::string& gpu,
                   config::Scenario* s, std::string* assumptions) {
  // A stated board power limit (torchtitan's Grand Teton H100s at 500 W).
  if (const double cap_w = StatedPowerLimitW(t.Get(row, "gpu")); cap_w > 0) {
    s->mutable_cluster()->set_power_cap_w(cap_w);
    absl::StrAppend(assumptions, "power limit ", cap_w, " W (stated); ");
  }
  // A stated Omni-Path fabric (BLOOM's Jean Zay A100 nodes: NVLink3 within
  // the node, 4 x 100 Gb/s OPA links to the NCCL subnet), one link per PCIe
  // switch shared by the GPUs on it. NCCL's rate over it is the one measured
  // on those nodes (the opa-100 row of collective_calibration.textproto).
  if (const int links = StatedOmniPathLinks(t.Get(row, "gpu"));
      links > 0 && gpu == "a100-sxm4-80gb") {
    config::CustomNodeConfig* n = s->mutable_cluster()->mutable_custom_node();
    n->set_gpus_per_node(8);
    n->set_gpu_link("nvlink3");
    n->set_nvls(false);
    n->set_pcie("pcie4-x16");
    n->set_pcie_switches(links);
    n->set_nics(links);
    n->set_nic_link("opa-100");
    absl::StrAppend(assumptions, links,
                    " x Omni-Path 100 Gb/s per 8-GPU node (stated), NCCL at the 5.07 GB/s per "
                    "link and one link per ring measured on those nodes; ");
  }
  if (const int domain = NvlinkDomainGpus(t.Get(row, "framework"), gpu, s->cluster().num_gpus()); domain > 0) {
    GraceBlackwellDomain(domain, s->mutable_cluster()->mutable_custom_node());
    absl::StrAppend(assumptions, "NVLink domains of ", domain,
                    " GPUs (the launcher's Slurm segment); ");
  }
}

// The row's micro-batch and global batch: stated, or the stack's recipe
// (its micro-batch, one sequence per micro-batch in a pipeline, one
// micro-batch per replica). An empty string, or why they cannot be had.
std::string RowBatch(const sim::CsvTable& t, const sim::CsvTable::Row& batch_row,
                     const RowAssumptions& a, const ValidationRow& v, int pp, int dp, int* mb,
                     int* gb, std::string* assumptions) {
  if (!Int(t.Get(batch_row, "micro_batch"), mb)) {
    if (a.micro_batch > 0) {
      *mb = a.micro_batch;
      absl::StrAppend(assumptions, "micro-batch ", *mb, "; ");
    } else if (pp > 1) {
      // A pipeline splits each replica's batch into micro-batches of one
      // sequence (torchtitan's and Megatron's default micro-batch size).
      *mb = 1;
      absl::StrAppend(assumptions, "micro-batch 1 (pipeline); ");
    } else if (Int(t.Get(batch_row, "global_batch"), gb) && dp >= 1 && *gb % dp == 0) {
      *mb = *gb / dp;  // the stack's recipe: one micro-batch per replica per step
    } else {
      return "micro-batch not stated and the global batch is not a multiple of dp";
    }
  }
  if (!Int(t.Get(batch_row, "global_batch"), gb)) {
    // NEMOLONG: the per-source assumption above; memory rows: one micro-batch
    // per replica (the batch does not change per-GPU memory).
    if (v.source != "NEMOLONG" && v.metric != "memory_gb") return "global batch not stated";
    const int64_t derived = int64_t{*mb} * dp;  // int64: no overflow
    if (derived > std::numeric_limits<int>::max()) {
      return absl::StrCat("micro_batch x data-parallel size = ", derived,
                          " exceeds 2^31 - 1; state global_batch");
    }
    *gb = static_cast<int>(derived);
  }
  return "";
}

// The row's metric from the simulated result, or the reason it is not
// compared (in v->reason).
void Predict(const config::Result& r, const std::string& notes, ValidationRow* v) {
  if (v->metric == "iteration_time_s") {
    v->predicted = r.step_time_s();
  } else if (v->metric == "tflops_per_gpu") {
    // Narayanan et al. count the recomputed forward pass (hardware FLOPs).
    v->predicted = v->source == "NAR21" ? r.hardware_tflops_per_gpu() : r.model_tflops_per_gpu();
  } else if (v->metric == "mfu_pct") {
    v->predicted = 100 * r.mfu();
  } else if (v->metric == "tokens_per_s_per_gpu") {
    v->predicted = r.tokens_per_s_per_gpu();
  } else if (v->metric == "memory_gb") {
    // Korthikanti et al. Figure 1: per-GPU model states of the transformer
    // layers (a middle stage, no embedding) and activations of the first stage.
    if (absl::StrContains(notes, "parameters+gradients+optimizer")) {
      v->reason = "model-state memory of a middle stage is checked in models/memory_model_test";
    } else {
      v->predicted = r.memory_breakdown_gib().activations();
    }
  } else {
    v->reason = absl::StrCat("metric ", v->metric, " is not supported");
  }
}

}  // namespace

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
  // NeMo's long-context recipes run one sequence per micro-batch
  // (nemo/collections/llm/recipes/llama3_8b_16k.py, llama3_8b_64k.py,
  // llama3_70b_16k.py, llama3_70b_64k.py: micro_batch_size=1, NVIDIA/NeMo
  // 8cfedd7203), as published-runs.csv's NEMOLONG rows assume; the long-context
  // table states only the global batch.
  if (absl::StartsWith(v.source, "NEMOLONG") && a.micro_batch == 0) {
    a.micro_batch = 1;
    a.text += "; micro-batch 1 (NeMo's long-context recipes)";
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
  // A design candidate (BLOOM's tr11 sweeps) takes only its preset's
  // architecture: its shape must be stated.
  const bool preset_shape =
      !preset.empty() &&
      !absl::StrContains(absl::AsciiStrToLower(t.Get(row, "model")), "design candidate");
  const std::string architecture =
      UnsupportedArchitecture(t.Get(row, "model"), notes, t.Get(row, "ep"));
  if (gpu.empty()) {
    v.reason = absl::StrCat("GPU ", t.Get(row, "gpu"), " is not in the catalog");
  } else if (!architecture.empty()) {
    v.reason = architecture;
  } else if (absl::StrContains(notes, "INCONSISTENT IN SOURCE")) {
    v.reason = "the source's own batch figures disagree (INCONSISTENT IN SOURCE in the notes)";
  } else if ((!shape_stated && !preset_shape) || !Int(t.Get(row, "seq_len"), &seq) ||
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
  std::string assumptions;
  StatedCluster(t, row, gpu, &s, &assumptions);
  const sim::CsvTable::Row* batch_row = &row;
  if (v.metric == "memory_gb" && t.Get(row, "micro_batch").empty()) {
    if (const sim::CsvTable::Row* c = Companion(t, row)) {
      batch_row = c;
      absl::StrAppend(&assumptions, "batch and vp of ", t.Get(*c, "id"), "; ");
    }
  }
  if (!t.Get(row, "cp").empty()) p->set_context_parallel_size(cp);
  if (!ParallelSize(t, *batch_row, "vp", &vp, &v.reason)) return v;
  if (!layers_stated && !preset.empty()) {
    layers = models::ModelCatalog::Default().Find(preset)->num_layers;
  }
  // The recipe's pipeline layout and expert tensor parallelism, where the
  // table leaves them out (scenarios/accuracy/recipe_parallelism.h).
  int stated_gb = 0;
  if (!Int(t.Get(*batch_row, "global_batch"), &stated_gb)) stated_gb = 0;
  const RecipeParallelism recipe = ForRecipe(t.Get(row, "framework"), notes, preset, gpu, layers,
                                             pp, vp, RowEp(t, row), stated_gb);
  if (!recipe.missing.empty()) {
    v.reason = recipe.missing;
    return v;
  }
  if (recipe.virtual_pipeline > 0) vp = recipe.virtual_pipeline;
  if (vp > 1) p->set_virtual_pipeline_model_parallel_size(vp);
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
    if (recipe.moe_a2a_overlap) p->set_overlap_moe_expert_parallel_comm(true);
    absl::StrAppend(&assumptions, "expert parallel ", ep, " (balanced routing); ");
  }
  if (recipe.expert_tensor_parallel > 0 && tp > 1) {
    p->set_expert_tensor_parallel_size(recipe.expert_tensor_parallel);
  }
  int mb = 0, gb = 0;
  v.reason = RowBatch(t, *batch_row, a, v, pp, dp, &mb, &gb, &assumptions);
  if (!v.reason.empty()) return v;
  const std::string recompute = RowRecompute(t, row, a, recipe, &s, &assumptions);
  StackTraining(t, row, a, notes, tp, pp, &s, &assumptions);
  if (recipe.no_tp_comm_overlap) p->set_tp_comm_overlap(false);
  if (recipe.no_param_gather_overlap) p->set_overlap_param_gather(false);
  config::TrainingConfig* tr = s.mutable_training();
  // Megatron-Bridge's NVFP4 presets switch TP communication overlap off
  // (v0.4.0 scripts/performance/configs/llama/llama3_llm_pretrain.py and
  // llama31_llm_pretrain.py: tp_comm_overlap = False if precision == "nvfp4")
  // and gather parameters in BF16 (mixed_precision.py bf16_with_nvfp4_mixed:
  // fp8_param_gather False, the simulator's only parameter gather).
  if (tr->precision() == "nvfp4" &&
      absl::StrContains(absl::AsciiStrToLower(t.Get(row, "framework")), "megatron-bridge") &&
      p->tp_comm_overlap()) {
    p->set_tp_comm_overlap(false);
    absl::StrAppend(&assumptions,
                    "no TP communication overlap (the Megatron-Bridge NVFP4 presets'); ");
  }
  if (const int offload = BridgeCpuOffloadLayers(t.Get(row, "framework"), preset, gpu,
                                                 tr->precision(), tr->fp8_recipe(), pp);
      offload > 0 && recompute == "none") {
    tr->set_cpu_offload_layers(offload);
    absl::StrAppend(&assumptions, "activations of ", offload,
                    " layers offloaded to host memory (the performance preset's "
                    "cpu_offloading_num_layers); ");
  }
  if (absl::StrContains(absl::AsciiStrToLower(t.Get(row, "framework")), "megatron-bridge")) {
    const BridgeGraphs graphs =
        BridgeCudaGraphs(BridgeRelease(t.Get(row, "framework")), preset, gpu, tr->precision(),
                         tr->fp8_recipe(), recompute);
    for (const std::string& scope : graphs.scopes) tr->add_cuda_graph_scope(scope);
    if (graphs.pad_to_capacity) p->set_moe_pad_expert_input_to_capacity(true);
    if (!graphs.text.empty()) absl::StrAppend(&assumptions, graphs.text, "; ");
  }
  tr->set_micro_batch_size(mb);
  tr->set_global_batch_size(gb);
  tr->set_recompute_granularity(recompute);
  v.assumptions = absl::StrCat(assumptions, a.text, gpu_note.empty() ? "" : "; ", gpu_note);

  absl::StatusOr<config::Result> r = Simulate(s, options, &v.scenario);
  if (!r.ok()) {
    v.reason = std::string(r.status().message());
    return v;
  }
  RecordMemory(*r, &v);
  Predict(*r, notes, &v);
  if (!v.reason.empty()) return v;
  v.supported = true;
  v.error = (v.predicted - v.measured) / v.measured;
  // Throughput metrics: the step time they imply is measured / predicted.
  v.time_error = v.metric == "iteration_time_s" ? v.error : v.measured / v.predicted - 1;
  return v;
}

}  // namespace clustersim::scenarios::validation_internal