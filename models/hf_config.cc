#include "models/hf_config.h"

#include <cmath>
#include <optional>

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
    const double x = v->number_value();
    if (!(x >= 1) || x != std::floor(x) || x > 2147483647.0) {
      return Error(absl::StrCat("\"", field, "\" must be a positive integer (got ", x, ")"));
    }
    return std::optional<int>(static_cast<int>(x));
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
      for (const char* family : {"Llama", "Mistral", "Mixtral", "Qwen2"}) {
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
  const std::string act = r.String("hidden_act");
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

}  // namespace

absl::StatusOr<TransformerConfig> ParseHfConfig(std::string_view json, std::string_view origin) {
  Struct root;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &root);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(origin), ": not a JSON object: ", parsed.message().ToString()));
  }
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
  CLUSTERSIM_ASSIGN_OR_RETURN(auto experts, r.PositiveInt("num_local_experts", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto top_k, r.PositiveInt("num_experts_per_tok", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto tied, r.Bool("tie_word_embeddings", true));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto attention_bias, r.Bool("attention_bias", false));
  CLUSTERSIM_ASSIGN_OR_RETURN(auto mlp_bias, r.Bool("mlp_bias", false));

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
  if (*hidden % *heads != 0) {
    return r.Error(absl::StrCat("\"hidden_size\"=", *hidden,
                                " is not divisible by \"num_attention_heads\"=", *heads));
  }
  if (head_dim && *head_dim != *hidden / *heads) {
    return r.Error(absl::StrCat("\"head_dim\"=", *head_dim, " differs from hidden_size/",
                                "num_attention_heads=", *hidden / *heads,
                                "; attention wider or narrower than the hidden size is not "
                                "modelled"));
  }
  if (experts.has_value() != top_k.has_value()) {
    return r.Error("\"num_local_experts\" and \"num_experts_per_tok\" must be given together");
  }
  if (experts && *top_k > *experts) {
    return r.Error(absl::StrCat("\"num_experts_per_tok\"=", *top_k,
                                " exceeds \"num_local_experts\"=", *experts));
  }
  const bool gated = model_type == "llama" || model_type == "mistral" || model_type == "mixtral" ||
                     model_type == "qwen2" || r.GatedArchitecture();
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
