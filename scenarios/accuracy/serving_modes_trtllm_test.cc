// Serving-deployed rows run by TensorRT-LLM: trtllm-bench's own limits (with
// NVFP4 weights at half a byte), Triton-served engines and NIM profiles under
// trtllm-build's defaults, and the GQA decode kernel (XQA) by version.
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/accuracy/inference_runs.h"
#include "scenarios/accuracy/serving_modes_testing.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;
using serving_modes_testing::Parse;
using serving_modes_testing::Row;
using serving_modes_testing::Set;

TEST(ServingModesTest, TrtllmBenchRowsRunUnderTheToolsOwnLimits) {
  // Llama 3.1 8B BF16 on an 80 GiB H100, 128 in / 64 out. By hand (tuning.py):
  // weights 8.03e9 x 2 B = 14.957 GiB; KV (80 - 14.957) x 0.95 = 61.791 GiB;
  // 192 tokens x 2 x 32 x 8 x 128 x 2 B = 0.0234375 GiB a request: 2636.4
  // requests -> batch 256 x ceil(10.30) = 2816; tokens 2636.4 x (1 + 2) = 7909
  // -> 512 x ceil(15.45) = 8192.
  std::string row = Row("tb", "output_tokens_per_s_total", "offline", "offline", "");
  row = Set(row, "framework", "TensorRT-LLM ~v1.0 trtllm-bench throughput");
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(Parse(row));
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_TRUE((*runs)[0].scenario) << (*runs)[0].not_supported;
  const config::InferenceConfig& inf = (*runs)[0].scenario->inference();
  EXPECT_EQ(inf.max_batch_size(), 2816);
  EXPECT_EQ(inf.max_tokens_per_step(), 8192);
  EXPECT_TRUE(inf.chunked_prefill());
  // The engine flow's executor tunes its batch limit to the KV capacity.
  EXPECT_TRUE(inf.dynamic_batch_size_tuning());
  // A built engine's C++ executor: the serial per-iteration host time only.
  EXPECT_FALSE(inf.has_host_overhead_us_per_sequence());
  EXPECT_FALSE(inf.host_overlapped());
  EXPECT_THAT((*runs)[0].assumptions, testing::Contains(HasSubstr("trtllm-bench's own limits")));
  EXPECT_THAT((*runs)[0].assumptions, testing::Contains(HasSubstr("dynamic batch size tuning")));
}

TEST(ServingModesTest, TrtllmBenchPytorchRowsRunWholePromptsAndReserveRequests) {
  // The same row on the PyTorch backend: no chunked prefill, so whole
  // prompts join the decode steps within max(8192, 128 + 2816) tokens;
  // GUARANTEED_NO_EVICT admission; the KV cache 0.95 of the memory left; the
  // row's CUDA graph sizes kept up to the batch limit, which replaces 4096.
  std::string row = Row("tb", "output_tokens_per_s_total", "offline", "offline", "");
  row = Set(row, "framework", "TensorRT-LLM ~v1.0 trtllm-bench throughput (PyTorch backend)");
  row = Set(row, "cuda_graph_batch_sizes", "1;512;2048;4096;8192");
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(Parse(row));
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_TRUE((*runs)[0].scenario) << (*runs)[0].not_supported;
  const config::InferenceConfig& inf = (*runs)[0].scenario->inference();
  EXPECT_EQ(inf.max_batch_size(), 2816);
  EXPECT_EQ(inf.max_tokens_per_step(), 8192);
  EXPECT_FALSE(inf.chunked_prefill());
  EXPECT_TRUE(inf.mixed_whole_prompts());
  EXPECT_TRUE(inf.reserve_whole_request());
  EXPECT_DOUBLE_EQ(inf.kv_cache_free_memory_fraction(), 0.95);
  EXPECT_THAT(inf.cuda_graph_batch_sizes(), testing::ElementsAre(1, 512, 2048, 2816));
  EXPECT_FALSE(inf.dynamic_batch_size_tuning());
  // The Python executor's per-sequence host work, overlapped with the GPUs:
  // (45.11 ms - 1.25 ms) / 1,536 sequences.
  EXPECT_NEAR(inf.host_overhead_us_per_sequence(), 28.555, 1e-3);
  EXPECT_TRUE(inf.host_overlapped());
  EXPECT_THAT((*runs)[0].assumptions, testing::Contains(HasSubstr("no chunked prefill")));
  EXPECT_THAT((*runs)[0].assumptions, testing::Contains(HasSubstr("overlap scheduler")));
  // With graphs captured, a step that cannot replay one runs eagerly at
  // 35 us of dispatch per kernel (TensorRT-LLM PR #12653).
  EXPECT_DOUBLE_EQ(inf.eager_dispatch_us_per_kernel(), 35);
  EXPECT_THAT((*runs)[0].assumptions, testing::Contains(HasSubstr("runs eagerly at 35 us")));
  // No graphs listed: no eager cost (every step is costed alike).
  row = Set(row, "cuda_graph_batch_sizes", "");
  runs = MapInferenceRuns(Parse(row));
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_TRUE((*runs)[0].scenario) << (*runs)[0].not_supported;
  EXPECT_FALSE((*runs)[0].scenario->inference().has_eager_dispatch_us_per_kernel());
}

