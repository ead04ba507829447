#include "scenarios/accuracy/inference_row_cells.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace clustersim::scenarios {
namespace {

// Device text -> catalog name. All `needles` must occur, no `exclude` may.
struct DeviceRule {
  std::vector<const char*> needles;
  const char* exclude;
  const char* catalog;
};
const std::vector<DeviceRule>& DeviceRules() {
  static const auto* const kRules = new std::vector<DeviceRule>{
      {{"jetson"}, "nano", "jetson-agx-orin-64gb"},
      {{"h100"}, "pcie", "h100-sxm5-80gb"},
      {{"h200"}, "", "h200-sxm-141gb"},
      {{"gb200"}, "", "gb200-186gb"},
      {{"b200"}, "", "b200-sxm-180gb"},
      {{"a100", "40gb"}, "pcie", "a100-sxm4-40gb"},
      {{"a100"}, "pcie", "a100-sxm4-80gb"},
      {{"l40s"}, "", "l40s"},
      {{"rtx 4090"}, "", "rtx-4090"},
      {{"rtx 3090"}, "ti", "rtx-3090"},
      {{"a10g"}, "", "a10g"},
      {{"a10 "}, "", "a10-pcie-24gb"},
      {{"rtx a6000"}, "", "rtx-a6000"},
      {{"m2 ultra"}, "", "apple-m2-ultra"},
      {{"8480"}, "", "xeon-platinum-8480plus"},
  };
  return *kRules;
}

}  // namespace

std::string Lower(std::string_view s) { return absl::AsciiStrToLower(std::string(s)); }

bool IsMemoryMetric(std::string_view m) {
  return m == "weights_gib_per_gpu" || m == "kv_cache_tokens" || m == "max_concurrency" ||
         m == "kv_bytes_per_token";
}

bool IsDecodeMetric(std::string_view m) { return m == "gen_tokens_per_s" || m == "tpot_ms"; }

DeviceMatch MatchDevice(const std::string& text, std::vector<std::string>* assumptions) {
  const std::string d = Lower(text);
  if (d == "any") {
    assumptions->push_back(
        "device 'any' (a device-independent figure): evaluated on h100-sxm5-80gb");
    return {"h100-sxm5-80gb", ""};
  }
  for (const DeviceRule& r : DeviceRules()) {
    bool all = true;
    for (const char* n : r.needles) all = all && absl::StrContains(d, n);
    if (!all || (*r.exclude != '\0' && absl::StrContains(d, r.exclude))) continue;
    const std::string catalog(r.catalog);
    const bool exact_size = absl::StrContains(d, "gb") && !absl::StrContains(d, "assumed") &&
                            !absl::StrContains(d, "presumed");
    if (!exact_size || (absl::StartsWith(catalog, "a100-sxm4") && !absl::StrContains(d, "sxm"))) {
      assumptions->push_back(absl::StrCat("device '", text, "' taken as ", catalog));
    }
    return {catalog, ""};
  }
  return {"", absl::StrCat("device '", text,
                           "' is not in the device catalog (`clustersim list gpus`)")};
}

DtypeMatch MatchDtype(const std::string& text, bool kv, std::vector<std::string>* assumptions) {
  const std::string d = Lower(text);
  if (d.empty() || d == "unstated" || d == "n/a") {
    if (kv) assumptions->push_back(absl::StrCat("kv dtype '", text, "': the default"));
    return {"", 0, kv ? "" : "weight dtype not stated"};
  }
  if (absl::StrContains(d, "mxfp4")) {
    return {"", 0, "MXFP4 weights (no such format in the simulator)"};
  }
  // Meta's own FP8 release (a checkpoint of the meta-llama organisation named
  // *-FP8) quantizes only the inner layers' FFNs (fp8-mixed,
  // models/quantization.h); other FP8 checkpoints and engines (NVIDIA
  // ModelOpt, MLPerf, NIM, TensorRT-LLM) quantize every block linear.
  if (!kv && absl::StartsWith(d, "fp8") && absl::StrContains(d, "meta-llama/") &&
      absl::StrContains(d, "-fp8")) {
    assumptions->push_back(absl::StrCat(
        "weights '", text,
        "' as fp8-mixed: Meta's FP8 release keeps attention and the first and last layers' "
        "FFN in BF16 (llama-models fp8_mixed)"));
    return {"fp8-mixed", 0, ""};
  }
  if (absl::StartsWith(d, "fp8")) return {"fp8", 0, ""};
  if (!kv && absl::StartsWith(d, "nvfp4")) return {"nvfp4", 0, ""};
  if (!kv && absl::StartsWith(d, "fp4")) {
    // NVIDIA's Blackwell FP4 checkpoints (ModelOpt) are NVFP4.
    assumptions->push_back(absl::StrCat("weights '", text, "' as NVFP4"));
    return {"nvfp4", 0, ""};
  }
  if (absl::StartsWith(d, "bf16")) {
    if (absl::StrContains(d, "presumed")) assumptions->push_back("bf16 presumed by the source");
    return {"bf16", 0, ""};
  }
  if (absl::StartsWith(d, "fp16") || absl::StartsWith(d, "f16") || absl::StartsWith(d, "f32/f16")) {
    return {"fp16", 0, ""};
  }
  if (absl::StartsWith(d, "int8") || absl::StartsWith(d, "q8_0")) return {"int8", 0, ""};
  if (kv) return {"", 0, absl::StrCat("kv dtype '", text, "' is not one the simulator models")};
  if (absl::StrContains(d, "awq")) return {"int4-awq", 128, ""};
  if (absl::StrContains(d, "q4_0") || absl::StartsWith(d, "q4 ")) {
    assumptions->push_back(
        "llama.cpp Q4_0 as 4-bit weights with one 16-bit scale per 32 (int4-gptq, group 32)");
    return {"int4-gptq", 32, ""};
  }
  if (absl::StrContains(d, "gptq") || absl::StrContains(d, "4-bit") ||
      absl::StartsWith(d, "int4") || absl::StartsWith(d, "q4f16")) {
    assumptions->push_back(absl::StrCat("weights '", text, "' as int4-gptq, group 128"));
    return {"int4-gptq", 128, ""};
  }
  return {"", 0, absl::StrCat("weight dtype '", text, "' is not one the simulator models")};
}

