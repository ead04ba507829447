#include "models/hf_config.h"

#include <cmath>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "sim/input_file.h"
#include "sim/status_macros.h"

namespace clustersim::models {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

// `v` as an int when it is a whole number in [1, 2^31 - 1].
std::optional<int> PositiveIntValue(const Value& v) {
  if (v.kind_case() != Value::kNumberValue) return std::nullopt;
  const double x = v.number_value();
  if (!(x >= 1) || x != std::floor(x) || x > 2147483647.0) return std::nullopt;
  return static_cast<int>(x);
}

class Reader {
 public:
  Reader(const Struct& root, std::string_view origin) : root_(root), origin_(origin) {}

  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(origin_, ": ", message));
  }

  const Value* Find(const char* field) const {
    auto it = root_.fields().find(field);
    return it == root_.fields().end() || it->second.kind_case() == Value::kNullValue ? nullptr
                                                                                     : &it->second;
  }

  // A positive integer field; std::nullopt when absent and not required.
  absl::StatusOr<std::optional<int>> PositiveInt(const char* field, bool required) const {
    const Value* v = Find(field);
    if (v == nullptr) {
      if (!required) return std::optional<int>();
      return Error(absl::StrCat("config.json has no \"", field,
                                "\"; add it (a positive integer) or use a model preset"));
    }
    if (v->kind_case() != Value::kNumberValue) {
      return Error(absl::StrCat("\"", field, "\" must be a number"));
    }
    const std::optional<int> n = PositiveIntValue(*v);
    if (!n) {
      return Error(absl::StrCat("\"", field, "\" must be a positive integer (got ",
                                v->number_value(), ")"));
    }
    return n;
  }

  absl::StatusOr<bool> Bool(const char* field, bool fallback) const {
    const Value* v = Find(field);
    if (v == nullptr) return fallback;
    if (v->kind_case() != Value::kBoolValue) {
      return Error(absl::StrCat("\"", field, "\" must be true or false"));
    }
    return v->bool_value();
  }

  std::string String(const char* field) const {
    const Value* v = Find(field);
    return v != nullptr && v->kind_case() == Value::kStringValue ? v->string_value() : "";
  }

  // True if any "architectures" entry starts with one of the gated families.
  bool GatedArchitecture() const {
    const Value* v = Find("architectures");
    if (v == nullptr || v->kind_case() != Value::kListValue) return false;
    for (const Value& a : v->list_value().values()) {
      for (const char* family :
           {"Llama", "Mistral", "Mixtral", "Qwen2", "Qwen3", "Deepseek", "GptOss"}) {
        if (a.kind_case() == Value::kStringValue && absl::StartsWith(a.string_value(), family)) {
          return true;
        }
      }
    }
    return false;
  }

 private:
  const Struct& root_;
  std::string origin_;
};

absl::StatusOr<Activation> ParseActivation(const Reader& r, bool gated) {
  // NemotronH names the MLP's activation mlp_hidden_act (hidden_act absent).
  std::string act = r.String("hidden_act");
  if (act.empty() && r.String("model_type") == "nemotron_h") act = r.String("mlp_hidden_act");
  if (act.empty()) {
    return r.Error("config.json has no \"hidden_act\"; add it (e.g. \"silu\" for Llama)");
  }
  if (gated) {
    if (act == "silu" || act == "swish") return Activation::kSwiglu;
    return r.Error(absl::StrCat("\"hidden_act\"=\"", act, "\" with a gated (Llama-family) MLP; ",
                                "only \"silu\" (SwiGLU) is modelled"));
  }
  if (act == "relu2") return Activation::kSquaredRelu;
  if (absl::StartsWith(act, "gelu") || act == "relu") return Activation::kGelu;
  return r.Error(absl::StrCat("\"hidden_act\"=\"", act,
                              "\" is not known; use silu (gated families), gelu, relu or relu2"));
}

// Llama 4 (transformers models/llama4/configuration_llama4.py and
// modeling_llama4.py): intermediate_size is each routed expert's FFN size and
// that of the one shared expert every MoE layer has (Llama4TextMoe's
// shared_expert), intermediate_size_mlp the dense layers' FFN size.
void ReadLlama4Sizes(int intermediate, int intermediate_mlp, TransformerConfig* c) {
  c->ffn_hidden_size = intermediate_mlp;
  c->moe_ffn_hidden_size = intermediate;
  c->moe_shared_expert_ffn_size = intermediate;
}