TEST(ServingModesTest, TritonServedTensorrtLlmEnginesRunUnderTheBuildDefaults) {
  // A Poisson row served through Triton's tensorrtllm_backend states no build
  // limits: trtllm-build's BuildConfig defaults (max batch 2048, max tokens
  // 8192) with in-flight batching of generation and context.
  std::string row = Row("trt", "ttft_ms", "poisson", "poisson", "500", "", "16");
  row = Set(row, "framework", "TensorRT-LLM 0.14.0 (Triton tensorrtllm_backend)");
  // The same row on vLLM keeps the simulator's defaults; a row that states
  // its own limits keeps them.
  const std::string vllm = Row("vllm", "ttft_ms", "poisson", "poisson", "500", "", "16");
  std::string stated = Set(row, "max_batch_size", "64");
  stated = Set(stated, "id", "stated");
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(Parse(row + vllm + stated));
  ASSERT_TRUE(runs.ok()) << runs.status();
  for (const InferenceRun& r : *runs) ASSERT_TRUE(r.scenario) << r.id << ": " << r.not_supported;
  const config::InferenceConfig& trt = (*runs)[0].scenario->inference();
  EXPECT_EQ(trt.max_batch_size(), 2048);
  EXPECT_EQ(trt.max_tokens_per_step(), 8192);
  EXPECT_TRUE(trt.chunked_prefill());
  EXPECT_EQ(trt.workload().kind(), "poisson");
  EXPECT_THAT((*runs)[0].assumptions, testing::Contains(HasSubstr("trtllm-build's defaults")));
  // Its client timed requests through Triton's request path; vLLM's row names none.
  EXPECT_EQ(trt.frontend().name(), "triton-trtllm");
  const config::InferenceConfig& v = (*runs)[1].scenario->inference();
  EXPECT_FALSE(v.has_frontend());
  EXPECT_FALSE(v.has_max_batch_size());
  EXPECT_FALSE(v.has_max_tokens_per_step());
  EXPECT_FALSE(v.chunked_prefill());
  EXPECT_EQ((*runs)[2].scenario->inference().max_batch_size(), 64);
  EXPECT_THAT((*runs)[2].assumptions,
              testing::Not(testing::Contains(HasSubstr("trtllm-build's defaults"))));
}

TEST(ServingModesTest, NimRowsRunAsTensorrtLlmEngines) {
  // NIM's optimized profiles are TensorRT-LLM engines: a closed loop of 25
  // clients runs with in-flight batching under the build defaults.
  std::string row = Row("nim", "ttft_ms", "concurrency", "concurrency", "25", "25");
  row = Set(row, "framework", "NVIDIA NIM 1.8.0 (llama-3.3-70b-instruct container)");
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(Parse(row));
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_TRUE((*runs)[0].scenario) << (*runs)[0].not_supported;
  const config::InferenceConfig& inf = (*runs)[0].scenario->inference();
  EXPECT_EQ(inf.workload().kind(), "concurrency");
  EXPECT_EQ(inf.workload().concurrency(), 25);
  EXPECT_EQ(inf.max_batch_size(), 2048);
  EXPECT_EQ(inf.max_tokens_per_step(), 8192);
  EXPECT_TRUE(inf.chunked_prefill());
  EXPECT_EQ(inf.frontend().name(), "openai-http");
  EXPECT_THAT((*runs)[0].assumptions,
              testing::Contains(HasSubstr("NIM's optimized profile taken as a TensorRT-LLM")));
  // The NIM benchmarking guide's sweep: 10 measured and 2 warm-up requests
  // per client; other closed loops keep AIPerf's default and no warm-up.
  EXPECT_EQ(inf.workload().num_requests(), 250);
  EXPECT_EQ(inf.workload().warmup_requests(), 50);
  EXPECT_THAT((*runs)[0].assumptions, testing::Contains(HasSubstr("after 50 warm-up requests")));
  absl::StatusOr<std::vector<InferenceRun>> plain =
      MapInferenceRuns(Parse(Row("c25", "ttft_ms", "concurrency", "concurrency", "25", "25")));
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE((*plain)[0].scenario) << (*plain)[0].not_supported;
  EXPECT_EQ((*plain)[0].scenario->inference().workload().num_requests(), 50);
  EXPECT_FALSE((*plain)[0].scenario->inference().workload().has_warmup_requests());
}

