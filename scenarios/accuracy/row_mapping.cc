#include "scenarios/accuracy/row_mapping.h"

#include <algorithm>
#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "models/transformer_config.h"

namespace clustersim::scenarios {
namespace {

// Megatron-Core with a training recipe's usual settings.
RowAssumptions MegatronRecipe(const char* precision, const char* recompute, const char* text) {
  RowAssumptions a;
  a.framework = "megatron-core";
  a.recompute = recompute;
  a.sequence_parallel = true;
  a.distributed_optimizer = true;
  a.overlap_grad_reduce = true;
  a.precision = precision;
  a.attention = "flash";
  a.text = text;
  return a;
}

}  // namespace

RowAssumptions AssumptionsForSource(const std::string& source) {
  if (source == "NAR21") {
    // The paper's FLOP formula counts the recompute pass: full recompute.
    // Attention: unfused. The runs (Megatron-LM README, April 2021) predate
    // FlashAttention (Dao et al., May 2022).
    RowAssumptions a;
    a.framework = "megatron-core";
    a.recompute = "full";
    a.precision = "fp16";
    a.attention = "unfused";
    a.text =
        "micro-batch 1, full recompute, fp16, no interleaving, vocab 51200, unfused attention "
        "(2021, before FlashAttention)";
    return a;
  }
  // Attention for NEMO2407 and NEMOLONG: flash, which on H100 is costed at
  // cuDNN's fused attention. Transformer Engine prefers cuDNN over flash-attn 2
  // on Hopper when both apply (TE v1.2 release notes, January 2024; NeMo PR
  // #9188). NeMo 24.03 (NEMOLONG) pinned TE commit bfe21c3d, NeMo 24.07 TE 1.8;
  // docs/accuracy.md has the sources.
  if (source == "NEMO2407") {
    return MegatronRecipe(
        "fp8", "none",
        "FP8 (Transformer Engine) where the notes say so; no recompute, sequence parallel when tp "
        "> 1, distributed optimizer, overlapped grad reduce; architecture from the model preset "
        "the row names; H100 attention at the megatron-core profile's factor "
        "(models/data/frameworks.textproto; these rows are held out from its fit)");
  }
  if (source == "NEMOLONG") {
    return MegatronRecipe(
        "fp8", "none",
        "global batch = data-parallel size (one sequence per replica; the table states no batch), "
        "micro-batch 1, FP8, no recompute, sequence parallel when tp > 1, distributed optimizer, "
        "overlapped grad reduce; Llama 2 7B preset; H100 attention at the megatron-core profile's "
        "factor, of which these rows are the training split (models/data/frameworks.textproto)");
  }
  if (source == "MCORE24") {
    // Attention: flash. Megatron-core (2024) runs attention through
    // Transformer Engine's fused FlashAttention/cuDNN kernels by default.
    // TP and parameter-gather overlap: the source's notes list
    // --tp-comm-overlap and --overlap-param-gather among its flags.
    RowAssumptions a = MegatronRecipe(
        "bf16", "selective",
        "micro-batch 1, selective recompute + sequence parallel, distributed optimizer, overlapped "
        "grad reduce, bf16, flash attention (Megatron-core + Transformer Engine), TP communication "
        "overlapped with GEMMs (--tp-comm-overlap, stated), parameter all-gather under the next "
        "forward (--overlap-param-gather, stated), H100 attention at the megatron-core profile's "
        "factor (models/data/frameworks.textproto; held out from its fit)");
    a.tp_comm_overlap = true;
    a.overlap_param_gather = true;
    return a;
  }
  RowAssumptions a;
  a.framework = "megatron-core";
  a.recompute = "full";
  a.precision = "fp16";
  if (source == "KOR22") {
    // Attention: unfused. Korthikanti et al. (arXiv 2205.05198, May 2022)
    // account the softmax and dropout activations of Megatron's unfused
    // attention (Table 2's 5·a·s/h) and their selective recompute exists to
    // drop them; Megatron-LM gained FlashAttention only in 2023.
    a.attention = "unfused";
    a.text = "vocab 51200, unfused attention (2022, before FlashAttention in Megatron-LM)";
    return a;
  }
  a.attention = "flash";
  a.text = "vocab 51200, flash attention";
  return a;
}

absl::StatusOr<RowAssumptions> AssumptionsForStack(const std::string& cell) {
  const std::string s = absl::AsciiStrToLower(cell);
  // Checked in order: "nemo-automodel" before the other "nemo-" stacks.
  struct Stack {
    bool matches;
    const char* framework;
    int zero_stage;   // the stack's data-parallel sharding
    int micro_batch;  // RowAssumptions::micro_batch
    const char* recompute;
    bool sequence_parallel;
    const char* text;
  };
  const Stack stacks[] = {
      // FSDP2 recipes: every data-parallel rank shards parameters, gradients
      // and optimizer states (fully_shard); the tables state tp, pp and cp.
      {absl::StartsWith(s, "nemo-automodel") || absl::StartsWith(s, "torchtitan"), "pytorch-fsdp2",
       3, 0, "full", true,
       "PyTorch FSDP2 (pytorch-fsdp2 profile): parameters, gradients and optimizer states sharded "
       "over every data-parallel rank (ZeRO-3), sequence parallel with tp > 1, micro-batch = "
       "global batch / dp where unstated, full recompute where unstated; no rows of this stack are "
       "fitted"},
      // Meta's Llama 3 stack (Dubey et al. 2024, section 3.3.2): PyTorch FSDP
      // composed with tensor, context and pipeline parallelism; FSDP does not
      // reshard parameters after the forward pass, so parameters stay whole
      // through the step while gradients and optimizer states are sharded.
      {absl::StartsWith(s, "meta-llama3"), "pytorch-fsdp2", 2, 0, "full", true,
       "Meta's Llama 3 4D parallelism (pytorch-fsdp2 profile): FSDP without resharding after the "
       "forward pass (ZeRO-2), sequence parallel with tp > 1, micro-batch 1 with a pipeline, full "
       "recompute where unstated; no rows of this stack are fitted"},
      // NeMo / Megatron-Bridge performance recipes (scripts/performance):
      // distributed optimizer with overlapped grad reduce and param gather, TP
      // communication overlap, sequence parallel with tp > 1.
      {absl::StartsWith(s, "nemo-") || absl::StrContains(s, "megatron-core") ||
           absl::StrContains(s, "megatron-bridge"),
       "megatron-core", 0, 0, "none", true,
       "NeMo / Megatron-Bridge performance recipe (megatron-core profile): no recompute where "
       "unstated, sequence parallel and TP communication overlap with tp > 1, distributed "
       "optimizer with overlapped grad reduce and param gather, micro-batch = global batch / dp "
       "where unstated"},
      // BLOOM's runs: ZeRO stage 1, full activation checkpointing, Megatron's
      // fused-softmax (unfused) attention (bigscience tr11 slurm scripts).
      {absl::StartsWith(s, "megatron-deepspeed"), "megatron-deepspeed", 1, 1, "full", false,
       "Megatron-DeepSpeed (megatron-deepspeed profile): ZeRO stage 1, full recompute, unfused "
       "attention, DeepSpeed pipeline engine, no sequence parallelism"},
      {absl::StartsWith(s, "pytorch-fsdp"), "pytorch-fsdp", 3, 1, "full", false,
       "PyTorch FSDP FULL_SHARD (pytorch-fsdp profile, ZeRO-3), pure data parallel; no rows of "
       "this stack are fitted"},
      {absl::StartsWith(s, "jax-"), "jax-xla", 3, 0, "full", true,
       "JAX/XLA (jax-xla profile): FSDP over the data axis (ZeRO-3), full rematerialisation "
       "(MaxText's default remat policy), micro-batch = global batch / dp; no rows of this stack "
       "are fitted"},
  };
  for (const Stack& k : stacks) {
    if (!k.matches) continue;
    RowAssumptions a;
    if (std::string_view(k.framework) == "megatron-core") {
      a = MegatronRecipe("bf16", k.recompute, k.text);
      a.tp_comm_overlap = true;
      a.overlap_param_gather = true;
    } else {
      a.framework = k.framework;
      a.recompute = k.recompute;
      a.precision = "bf16";
      a.sequence_parallel = k.sequence_parallel;
      a.text = k.text;
    }
    a.zero_stage = k.zero_stage;
    a.micro_batch = k.micro_batch;
    // torchtitan with pipeline parallelism does not reshard after the forward
    // pass ("to avoid per-microbatch all-gathers", apply_fsdp in
    // torchtitan/parallelisms/parallelize_llama.py at 9dec370) and the
    // pipeline schedule defers the gradient reduce-scatter to the last
    // micro-batch's backward (torch.distributed.pipelining's
    // backward_maybe_with_nosync): parameters gathered and gradients reduced
    // once per step, ZeRO-2.
    // torchtitan compiles only when asked (training.compile = false in every
    // train_configs/*.toml, April 2024 to June 2025); its benchmark tables
    // say when they turned it on.
    if (absl::StartsWith(s, "torchtitan")) {
      a.zero_stage_with_pipeline = 2;
      a.eager_unless_compiled = true;
      a.op_selective = true;
      // torchtitan's apply_tp uses torchao's Float8ColwiseParallel,
      // Float8RowwiseParallel and PrepareFloat8ModuleInput whenever Float8
      // linears are on (9dec370), and from 2025 only with tensorwise scaling
      // (enable_float8_tensorwise_tp at 820504e); they cast before the
      // all-gather (torchao/float8/float8_tensor_parallel.py).
      a.fp8_tensorwise_tp = true;
      a.text += "; with pp > 1 parameters stay gathered across micro-batches and gradients are "
                "reduce-scattered once per step (ZeRO-2; torchtitan's apply_fsdp)";
    }
    // NeMo AutoModel's FSDP2Config reduces gradients in bf16 by default
    // (nemo_automodel/components/distributed/config.py at e458120124), where
    // torchtitan, the profile's other stack, reduces in fp32.
    if (absl::StartsWith(s, "nemo-automodel")) {
      a.grad_reduce_bytes = 2;
      a.text += "; gradients reduce-scattered in bf16 (AutoModel's FSDP2Config default)";
      // AutoModel's mixture-of-experts models (MoEFSDPSyncMixin,
      // nemo_automodel/components/moe/fsdp_mixin.py at e458120124) with
      // model.backend.enable_fsdp_optimizations (default false,
      // components/models/common/utils.py BackendConfig) call FSDP2's
      // set_requires_gradient_sync(False) and set_reshard_after_backward(False)
      // on every micro-batch but the last (recipes/llm/benchmark.py
      // prepare_for_grad_accumulation / prepare_for_final_backward), and their
      // blocks do not reshard after the forward (moe/config.py
      // MoEParallelizerConfig.reshard_after_forward = False): parameters are
      // gathered in the first forward and kept, gradients reduce-scattered
      // in the last backward. The dense models have no such mixin.
      a.deferred_sync_setting = "enable_fsdp_optimizations: true";
      // BackendConfig attn "te" builds transformer_engine.pytorch's
      // DotProductAttention (nemo_automodel/components/attention/utils.py at
      // e458120124); "sdpa" and "flex" stay with PyTorch's kernels.
      a.te_attention_setting = "attn: te";
      // BackendConfig fake_balanced_gate builds FakeBalancedGate, whose
      // indices are torch.arange(tokens·k).view(-1, k) % n_experts
      // (nemo_automodel/components/moe/layers.py at 89e3a9fdd and e458120124):
      // each token's k experts are neighbours, on one or two expert ranks.
      a.round_robin_routing_setting = "fake_balanced_gate: true";
    }
    return a;
  }
  return absl::NotFoundError(
      absl::StrCat("stack '", cell, "' has no framework profile (clustersim list frameworks)"));
}

bool StatesCompile(const std::string& text) {
  const std::string t = absl::AsciiStrToLower(text);
  return absl::StrContains(t, "compile") && !absl::StrContains(t, "no compile");
}

std::string CatalogGpu(const std::string& cell, std::string* note) {
  const std::string g = absl::AsciiStrToLower(cell);
  note->clear();
  if (absl::StartsWith(g, "gb200")) return "gb200-186gb";
  if (absl::StartsWith(g, "a100-sxm4-80gb") || absl::StartsWith(g, "a100-80gb")) {
    return "a100-sxm4-80gb";
  }
  if (absl::StartsWith(g, "a100-sxm4-40gb") || absl::StartsWith(g, "a100-40gb")) {
    return "a100-sxm4-40gb";
  }
  if (absl::StartsWith(g, "h100-sxm 96gb") || absl::StartsWith(g, "h100-sxm hbm2e")) {
    *note =
        "H100 SXM5 80GB stands in for this H100 HBM2e board (96 GB, 2.4 TB/s); a power limit the "
        "cell states is the run's cluster.power_cap_w";
    return "h100-sxm5-80gb";
  }
  if (absl::StartsWith(g, "h100-sxm") || absl::StartsWith(g, "h100-80gb")) {
    return "h100-sxm5-80gb";
  }
  if (absl::StartsWith(g, "h200")) return "h200-sxm-141gb";
  if (absl::StartsWith(g, "b200")) return "b200-sxm-180gb";
  return "";
}

int StatedOmniPathLinks(const std::string& cell) {
  static const std::regex kLinks("([0-9]+) ?omni-?path links per node", std::regex::icase);
  std::smatch m;
  if (!std::regex_search(cell, m, kLinks)) return 0;
  return std::stoi(m[1].str());
}

double StatedPowerLimitW(const std::string& cell) {
  static const std::regex kLimit("([0-9]+) ?W power limit", std::regex::icase);
  std::smatch m;
  if (!std::regex_search(cell, m, kLimit)) return 0;
  return std::stod(m[1].str());
}

std::string PresetFor(const std::string& model) {
  std::string name = absl::AsciiStrToLower(model);
  name = name.substr(0, name.find(" ("));  // "gpt-3 175b (paxml ...)"
  std::replace(name.begin(), name.end(), ' ', '-');
  if (name == "nemotron-340b") name = "nemotron4-340b";  // NeMo's name for Nemotron-4 340B
  // Megatron-Bridge's and NeMo AutoModel's names for the released models.
  if (name == "deepseek-v3") name = "deepseek-v3-671b";
  if (name == "qwen3-moe-30b") name = "qwen3-30b-a3b";
  if (name == "nemotron-3-nano") name = "nemotron-3-nano-30b-a3b";
  // BLOOM's tr11 topology candidates are its architecture (ALiBi, embedding
  // LayerNorm, tied 250k vocabulary: bigscience train/tr11-200B-ml/
  // tr11-200B-ml.slurm @ a16f0ea, 2022-02-25) at the shape each row states.
  if (name == "bloom-176b-design-candidate") name = "bloom-176b";
  // "llama-3.1-405b" -> "llama3.1-405b", "gpt-3-175b" -> "gpt3-175b".
  static const std::regex kFamilyVersion("^(llama|gpt|nemotron)-([0-9])");
  const std::string joined = std::regex_replace(name, kFamilyVersion, "$1$2");
  for (const std::string& candidate : {name, joined}) {
    if (models::ModelCatalog::Default().Find(candidate).ok()) return candidate;
  }
  return "";
}

std::string UnsupportedArchitecture(const std::string& model, const std::string& notes,
                                    const std::string& ep) {
  static const std::regex kFamilies(
      "deepseek|qwen3|gpt-oss|grok|maverick|kimi|nemotron-h|nemotron 3|nemotron v3|mixtral",
      std::regex::icase);
  const bool moe_name = std::regex_search(model, kFamilies);
  if (!moe_name && (ep.empty() || ep == "1") && !absl::StrContains(notes, "experts")) return "";
  if (!PresetFor(model).empty()) return "";
  static const std::regex kNemotron3("nemotron (3|v3) (nano|super)", std::regex::icase);
  if (std::smatch m; std::regex_search(model, m, kNemotron3)) {
    if (absl::AsciiStrToLower(m[2].str()) == "super") {
      return "Nemotron 3 Super: its latent mixture-of-experts (experts in a projected latent "
             "space) and multi-token prediction are not modelled";
    }
    return "Nemotron 3 Nano (preset nemotron-3-nano-30b-a3b) in NeMo AutoModel: its own "
           "PyTorch model and recipe (DeepEP, FSDP2) for this model are not pinned here";
  }
  return "a mixture-of-experts or hybrid model (experts, router top-k, latent attention or Mamba "
         "layers) that the table's columns do not describe and the catalog has no preset for";
}

}  // namespace clustersim::scenarios