// Interleaved MoE layers: interleave_moe_layer_step (Llama 4) or
// decoder_sparse_step (Qwen-MoE) → moe_layer_step; both make layer i MoE when
// (i + 1) % step == 0. An explicit moe_layers list (Llama 4) must be that
// pattern.
absl::Status ReadMoeLayerStep(const Reader& r, TransformerConfig* c) {
  std::optional<int> step;
  for (const char* field : {"interleave_moe_layer_step", "decoder_sparse_step"}) {
    CLUSTERSIM_ASSIGN_OR_RETURN(auto s, r.PositiveInt(field, false));
    if (s && !step) step = s;
  }
  if (step) c->moe_layer_step = *step;
  const Value* listed = r.Find("moe_layers");
  if (listed == nullptr || listed->kind_case() != Value::kListValue) return absl::OkStatus();
  std::vector<int> pattern;
  for (int l = 0; l < c->num_layers; ++l) {
    if (c->IsMoeLayer(l)) pattern.push_back(l);
  }
  const auto& values = listed->list_value().values();
  bool same = static_cast<size_t>(values.size()) == pattern.size();
  for (int i = 0; same && i < values.size(); ++i) {
    same = values[i].kind_case() == Value::kNumberValue && values[i].number_value() == pattern[i];
  }
  if (same) return absl::OkStatus();
  return r.Error(absl::StrCat(
      "\"moe_layers\" lists other layers than every \"interleave_moe_layer_step\"=",
      step ? *step : 1,
      "-th one; only that pattern (layer i MoE when (i + 1) % step == 0) is modelled"));
}

// Expert FFN size, shared experts, dense-first and interleaved layers of an
// MoE config: moe_intermediate_size (Qwen2/3-MoE, DeepSeek); shared experts as
// n_shared_experts x moe_intermediate_size (DeepSeek) or
// shared_expert_intermediate_size (Qwen2-MoE); first_k_dense_replace
// (DeepSeek); ReadMoeLayerStep. A non-empty mlp_only_layers (Qwen-MoE's dense
// layers at any index) is refused.
absl::Status ReadMoeExtras(const Reader& r, std::optional<int> moe_ffn,
                           std::optional<int> shared_ffn, TransformerConfig* c) {
  CLUSTERSIM_ASSIGN_OR_RETURN(auto n_shared, r.PositiveInt("n_shared_experts", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto first_dense, r.PositiveInt("first_k_dense_replace", false));
  if (const Value* only = r.Find("mlp_only_layers"); only != nullptr &&
                                                     only->kind_case() == Value::kListValue &&
                                                     only->list_value().values_size() > 0) {
    return r.Error(
        "\"mlp_only_layers\" is not empty; dense layers among MoE layers are "
        "modelled as the first layers (first_k_dense_replace) or every few layers "
        "(decoder_sparse_step, interleave_moe_layer_step)");
  }
  if (moe_ffn) c->moe_ffn_hidden_size = *moe_ffn;
  if (n_shared) {
    if (!moe_ffn) {
      return r.Error(
          "\"n_shared_experts\" needs \"moe_intermediate_size\" (each shared "
          "expert's FFN size)");
    }
    c->moe_shared_expert_ffn_size = *n_shared * *moe_ffn;
  } else if (shared_ffn) {
    c->moe_shared_expert_ffn_size = *shared_ffn;
  }
  if (first_dense) c->moe_first_dense_layers = *first_dense;
  return ReadMoeLayerStep(r, c);
}

// DeepSeek-V2/V3 multi-head latent attention: kv_lora_rank, q_lora_rank
// (null or absent: no query latent), qk_nope_head_dim, qk_rope_head_dim and
// v_head_dim.
absl::Status ReadLatentAttention(const Reader& r, int kv_lora, TransformerConfig* c) {
  CLUSTERSIM_ASSIGN_OR_RETURN(auto q_lora, r.PositiveInt("q_lora_rank", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto nope, r.PositiveInt("qk_nope_head_dim", true));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto rope, r.PositiveInt("qk_rope_head_dim", true));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto v, r.PositiveInt("v_head_dim", true));
  c->kv_lora_rank = kv_lora;
  c->q_lora_rank = q_lora ? *q_lora : 0;
  c->qk_nope_head_dim = *nope;
  c->qk_rope_head_dim = *rope;
  c->v_head_dim = *v;
  c->kv_channels = 0;
  c->num_query_groups = c->num_attention_heads;
  return absl::OkStatus();
}

