// File: scenarios/accuracy/bridge_cuda_graphs.cc
#include "scenarios/accuracy/bridge_cuda_graphs.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace clustersim::scenarios {
namespace {

// 25.09, tag v0.1.0rc4 (Megatron-Core 0.14): scripts/performance/
// utils/helpers.py set_cuda_graph_overrides turns the perf matrix's
// `cuda_graphs` into enable_cuda_graph, which with cuda_graph_scope's default
// "full" captures every transformer layer whole (transformer_layer.py,
// cuda_graphs.py CudaGraphManager); Megatron-Core 0.14 refuses it with
// activation recompute. `cuda_graphs: true` in configs/*/*_llm_pretrain.yaml:
// Qwen3-30B-A3B on B200 and GB200; Qwen3-235B-A22B on GB200; Llama 3 8B on
// B200 and on GB200 in BF16 and FP8-MX (false for FP8-CS and FP8-DS); Llama 3
// 70B on B200 in BF16. DeepSeek-V3 and Llama 3.1 405B: false everywhere.
bool FullLayerGraphs2509(const std::string& preset, const std::string& gpu,
                         const std::string& precision, const std::string& fp8_recipe) {
  const bool b200 = absl::StartsWith(gpu, "b200"), gb200 = absl::StartsWith(gpu, "gb200");
  const bool bf16 = precision == "bf16";
  if (preset == "qwen3-30b-a3b") return b200 || gb200;
  if (preset == "qwen3-235b-a22b") return gb200;
  if (preset == "llama3-8b") return b200 || (gb200 && (bf16 || fp8_recipe == "mxfp8"));
  if (preset == "llama3-70b") return b200 && bf16;
  return false;
}

// 25.11, tag v0.2.0: scripts/performance/configs/*/workload_base_configs.py,
// applied by utils/helpers.py set_cuda_graph_overrides:
// - qwen3: QWEN3_30B_A3B_GB200_{BF16,FP8_CS} transformer_engine ["attn",
//   "moe_router", "moe_preprocess"], _GB200_FP8_MX, _B200_* and _H100_BF16
//   ["moe_router", "moe_preprocess"], _H100_FP8_CS none;
//   QWEN3_235B_A22B_GB200_* ["attn", "moe_router", "moe_preprocess"], B200
//   and H100 none.
// - deepseek: DEEPSEEK_V3_GB200_BASE_CONFIG ["moe_router", "moe_preprocess"];
//   B200 and H100 none.
// - gpt_oss: only the GB300 preset sets graphs.
// - llama3: LLAMA3_8B_{GB200,B200}_{BF16,FP8_CS,FP8_MX} and
//   LLAMA3_70B_B200_BF16 local "full_iteration" (also the NVFP4 presets, not
//   simulated); H100 none.
// - llama31: only the NVFP4 presets.
std::vector<std::string> Scopes2511(const std::string& preset, const std::string& gpu,
                                    const std::string& precision, const std::string& fp8_recipe) {
  const bool b200 = absl::StartsWith(gpu, "b200"), gb200 = absl::StartsWith(gpu, "gb200");
  const bool h100 = absl::StartsWith(gpu, "h100");
  const bool bf16 = precision == "bf16";
  const std::vector<std::string> router = {"moe_router", "moe_preprocess"};
  const std::vector<std::string> attn_router = {"attn", "moe_router", "moe_preprocess"};
  if (preset == "qwen3-30b-a3b") {
    if (gb200) return fp8_recipe == "mxfp8" && !bf16 ? router : attn_router;
    if (b200 || (h100 && bf16)) return router;
    return {};
  }
  if (preset == "qwen3-235b-a22b") return gb200 ? attn_router : std::vector<std::string>{};
  if (preset == "deepseek-v3-671b") return gb200 ? router : std::vector<std::string>{};
  if (preset == "llama3-8b" && (b200 || gb200)) return {"full_iteration"};
  if (preset == "llama3-70b" && b200 && bf16) return {"full_iteration"};
  return {};
}

// 25.09, tag v0.1.0rc4, scripts/performance/run_script.py: the Qwen3 presets
// apply_moe_token_drop on every GPU, DeepSeek-V3's on B200 and GB200
// (use_tokendrop); training/utils/moe_token_drop.py sets capacity factor 1.0
// and moe_pad_expert_input_to_capacity. 25.11 (v0.2.0) trains dropless.
bool PadToCapacity(const std::string& release, const std::string& preset,
                   const std::string& gpu) {
  if (release != "25.09") return false;
  if (preset == "qwen3-30b-a3b" || preset == "qwen3-235b-a22b") return true;
  return preset == "deepseek-v3-671b" &&
         (absl::StartsWith(gpu, "b200") || absl::StartsWith(gpu, "gb200"));
}

}  // namespace

BridgeGraphs BridgeCudaGraphs(const std::string& release, const std::string& preset,
                              const std::string& gpu, const std::string& precision,
                              const std::string& fp8_recipe, const std::string& recompute) {
  BridgeGraphs g;
  g.pad_to_capacity = PadToCapacity(release, preset, gpu);
  if (release == "25.09" && recompute == "none" &&
      FullLayerGraphs2509(preset, gpu, precision, fp8_recipe)) {
    g.scopes = {"full"};
  } else if (release == "25.11") {
    g.scopes = Scopes2511(preset, gpu, precision, fp8_recipe);
  }
  std::vector<std::string> parts;
  if (g.pad_to_capacity) {
    parts.push_back("MoE token drop padded to capacity (the release's performance script)");
  }
  if (!g.scopes.empty()) {
    parts.push_back(absl::StrCat("CUDA graphs over ", absl::StrJoin(g.scopes, ", "),
                                 " (the performance preset's cuda_graph_scope)"));
  }
  g.text = absl::StrJoin(parts, "; ");
  return g;
}

}  // namespace clustersim::scenarios
