#include "scenarios/accuracy/inference_row_cells.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::scenarios {
namespace {

TEST(MatchDevice, MapsSourceTextToTheCatalogAndSaysWhatItAssumed) {
  std::vector<std::string> notes;
  EXPECT_EQ(MatchDevice("NVIDIA H100 SXM 80GB", &notes).catalog, "h100-sxm5-80gb");
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(MatchDevice("A100", &notes).catalog, "a100-sxm4-80gb");
  ASSERT_EQ(notes.size(), 1u);  // no size stated: the assumption is written down
  EXPECT_EQ(MatchDevice("A100 40GB SXM", &notes).catalog, "a100-sxm4-40gb");
  const DeviceMatch unknown = MatchDevice("TPU v5e", &notes);
  EXPECT_TRUE(unknown.catalog.empty());
  EXPECT_NE(unknown.reason.find("TPU v5e"), std::string::npos);
}

TEST(MatchDtype, WeightAndKvFormats) {
  std::vector<std::string> notes;
  EXPECT_EQ(MatchDtype("FP8", false, &notes).name, "fp8");
  const DtypeMatch awq = MatchDtype("AWQ 4-bit", false, &notes);
  EXPECT_EQ(awq.name, "int4-awq");
  EXPECT_EQ(awq.group_size, 128);
  EXPECT_EQ(MatchDtype("FP4", false, &notes).name, "nvfp4");
  EXPECT_FALSE(MatchDtype("MXFP4", false, &notes).reason.empty());
  // A KV cache has no 4-bit format here, and an unstated one is the default.
  EXPECT_FALSE(MatchDtype("int4-gptq", true, &notes).reason.empty());
  const DtypeMatch unstated_kv = MatchDtype("", true, &notes);
  EXPECT_TRUE(unstated_kv.name.empty());
  EXPECT_TRUE(unstated_kv.reason.empty());
  EXPECT_FALSE(MatchDtype("", false, &notes).reason.empty());  // weights must be stated
}

// Meta's own FP8 checkpoints keep attention and the end layers' FFN in BF16
// (fp8-mixed), with the assumption written down; NVIDIA's stay all-FP8.
TEST(MatchDtype, MetaFp8CheckpointsAreFp8Mixed) {
  std::vector<std::string> notes;
  EXPECT_EQ(MatchDtype("fp8 (meta-llama/Meta-Llama-3.1-405B-Instruct-FP8)", false, &notes).name,
            "fp8-mixed");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("fp8-mixed"), std::string::npos);
  notes.clear();
  EXPECT_EQ(MatchDtype("fp8 (nvidia/Llama-3.1-405B-Instruct-FP8)", false, &notes).name, "fp8");
  EXPECT_EQ(MatchDtype("fp8", false, &notes).name, "fp8");
  EXPECT_EQ(MatchDtype("fp8 (meta-llama/Meta-Llama-3.1-405B-Instruct-FP8)", true, &notes).name,
            "fp8");  // a KV-cache cell
  EXPECT_TRUE(notes.empty());
}

TEST(MatchLength, BoundsZeroAndUnstatedLengths) {
  std::vector<std::string> notes;
  std::string reason;
  EXPECT_EQ(MatchLength("512", "prompt", "ttft_ms", 1, &notes, &reason), 512);
  EXPECT_EQ(MatchLength(">500", "prompt", "ttft_ms", 1, &notes, &reason), 500);
  EXPECT_EQ(MatchLength("0", "prompt", "tpot_ms", 1, &notes, &reason), 1);
  EXPECT_EQ(MatchLength("", "output", "gen_tokens_per_s", 128, &notes, &reason), 128);
  EXPECT_TRUE(reason.empty());
  EXPECT_EQ(notes.size(), 3u);
  EXPECT_EQ(MatchLength("", "prompt", "ttft_ms", 1, &notes, &reason), 0);
  EXPECT_NE(reason.find("ttft_ms"), std::string::npos);
  reason.clear();
  MatchLength("many", "prompt", "ttft_ms", 1, &notes, &reason);
  EXPECT_NE(reason.find("'many'"), std::string::npos);
}

// The framework cell picks the engine's KV accounting; vLLM's V1 profile
// only for sources dated from v0.9.0's release on.
TEST(MatchKvAccounting, SglangFractionAndDatedVllm) {
  std::vector<std::string> notes;
  const KvAccountingMatch sglang = MatchKvAccounting(
      "SGLang (--tp 4 --mem-fraction-static 0.93)", "issue (2025-07-22)", &notes);
  EXPECT_EQ(sglang.accounting, "sglang");
  EXPECT_DOUBLE_EQ(sglang.mem_fraction_static, 0.93);
  EXPECT_EQ(notes.back(), "SGLang's KV accounting at mem_fraction_static 0.93");
  const KvAccountingMatch sglang_default = MatchKvAccounting("SGLang + EAGLE3", "docs", &notes);
  EXPECT_EQ(sglang_default.accounting, "sglang");
  EXPECT_EQ(sglang_default.mem_fraction_static, 0);
  EXPECT_FALSE(
      MatchKvAccounting("SGLang (--mem-fraction-static 1.5)", "", &notes).reason.empty());
  EXPECT_EQ(MatchKvAccounting("vLLM (TP4)", "https://x/issues/21348 (2025-07-22)", &notes)
                .accounting,
            "vllm-v1");
  EXPECT_THAT(notes.back(), ::testing::HasSubstr("source dated 2025-07-22"));
  EXPECT_EQ(MatchKvAccounting("vLLM V1", "PR 12569 (mgoin log, 2025-01-30)", &notes).accounting,
            "");
  EXPECT_EQ(MatchKvAccounting("vLLM (CI build 9515)", "buildkite", &notes).accounting, "");
  EXPECT_EQ(MatchKvAccounting("TensorRT-LLM 0.8.0", "2025-09-01", &notes).accounting, "");
}

}  // namespace
}  // namespace clustersim::scenarios