// NemotronH (model_type nemotron_h; transformers models/nemotron_h/
// configuration_nemotron_h.py): hybrid_override_pattern, mamba_num_heads,
// mamba_head_dim, ssm_state_size, n_groups, conv_kernel and chunk_size
// describe the hybrid layers and the Mamba-2 mixer; its norms are RMSNorm
// (layer_norm_epsilon names their epsilon); the shared expert's FFN size is
// moe_shared_expert_intermediate_size (n_shared_experts x
// moe_intermediate_size would undercount it: Nemotron 3 Nano 1 x 1856 against
// 3712).
absl::Status ReadNemotronH(const Reader& r, TransformerConfig* c) {
  c->hybrid_pattern = r.String("hybrid_override_pattern");
  if (c->hybrid_pattern.empty()) {
    return r.Error("model_type \"nemotron_h\" without \"hybrid_override_pattern\"; add it");
  }
  c->norm = Norm::kRmsNorm;
  CLUSTERSIM_ASSIGN_OR_RETURN(auto heads, r.PositiveInt("mamba_num_heads", true));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto head_dim, r.PositiveInt("mamba_head_dim", true));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto state, r.PositiveInt("ssm_state_size", true));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto groups, r.PositiveInt("n_groups", true));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto conv, r.PositiveInt("conv_kernel", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto chunk, r.PositiveInt("chunk_size", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto shared,
                              r.PositiveInt("moe_shared_expert_intermediate_size", false));
  c->mamba_num_heads = *heads;
  c->mamba_head_dim = *head_dim;
  c->mamba_state_dim = *state;
  c->mamba_num_groups = *groups;
  if (conv) c->mamba_conv_kernel = *conv;
  if (chunk) c->mamba_chunk_size = *chunk;
  if (shared && c->num_experts > 0) c->moe_shared_expert_ffn_size = *shared;
  return absl::OkStatus();
}

// A multimodal wrapper (Llama 4's Llama4ForConditionalGeneration) keeps the
// language model's fields in "text_config": when the top level has no
// "hidden_size", those fields replace the top level's (whose others, such as
// tie_word_embeddings and _name_or_path, stay).
void LiftTextConfig(Struct* root) {
  auto& fields = *root->mutable_fields();
  const auto text = fields.find("text_config");
  if (fields.find("hidden_size") != fields.end() || text == fields.end() ||
      text->second.kind_case() != Value::kStructValue) {
    return;
  }
  const Struct inner = text->second.struct_value();
  for (const auto& [key, value] : inner.fields()) fields[key] = value;
}

// gpt-oss's gated-activation variants and YaRN scaling: "swiglu_limit" →
// glu_clamp; model_type gpt_oss gates with x·sigmoid(1.702·x) and adds 1 to
// the linear half (transformers GptOssExperts) → quick_gelu_glu;
// "rope_scaling" {"rope_type": "yarn", "factor": f} → yarn_rope_factor.
absl::Status ReadGluAndYarn(const Reader& r, const std::string& model_type,
                            TransformerConfig* c) {
  if (const Value* v = r.Find("swiglu_limit"); v != nullptr) {
    if (v->kind_case() != Value::kNumberValue || !(v->number_value() >= 0)) {
      return r.Error("\"swiglu_limit\" must be a number >= 0");
    }
    c->glu_clamp = v->number_value();
  }
  c->quick_gelu_glu = model_type == "gpt_oss";
  const Value* scaling = r.Find("rope_scaling");
  if (scaling == nullptr || scaling->kind_case() != Value::kStructValue) return absl::OkStatus();
  const auto& f = scaling->struct_value().fields();
  auto type = f.find("rope_type");
  if (type == f.end()) type = f.find("type");
  if (type == f.end() || type->second.string_value() != "yarn") return absl::OkStatus();
  auto factor = f.find("factor");
  if (factor == f.end() || factor->second.kind_case() != Value::kNumberValue ||
      !(factor->second.number_value() >= 1)) {
    return r.Error("\"rope_scaling\" of rope_type yarn needs a \"factor\" >= 1");
  }
  c->yarn_rope_factor = factor->second.number_value();
  return absl::OkStatus();
}