int MatchLength(const std::string& text, const std::string& what, const std::string& metric,
                int unstated_decode, std::vector<std::string>* assumptions, std::string* reason) {
  if (text.empty()) {
    if (IsMemoryMetric(metric)) return 1;
    if (IsDecodeMetric(metric)) {
      assumptions->push_back(
          absl::StrCat(what, " length not stated: ", unstated_decode, " (a decode-rate metric)"));
      return unstated_decode;
    }
    *reason = absl::StrCat(what, " length not stated, and ", metric, " depends on it");
    return 0;
  }
  std::string digits = text;
  if (absl::StartsWith(text, ">")) digits = text.substr(1);
  int n = 0;
  if (!absl::SimpleAtoi(digits, &n) || n < 0) {
    *reason = absl::StrCat(what, " length '", text, "' is not a token count");
    return 0;
  }
  if (digits != text) {
    assumptions->push_back(absl::StrCat(what, " length '", text, "' taken as ", n));
  }
  if (n == 0) {
    assumptions->push_back(absl::StrCat(what, " length 0 (a ",
                                        what == "prompt" ? "decode-only" : "prefill-only",
                                        " test) simulated as 1 token"));
    return 1;
  }
  return n;
}

namespace {

// The first YYYY-MM-DD in `text`, or "".
std::string FirstDate(const std::string& text) {
  auto digits = [&](size_t at, size_t n) {
    for (size_t i = at; i < at + n; ++i) {
      if (!absl::ascii_isdigit(text[i])) return false;
    }
    return true;
  };
  for (size_t i = 0; i + 10 <= text.size(); ++i) {
    if (digits(i, 4) && text[i + 4] == '-' && digits(i + 5, 2) && text[i + 7] == '-' &&
        digits(i + 8, 2)) {
      return text.substr(i, 10);
    }
  }
  return "";
}

}  // namespace

KvAccountingMatch MatchKvAccounting(const std::string& framework, const std::string& source,
                                    std::vector<std::string>* assumptions) {
  KvAccountingMatch m;
  const std::string f = Lower(framework);
  if (absl::StrContains(f, "sglang")) {
    m.accounting = "sglang";
    constexpr std::string_view kFlag = "--mem-fraction-static";
    const size_t at = f.find(kFlag);
    if (at == std::string::npos) {
      assumptions->push_back(
          "SGLang's KV accounting with its default mem_fraction_static for the tp");
      return m;
    }
    const size_t begin = f.find_first_not_of(" =", at + kFlag.size());
    const size_t end = begin == std::string::npos ? begin : f.find_first_of(" )", begin);
    const std::string value =
        begin == std::string::npos ? "" : f.substr(begin, end == std::string::npos ? end : end - begin);
    if (!absl::SimpleAtod(value, &m.mem_fraction_static) || m.mem_fraction_static <= 0 ||
        m.mem_fraction_static > 1) {
      m.reason = absl::StrCat("framework '", framework,
                              "': --mem-fraction-static is not a fraction in (0, 1]");
      return m;
    }
    assumptions->push_back(absl::StrCat("SGLang's KV accounting at mem_fraction_static ", value));
    return m;
  }
  if (!absl::StrContains(f, "vllm")) return m;
  const std::string date = FirstDate(source);
  if (date.empty() || date < "2025-05-15") return m;
  m.accounting = "vllm-v1";
  assumptions->push_back(absl::StrCat("vLLM V1's KV accounting as of v0.9-v0.10 (source dated ",
                                      date, "): `vllm serve` limits, profile run with the sampler"));
  return m;
}

}  // namespace clustersim::scenarios
