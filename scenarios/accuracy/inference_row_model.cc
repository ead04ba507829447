// A serving row's model section: the catalog MoE preset its model text names,
// or a dense model from its architecture columns (inference_row_model.h).
#include "scenarios/accuracy/inference_row_model.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/transformer_config.h"
#include "scenarios/accuracy/inference_row_cells.h"

namespace clustersim::scenarios {
namespace {

// A positive count.
bool ParseInt(const std::string& s, int* out) { return absl::SimpleAtoi(s, out) && *out > 0; }

// Lower case without spaces, dashes, dots and underscores: "Mixtral 8x7B" ->
// "mixtral8x7b".
std::string Squash(std::string_view s) {
  std::string out;
  for (char c : Lower(s)) {
    if (c != ' ' && c != '-' && c != '_' && c != '.') out.push_back(c);
  }
  return out;
}

// The catalog's MoE presets (num_experts > 0), sorted.
std::vector<std::string> CatalogMoePresets() {
  std::vector<std::string> out;
  const models::ModelCatalog& catalog = models::ModelCatalog::Default();
  for (const std::string& name : catalog.Names()) {
    if (catalog.Find(name)->num_experts > 0) out.push_back(name);
  }
  return out;
}

// The catalog MoE preset a model text names ("Mixtral-8x7B-Instruct" ->
// "mixtral-8x7b"; the longest match wins), or "". DeepSeek-R1 is DeepSeek-V3's
// architecture (its HF config.json: DeepseekV3ForCausalLM with V3's
// dimensions; the R1 paper, arXiv 2501.12948, trains it from DeepSeek-V3-Base).
std::string CatalogMoePreset(std::string_view model) {
  std::string text = Squash(model);
  if (absl::StrContains(text, "deepseekr1")) text = "deepseekv3671b";
  std::string best;
  for (const std::string& name : CatalogMoePresets()) {
    if (absl::StrContains(text, Squash(name)) && name.size() > best.size()) best = name;
  }
  return best;
}

}  // namespace

std::string MapRowModel(const sim::CsvTable& t, const sim::CsvTable::Row& row,
                        config::ModelConfig* m, std::vector<std::string>* assumptions) {
  const std::string model = t.Get(row, "model");
  const std::string ffn_text = t.Get(row, "ffn");
  if (absl::StrContains(Lower(ffn_text), "expert") || absl::StrContains(Lower(model), "moe")) {
    // The table's columns give neither an MoE model's expert count and top-k
    // as numbers nor a head size apart from hidden/heads (Qwen3: 128, not
    // 4096/64), so an MoE row maps only when it names a catalog MoE preset,
    // whose architecture it then takes whole.
    const std::string preset = CatalogMoePreset(model);
    if (preset.empty()) {
      return absl::StrCat(
          "MoE model (", model,
          ") not in the model catalog; the table's columns do not give "
          "its expert count, top-k and head size, so an MoE row maps only when it names a "
          "catalog MoE preset (",
          absl::StrJoin(CatalogMoePresets(), ", "), ")");
    }
    m->set_preset(preset);
    assumptions->push_back(absl::StrCat(
        "MoE architecture (experts, top-k, dimensions) of the catalog preset ", preset));
    const bool row_mla = absl::StrContains(t.Get(row, "feature"), "mla");
    if (row_mla && models::ModelCatalog::Default().Find(preset)->kv_lora_rank == 0) {
      return absl::StrCat("multi-head latent attention: the catalog preset ", preset,
                          " has no kv_lora_rank");
    }
  } else {
    const std::string family = Lower(model);
    if (!absl::StrContains(family, "llama") && !absl::StrContains(family, "qwen") &&
        !absl::StrContains(family, "mistral")) {
      return absl::StrCat("model family of '", model, "' unknown (activation and norm)");
    }
    struct Dim {
      std::string_view column;
      void (config::ModelConfig::*set)(int32_t);
    };
    for (const Dim& dim : {Dim{"layers", &config::ModelConfig::set_num_layers},
                           Dim{"hidden", &config::ModelConfig::set_hidden_size},
                           Dim{"heads", &config::ModelConfig::set_num_attention_heads},
                           Dim{"kv_heads", &config::ModelConfig::set_num_query_groups},
                           Dim{"ffn", &config::ModelConfig::set_ffn_hidden_size},
                           Dim{"vocab", &config::ModelConfig::set_vocab_size}}) {
      int v = 0;
      if (!ParseInt(t.Get(row, dim.column), &v)) {
        return absl::StrCat("architecture column ", std::string(dim.column), " is '",
                            t.Get(row, dim.column), "', not a positive number");
      }
      (m->*dim.set)(v);
    }
    // Llama, Mistral and Qwen families: SwiGLU MLP, RMSNorm, untied output
    // layer (Mistral 7B's sliding window, 4,096 tokens, does not act on
    // shorter sequences).
    m->set_swiglu(true);
    m->set_norm("rmsnorm");
    m->set_tied_embeddings(false);
    if (absl::StrContains(family, "qwen")) {
      assumptions->push_back("Qwen's QKV biases not modelled");
    }
  }
  return "";
}

}  // namespace clustersim::scenarios