// Sliding-window attention: "sliding_window" (null or absent: none; Qwen's
// "use_sliding_window": false turns it off) and which layers use it:
// "layer_types" (one "sliding_attention" or "full_attention" per layer:
// gpt-oss, Gemma 3 in transformers >= 4.53), else "sliding_window_pattern" P
// (Gemma 3: every P-th layer is global, the rest local), else model_type
// gemma2's alternation (even layers local: transformers Gemma2 is_sliding),
// else every layer (Mistral 7B v0.1).
absl::Status ReadSlidingWindow(const Reader& r, const std::string& model_type, int layers,
                               TransformerConfig* c) {
  CLUSTERSIM_ASSIGN_OR_RETURN(auto window, r.PositiveInt("sliding_window", false));
  const Value* use = r.Find("use_sliding_window");
  if (!window || (use != nullptr && use->kind_case() == Value::kBoolValue && !use->bool_value())) {
    return absl::OkStatus();
  }
  int sliding = layers;
  if (const Value* types = r.Find("layer_types"); types != nullptr) {
    if (types->kind_case() != Value::kListValue ||
        types->list_value().values_size() != layers) {
      return r.Error(absl::StrCat("\"layer_types\" must list one type per layer (",
                                  layers, " for \"num_hidden_layers\")"));
    }
    sliding = 0;
    for (const Value& t : types->list_value().values()) {
      if (t.string_value() == "sliding_attention") {
        ++sliding;
      } else if (t.string_value() != "full_attention") {
        return r.Error(absl::StrCat("\"layer_types\" entry \"", t.string_value(),
                                    "\" is not \"sliding_attention\" or \"full_attention\""));
      }
    }
  } else if (r.Find("sliding_window_pattern") != nullptr) {
    CLUSTERSIM_ASSIGN_OR_RETURN(auto period, r.PositiveInt("sliding_window_pattern", true));
    sliding = layers - layers / *period;
  } else if (model_type == "gemma2") {
    sliding = (layers + 1) / 2;
  }
  if (sliding == 0) return absl::OkStatus();
  if (*window < 2) return r.Error("\"sliding_window\" must be at least 2 tokens");
  c->sliding_window = *window;
  c->sliding_window_layers = sliding;
  return absl::OkStatus();
}

