#include "scenarios/accuracy/bridge_presets.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace clustersim::scenarios {
namespace {

// The recompute modules of Megatron-Bridge's DeepSeek-V3 performance presets,
// all with recompute_granularity "selective", by release and GPU:
// - 25.09, tag v0.1.0rc4, scripts/performance/run_script.py: H100
//   mla_up_proj + mlp; B200 mla_up_proj; GB200 mla_up_proj with token drop
//   (the presets drop tokens on Blackwell: DeepSeekDispatcher), else
//   mla_up_proj + mlp.
// - 25.11, tag v0.2.0, configs/deepseek/workload_base_configs.py (selective:
//   deepseek_llm_pretrain.py set_deepseek_v3_common_configs): GB200 and B200
//   mla_up_proj, H100 mla_up_proj + mlp.
// - 26.04, tag v0.4.0, configs/deepseek/deepseek_workload_base_configs.py:
//   GB200 FP8 (GB200_V1/V2) mlp; B200 mla_up_proj, with ep 32 (commit
//   5acef9309, FP8_MX_V2) mla_up_proj + mlp; H100 mla_up_proj + mlp.
// "mlp" replays only the dense MLP (DeepSeek-V3's first three layers).
std::vector<std::string> DeepSeekRecomputeModules(const std::string& release,
                                                  const std::string& gpu, int ep) {
  const bool h100 = absl::StartsWith(gpu, "h100"), gb200 = absl::StartsWith(gpu, "gb200");
  if (h100) return {"mla_up_proj", "mlp"};
  if (release == "26.04" || release.empty()) {
    if (gb200) return {"mlp"};
    if (ep == 32) return {"mla_up_proj", "mlp"};
  }
  return {"mla_up_proj"};
}

// The recompute modules of Megatron-Bridge's GPT-OSS 120B performance presets:
// - 25.09, tag v0.1.0rc4: no GPT-OSS preset.
// - 25.11, tag v0.2.0, configs/gpt_oss/workload_base_configs.py: GB200, B200
//   and H100 list recompute_modules ["layernorm", "moe_act"], but that
//   release's set_recompute_overrides (utils/helpers.py) sets only the list,
//   and neither the GPT-OSS recipe nor its provider sets a granularity;
//   Megatron-Core reads the list only under recompute_granularity "selective",
//   so nothing is replayed.
// - 26.04, tag v0.4.0, configs/gpt_oss/gpt_oss_workload_base_configs.py: the
//   same list on GB200, B200 and H100 (the V2 presets inherit V1's), and
//   _set_recompute_overrides (utils/overrides.py, commit c9dd05869, first
//   tagged v0.3.0) sets recompute_granularity "selective" with it.
// Other releases: as 26.04.
std::vector<std::string> GptOssRecomputeModules(const std::string& release,
                                                const std::string& gpu) {
  if (release == "25.09" || release == "25.11") return {};
  for (const char* g : {"gb200", "b200", "h100"}) {
    if (absl::StartsWith(gpu, g)) return {"layernorm", "moe_act"};
  }
  return {};
}

}  // namespace

std::vector<int> ChunkLayers(int n, int first, int middle, int last) {
  std::vector<int> v(n, middle);
  v.front() = first;
  v.back() = last;
  return v;
}

std::vector<int> DeepSeekLayout(const std::string& gpu, int pp, int vp) {
  const std::pair<int, int> key{pp, vp};
  if (key == std::pair{4, 1}) return {16, 16, 16, 13};
  if (key == std::pair{8, 1} || key == std::pair{4, 2}) return ChunkLayers(8, 8, 8, 5);
  if (key == std::pair{16, 1} || key == std::pair{8, 2} || key == std::pair{4, 4}) {
    return ChunkLayers(16, 4, 4, 1);
  }
  if (key == std::pair{8, 4} && absl::StartsWith(gpu, "h100")) return ChunkLayers(32, 1, 2, 0);
  return {};
}

std::string BridgeRelease(const std::string& stack) {
  for (const char* release : {"25.09", "25.11", "26.04"}) {
    if (absl::StrContains(stack, absl::StrCat("nemo-", release))) return release;
  }
  return "";
}

std::string DeepSeekDispatcher(const std::string& release, const std::string& gpu, int ep) {
  const bool h100 = absl::StartsWith(gpu, "h100"), gb200 = absl::StartsWith(gpu, "gb200");
  const bool b200 = absl::StartsWith(gpu, "b200");
  if (release == "25.09") return h100 ? "deepep" : "";
  if (release == "25.11") return gb200 ? "hybridep" : h100 ? "deepep" : "";
  if (release == "26.04" && b200 && ep == 32) return "deepep";
  return "hybridep";
}



std::vector<std::string> BridgeRecomputeModules(const std::string& release,
                                                const std::string& preset, const std::string& gpu,
                                                int ep, std::string* name) {
  if (preset == "deepseek-v3-671b") {
    *name = "DeepSeek-V3";
    return DeepSeekRecomputeModules(release, gpu, ep);
  }
  if (preset == "gpt-oss-120b") {
    *name = "GPT-OSS";
    return GptOssRecomputeModules(release, gpu);
  }
  return {};
}

int BridgeRecomputeBlockLayers(const std::string& release, const std::string& preset,
                               const std::string& gpu, const std::string& notes) {
  const bool preset_sets_it = release == "25.11" || release == "26.04";
  if (preset_sets_it && preset == "llama3-8b" && absl::StartsWith(gpu, "h100") &&
      absl::StrContains(notes, "FP8-CS")) {
    return 5;
  }
  return 0;
}

bool QwenA2aOverlap(const std::string& release, const std::string& preset,
                    const std::string& gpu) {
  const bool h100 = absl::StartsWith(gpu, "h100"), b200 = absl::StartsWith(gpu, "b200");
  if (release == "25.11") {
    return (preset == "qwen3-235b-a22b" && (h100 || b200)) ||
           (preset == "qwen3-30b-a3b" && h100);
  }
  return release == "26.04" && preset == "qwen3-235b-a22b" && h100;
}

bool DeepSeekA2aOverlap(const std::string& release, const std::string& gpu, int ep) {
  if (release == "25.09" || release == "25.11") return absl::StartsWith(gpu, "h100");
  return absl::StartsWith(gpu, "b200") && ep == 32;
}

bool GptOssV2Preset(const std::string& release, int global_batch) {
  return release != "25.09" && release != "25.11" && global_batch == 1280;
}

std::string QwenDispatcher(const std::string& release, const std::string& preset,
                           const std::string& gpu) {
  const bool gb200 = absl::StartsWith(gpu, "gb200");
  if (release == "25.11") return gb200 ? "hybridep" : "";
  if (release != "26.04") return "";
  if (preset == "qwen3-30b-a3b") {
    for (const char* g : {"gb200", "b200", "h100"}) {
      if (absl::StartsWith(gpu, g)) return "hybridep";
    }
    return "";
  }
  return gb200 ? "hybridep" : "";
}

}  // namespace clustersim::scenarios