TEST(ServingModesTest, TrtllmBenchCountsNvfp4WeightsAtHalfAByte) {
  // Llama 3.1 70B on one 180 GiB B200, 1000 in / 1000 out, BF16 KV. By hand
  // (tuning.py, BYTES_PER_ELEM[NVFP4] = 0.5): weights 70.6e9 x 0.5 B =
  // 32.875 GiB; KV (180 - 32.875) x 0.95 = 139.77 GiB; 2000 tokens x 2 x 80 x
  // 8 x 128 x 2 B = 0.61035 GiB a request: 229.0 requests -> batch
  // 32 x ceil(7.16) = 256 (FP8 weights would give 177.8 -> 192).
  std::string row = Row("fp4", "output_tokens_per_s_total", "offline", "offline;fp4", "");
  const std::vector<std::pair<std::string, std::string>> cells = {
      {"params_b", "70.6"},        {"layers", "80"},
      {"hidden", "8192"},          {"heads", "64"},
      {"ffn", "28672"},            {"device", "B200 180GB (DGX B200)"},
      {"weight_dtype", "nvfp4"},   {"input_len", "1000"},
      {"output_len", "1000"},      {"framework", "TensorRT-LLM trtllm-bench"}};
  for (const auto& [column, value] : cells) row = Set(row, column, value);
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(Parse(row));
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_TRUE((*runs)[0].scenario) << (*runs)[0].not_supported;
  const config::InferenceConfig& inf = (*runs)[0].scenario->inference();
  EXPECT_EQ(inf.weight_dtype(), "nvfp4");
  EXPECT_EQ(inf.max_batch_size(), 256);
  EXPECT_EQ(inf.max_tokens_per_step(), 2048);
}

TEST(ServingModesTest, TensorrtLlmAfter08DecodesGqaWithXqa) {
  // The same GQA row under five framework texts: after 0.8 XQA (grouped
  // heads, the default), NVIDIA's MLPerf v4.1 and later submissions too (they
  // build a 2024-07 or later TensorRT-LLM); 0.8 without XQA, or a version
  // unknown, the per-query-head kernel.
  auto with_framework = [](const std::string& framework) {
    std::string row = Row("x", "ttft_ms", "fixed-batch", "fixed-batch", "1");
    row.replace(row.find(",vLLM,"), 6, "," + framework + ",");
    return row;
  };
  absl::StatusOr<std::vector<InferenceRun>> runs =
      MapInferenceRuns(Parse(with_framework("TensorRT-LLM 0.14.0 (Triton backend)") +
                             with_framework("TensorRT-LLM ~v1.0 trtllm-bench") +
                             with_framework("TensorRT-LLM 0.8.0 (gptSessionBenchmark)") +
                             with_framework("TensorRT-LLM (NVIDIA MLPerf Inference v4.1 closed)") +
                             with_framework("TensorRT-LLM (NVIDIA MLPerf Inference v4.0 closed)")));
  ASSERT_TRUE(runs.ok()) << runs.status();
  for (int i : {0, 1, 3}) {
    ASSERT_TRUE((*runs)[i].scenario) << (*runs)[i].not_supported;
    EXPECT_FALSE((*runs)[i].scenario->inference().has_decode_attention_grouped_gqa());
    EXPECT_THAT((*runs)[i].assumptions, testing::Contains(HasSubstr("XQA")));
  }
  EXPECT_THAT((*runs)[3].assumptions, testing::Contains(HasSubstr("MLPerf v4.1+")));
  for (int i : {2, 4}) {
    ASSERT_TRUE((*runs)[i].scenario) << (*runs)[i].not_supported;
    EXPECT_FALSE((*runs)[i].scenario->inference().decode_attention_grouped_gqa());
  }
}

}  // namespace
}  // namespace clustersim::scenarios