// A block-scaled FP8 checkpoint: "quantization_config" with "quant_method"
// "fp8" and "weight_block_size" [N, K] (DeepSeek-V3/R1: [128, 128]). The
// activations are quantized in groups of the K block, which is what
// fp8_weight_block records; per-tensor FP8 and other methods leave it 0.
absl::Status ReadFp8WeightBlock(const Reader& r, TransformerConfig* c) {
  const Value* q = r.Find("quantization_config");
  if (q == nullptr || q->kind_case() != Value::kStructValue) return absl::OkStatus();
  const auto& f = q->struct_value().fields();
  auto method = f.find("quant_method");
  auto block = f.find("weight_block_size");
  if (method == f.end() || method->second.string_value() != "fp8" || block == f.end() ||
      block->second.kind_case() == Value::kNullValue) {
    return absl::OkStatus();
  }
  const Value& b = block->second;
  const auto positive = [](const Value& v) {
    const std::optional<int> n = PositiveIntValue(v);
    return n && *n <= 65536;
  };
  if (b.kind_case() != Value::kListValue || b.list_value().values_size() != 2 ||
      !positive(b.list_value().values(0)) || !positive(b.list_value().values(1))) {
    return r.Error(
        "\"quantization_config.weight_block_size\" must be two positive integers [N, K], "
        "e.g. [128, 128]; or set model.fp8_weight_block");
  }
  c->fp8_weight_block = static_cast<int>(b.list_value().values(1).number_value());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TransformerConfig> ParseHfConfig(std::string_view json, std::string_view origin) {
  Struct root;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &root);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(origin), ": not a JSON object: ", parsed.message().ToString()));
  }
  LiftTextConfig(&root);
  const Reader r(root, origin);
  const std::string model_type = r.String("model_type");
  if (model_type == "gpt2") {
    return r.Error(
        "model_type \"gpt2\" uses n_embd/n_layer names, which are not imported; "
        "use a preset (`clustersim list models`) or model.* fields");
  }
  CLUSTERSIM_ASSIGN_OR_RETURN(auto hidden, r.PositiveInt("hidden_size", true));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto layers, r.PositiveInt("num_hidden_layers", true));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto heads, r.PositiveInt("num_attention_heads", true));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto kv_heads, r.PositiveInt("num_key_value_heads", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto ffn, r.PositiveInt("intermediate_size", true));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto vocab, r.PositiveInt("vocab_size", true));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto seq, r.PositiveInt("seq_length", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto max_pos, r.PositiveInt("max_position_embeddings", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto head_dim, r.PositiveInt("head_dim", false));
  // The routed expert count under its three names: Mixtral/gpt-oss,
  // Qwen2/3-MoE, DeepSeek.
  std::optional<int> experts;
  for (const char* field : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    CLUSTERSIM_ASSIGN_OR_RETURN(auto e, r.PositiveInt(field, false));
    if (e && !experts) experts = e;
  }
  CLUSTERSIM_ASSIGN_OR_RETURN(auto top_k, r.PositiveInt("num_experts_per_tok", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto tied, r.Bool("tie_word_embeddings", true));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto attention_bias, r.Bool("attention_bias", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto mlp_bias, r.Bool("mlp_bias", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto moe_ffn, r.PositiveInt("moe_intermediate_size", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto shared_ffn,
                              r.PositiveInt("shared_expert_intermediate_size", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto kv_lora, r.PositiveInt("kv_lora_rank", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto ffn_mlp, r.PositiveInt("intermediate_size_mlp", false));

  if (!seq && !max_pos) {
    return r.Error(
        "config.json has neither \"seq_length\" nor \"max_position_embeddings\"; "
        "add one, or set model.seq_length");
  }
  const int query_groups = kv_heads ? *kv_heads : *heads;
  if (*heads % query_groups != 0) {
    return r.Error(absl::StrCat("\"num_attention_heads\"=", *heads,
                                " is not divisible by \"num_key_value_heads\"=", query_groups,
                                "; each KV head must serve the same number of query heads"));
  }
  const bool head_dim_differs = head_dim && *head_dim * *heads != *hidden;
  if (*hidden % *heads != 0 && !head_dim && !kv_lora) {
    return r.Error(absl::StrCat("\"hidden_size\"=", *hidden,
                                " is not divisible by \"num_attention_heads\"=", *heads,
                                "; add \"head_dim\""));
  }
  if (experts.has_value() != top_k.has_value()) {
    return r.Error(
        "an expert count (\"num_local_experts\", \"num_experts\" or \"n_routed_experts\") and "
        "\"num_experts_per_tok\" must be given together");
  }
  if (experts && *top_k > *experts) {
    return r.Error(absl::StrCat("\"num_experts_per_tok\"=", *top_k,
                                " exceeds \"num_local_experts\"=", *experts));
  }
  const bool gated =
      absl::StartsWith(model_type, "llama") || model_type == "mistral" || model_type == "mixtral" ||
      absl::StartsWith(model_type, "qwen2") || absl::StartsWith(model_type, "qwen3") ||
      absl::StartsWith(model_type, "deepseek") || model_type == "gpt_oss" || r.GatedArchitecture();
  absl::StatusOr<Activation> activation = ParseActivation(r, gated);
  if (!activation.ok()) return activation.status();

  TransformerConfig c;
  const std::string name = r.String("_name_or_path");
  c.name = name.empty() ? absl::StrCat("hf:", std::string(origin)) : name;
  c.num_layers = *layers;
  c.hidden_size = *hidden;
  c.ffn_hidden_size = *ffn;
  c.num_attention_heads = *heads;
  c.num_query_groups = query_groups;
  c.seq_length = seq ? *seq : *max_pos;
  c.vocab_size = *vocab;
  c.activation = *activation;
  c.norm = r.Find("rms_norm_eps") != nullptr ? Norm::kRmsNorm : Norm::kLayerNorm;
  c.tied_embeddings = tied;
  c.learned_position_embeddings = false;
  c.add_bias_linear = attention_bias || mlp_bias;
  c.num_experts = experts ? *experts : 0;
  c.moe_top_k = top_k ? *top_k : 0;
  if (head_dim_differs && !kv_lora) c.kv_channels = *head_dim;
  if (experts) {
    if (ffn_mlp && absl::StartsWith(model_type, "llama4")) ReadLlama4Sizes(*ffn, *ffn_mlp, &c);
    CLUSTERSIM_RETURN_IF_ERROR(ReadMoeExtras(r, moe_ffn, shared_ffn, &c));
  }
  if (kv_lora) CLUSTERSIM_RETURN_IF_ERROR(ReadLatentAttention(r, *kv_lora, &c));
  CLUSTERSIM_RETURN_IF_ERROR(ReadGluAndYarn(r, model_type, &c));
  CLUSTERSIM_RETURN_IF_ERROR(ReadSlidingWindow(r, model_type, *layers, &c));
  if (model_type == "nemotron_h") CLUSTERSIM_RETURN_IF_ERROR(ReadNemotronH(r, &c));
  CLUSTERSIM_RETURN_IF_ERROR(ReadFp8WeightBlock(r, &c));
  if (absl::Status s = ValidateTransformer(c); !s.ok()) return r.Error(s.message());
  return c;
}

#undef ASSIGN_OR_RETURN_

absl::StatusOr<TransformerConfig> LoadHfConfigFile(const std::string& path) {
  absl::StatusOr<std::string> text = sim::ReadInputFile(path);
  if (text.status().code() == absl::StatusCode::kNotFound) {
    return absl::NotFoundError(absl::StrCat("cannot read Hugging Face config '", path,
                                            "' (relative paths resolve against the current "
                                            "directory)"));
  }
  if (!text.ok()) return text.status();
  return ParseHfConfig(*text, path);
}

}  // namespace clustersim::models
