#include "scenarios/accuracy/inference_runs.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/accuracy/inference_validation.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

sim::CsvTable ShippedTable() {
  const char* src = std::getenv("CLUSTERSIM_SOURCE_DIR");
  EXPECT_NE(src, nullptr);
  std::ifstream in(std::string(src) + "/tests/validation/inference-runs.csv");
  std::stringstream ss;
  ss << in.rdbuf();
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(ss.str(), "inference-runs.csv");
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

std::map<std::string, InferenceRun> ShippedRuns() {
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(ShippedTable());
  EXPECT_TRUE(runs.ok()) << runs.status();
  std::map<std::string, InferenceRun> by_id;
  for (InferenceRun& r : *runs) by_id[r.id] = r;
  return by_id;
}

std::string Assumptions(const InferenceRun& r) { return absl::StrJoin(r.assumptions, "; "); }

TEST(InferenceRunsTest, EveryRowIsMappedOrSaysWhyNot) {
  const sim::CsvTable t = ShippedTable();
  EXPECT_TRUE(IsInferenceRunsTable(t));
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(t);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), t.rows.size());
  EXPECT_EQ(runs->size(), 54u);
  std::set<std::string> ids;
  int mapped = 0;
  for (const InferenceRun& r : *runs) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_NE(r.scenario.has_value(), !r.not_supported.empty()) << r.id;
    if (r.scenario) {
      ++mapped;
      EXPECT_FALSE(r.Setup().empty());
      EXPECT_TRUE(IsKnownServingMetric(r.metric)) << r.id;
    }
  }
  // The rows on catalog devices (dense Llama/Qwen models and catalog MoE
  // presets); the rest say why.
  EXPECT_EQ(mapped, 43);
}

TEST(InferenceRunsTest, TensorRtLlmThroughputRowMapsExactly) {
  const InferenceRun r = ShippedRuns().at("TRTV08-01");
  ASSERT_TRUE(r.scenario) << r.not_supported;
  const config::Scenario& s = *r.scenario;
  EXPECT_EQ(s.cluster().gpu(), "h100-sxm5-80gb");
  EXPECT_EQ(s.cluster().num_gpus(), 1);
  EXPECT_EQ(s.model().num_layers(), 32);
  EXPECT_EQ(s.model().hidden_size(), 4096);
  EXPECT_EQ(s.model().num_query_groups(), 32);
  EXPECT_EQ(s.model().ffn_hidden_size(), 11008);
  EXPECT_EQ(s.model().vocab_size(), 32000);
  EXPECT_TRUE(s.model().swiglu());
  EXPECT_EQ(s.inference().weight_dtype(), "fp8");
  EXPECT_EQ(s.inference().kv_cache_dtype(), "fp8");
  EXPECT_EQ(s.inference().workload().kind(), "fixed-batch");
  EXPECT_EQ(s.inference().workload().batch_size(), 896);
  EXPECT_EQ(s.inference().workload().prompt_length().value(), 128);
  EXPECT_EQ(s.inference().workload().output_length().value(), 128);
  EXPECT_EQ(r.metric, "output_tokens_per_s_per_gpu");
  EXPECT_DOUBLE_EQ(r.measured, 20241);
  EXPECT_TRUE(r.assumptions.empty()) << Assumptions(r);
  EXPECT_EQ(r.Setup(),
            "Llama-2-7B on 1x h100-sxm5-80gb (tp 1), weights fp8, kv fp8, prompt 128, output "
            "128, batch 896");
}

TEST(InferenceRunsTest, TensorParallelA100RowStatesItsDeviceAssumption) {
  const InferenceRun r = ShippedRuns().at("TRTV08-08");
  ASSERT_TRUE(r.scenario) << r.not_supported;
  EXPECT_EQ(r.scenario->cluster().gpu(), "a100-sxm4-80gb");
  EXPECT_EQ(r.scenario->cluster().num_gpus(), 4);
  EXPECT_EQ(r.scenario->inference().tensor_parallel_size(), 4);
  EXPECT_EQ(r.scenario->model().num_query_groups(), 8);  // Llama-2-70B GQA
  EXPECT_EQ(r.scenario->inference().weight_dtype(), "fp16");
  EXPECT_THAT(Assumptions(r), HasSubstr("taken as a100-sxm4-80gb"));
}

TEST(InferenceRunsTest, QuantisedEdgeAndAppleRows) {
  std::map<std::string, InferenceRun> runs = ShippedRuns();
  const InferenceRun& awq = runs.at("TINYCHAT-04");  // RTX 4090, AWQ, prompt ">500"
  ASSERT_TRUE(awq.scenario) << awq.not_supported;
  EXPECT_EQ(awq.scenario->cluster().gpu(), "rtx-4090");
  EXPECT_EQ(awq.scenario->inference().weight_dtype(), "int4-awq");
  EXPECT_EQ(awq.scenario->inference().quant_group_size(), 128);
  EXPECT_EQ(awq.scenario->inference().workload().prompt_length().value(), 500);
  EXPECT_EQ(awq.scenario->inference().workload().output_length().value(), 128);
  EXPECT_THAT(Assumptions(awq), HasSubstr("prompt length '>500' taken as 500"));
  EXPECT_THAT(Assumptions(awq), HasSubstr("output length not stated: 128"));

  const InferenceRun& mac = runs.at("LCPP-MAC-02");  // M2 Ultra, Q4_0, pp512
  ASSERT_TRUE(mac.scenario) << mac.not_supported;
  EXPECT_EQ(mac.scenario->cluster().gpu(), "apple-m2-ultra");
  EXPECT_EQ(mac.scenario->inference().weight_dtype(), "int4-gptq");
  EXPECT_EQ(mac.scenario->inference().quant_group_size(), 32);
  EXPECT_EQ(mac.scenario->inference().kv_cache_dtype(), "fp16");
  EXPECT_EQ(mac.scenario->inference().workload().output_length().value(), 1);
  EXPECT_THAT(Assumptions(mac), HasSubstr("Q4_0"));

  const InferenceRun& orin = runs.at("LCPP-CUDA-03");
  ASSERT_TRUE(orin.scenario) << orin.not_supported;
  EXPECT_EQ(orin.scenario->cluster().gpu(), "jetson-agx-orin-64gb");
  EXPECT_EQ(orin.scenario->inference().workload().prompt_length().value(), 1);  // tg128

  const InferenceRun& a10 = runs.at("A10-01");  // the A10, not AWS's A10G
  ASSERT_TRUE(a10.scenario) << a10.not_supported;
  EXPECT_EQ(a10.scenario->cluster().gpu(), "a10-pcie-24gb");
  EXPECT_EQ(a10.scenario->inference().workload().prompt_length().value(), 20);
  EXPECT_EQ(a10.scenario->inference().workload().output_length().value(), 267);
  const InferenceRun& a6000 = runs.at("TINYCHAT-02");
  ASSERT_TRUE(a6000.scenario) << a6000.not_supported;
  EXPECT_EQ(a6000.scenario->cluster().gpu(), "rtx-a6000");

  const InferenceRun& mem = runs.at("MEM-05");  // 405B FP8 on 8x H100, memory metric
  ASSERT_TRUE(mem.scenario) << mem.not_supported;
  EXPECT_EQ(mem.scenario->cluster().num_gpus(), 8);
  EXPECT_FALSE(mem.scenario->inference().has_kv_cache_dtype());
  EXPECT_EQ(mem.metric, "weights_gib_per_gpu");
}

TEST(InferenceRunsTest, UnsupportedRowsSayWhy) {
  std::map<std::string, InferenceRun> runs = ShippedRuns();
  EXPECT_THAT(runs.at("LCPP-SPARK-01").not_supported, HasSubstr("'DGX Spark GB10' is not in"));
  EXPECT_THAT(runs.at("LCPP-SPARK-04").not_supported, HasSubstr("'DGX Spark GB10' is not in"));
  ASSERT_TRUE(runs.at("MEM-03").scenario) << runs.at("MEM-03").not_supported;
  EXPECT_EQ(runs.at("MEM-03").scenario->model().preset(), "qwen3-235b-a22b");
  EXPECT_THAT(runs.at("LCPP-MAC-03").not_supported, HasSubstr("M2 Max"));
  EXPECT_THAT(runs.at("JETSON-02").not_supported, HasSubstr("Orin Nano"));
  EXPECT_THAT(runs.at("CPU-01").not_supported, HasSubstr("i5-6500"));
}

// A one-row table in the shipped columns.
std::vector<InferenceRun> MapOneRow(const std::string& model, const std::string& ffn,
                                    const std::string& kv_heads) {
  const std::string text =
      "id,source,model,params_b,layers,hidden,heads,kv_heads,ffn,vocab,device,num_devices,tp,"
      "weight_dtype,kv_dtype,framework,input_len,output_len,batch_or_concurrency,metric,value,"
      "unit,notes\n"
      "X-01,test,\"" + model + "\",7,32,4096,32," + kv_heads + ",\"" + ffn + "\"" +
      ",32000,H200 SXM 141GB,2,2,bf16,bf16,vLLM,32,128,8,e2e_latency_ms,1917.44,ms,\n";
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(text, "one-row.csv");
  if (!t.ok()) {
    ADD_FAILURE() << t.status();
    return {};
  }
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(*t);
  if (!runs.ok()) {
    ADD_FAILURE() << runs.status();
    return {};
  }
  return *runs;
}

TEST(InferenceRunsTest, AnMoeRowNamingACatalogPresetTakesItsArchitecture) {
  const std::vector<InferenceRun> runs =
      MapOneRow("Mixtral-8x7B-Instruct-v0.1 (MoE)", "MoE 8 experts top-2", "8");
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_TRUE(runs[0].scenario) << runs[0].not_supported;
  EXPECT_EQ(runs[0].scenario->model().preset(), "mixtral-8x7b");
  EXPECT_FALSE(runs[0].scenario->model().has_num_layers());  // the preset's, not the columns'
  EXPECT_THAT(Assumptions(runs[0]), HasSubstr("catalog preset mixtral-8x7b"));
  // The preset serves: vLLM CI build 9515's Mixtral 8x7B latency (1,917 ms).
  absl::StatusOr<double> e2e = PredictServingMetric(*runs[0].scenario, "e2e_latency_ms");
  ASSERT_TRUE(e2e.ok()) << e2e.status();
  EXPECT_NEAR(*e2e, 1917.44, 0.15 * 1917.44);

  const std::vector<InferenceRun> qwen =
      MapOneRow("Qwen3-235B-A22B (MoE 128 experts, 8 active)", "1536 per expert", "4");
  ASSERT_EQ(qwen.size(), 1u);
  ASSERT_TRUE(qwen[0].scenario) << qwen[0].not_supported;
  EXPECT_EQ(qwen[0].scenario->model().preset(), "qwen3-235b-a22b");

  const std::vector<InferenceRun> kimi =
      MapOneRow("Kimi-K2 (MoE 384 experts, 8 active)", "2048 per expert", "64");
  ASSERT_EQ(kimi.size(), 1u);
  EXPECT_FALSE(kimi[0].scenario);
  EXPECT_THAT(kimi[0].not_supported, HasSubstr("not in the model catalog"));
  EXPECT_THAT(kimi[0].not_supported, HasSubstr("mixtral-8x7b"));
}

TEST(InferenceRunsTest, MistralIsALlamaFamilyModel) {
  const std::vector<InferenceRun> runs = MapOneRow("Mistral-7B", "14336", "8");
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_TRUE(runs[0].scenario) << runs[0].not_supported;
  EXPECT_TRUE(runs[0].scenario->model().swiglu());
  EXPECT_EQ(runs[0].scenario->model().num_query_groups(), 8);
}

// A synthetic table: device capability, bad cells and a missing column.
TEST(InferenceRunsTest, BadRowsAreReportedNotDropped) {
  const std::string header =
      "id,source,model,params_b,layers,hidden,heads,kv_heads,ffn,vocab,device,num_devices,tp,"
      "weight_dtype,kv_dtype,framework,input_len,output_len,batch_or_concurrency,metric,value,"
      "unit,notes\n";
  const std::string rows =
      "FP8-A100,s,Llama-2-7B,6.74,32,4096,32,32,11008,32000,A100 80GB SXM,1,1,fp8,fp8,x,128,128,"
      "1,ttft_ms,10,ms,\n"
      "METRIC,s,Llama-2-7B,6.74,32,4096,32,32,11008,32000,H100 SXM 80GB,1,1,fp16,fp16,x,128,128,"
      "1,joules,10,J,\n"
      "VALUE,s,Llama-2-7B,6.74,32,4096,32,32,11008,32000,H100 SXM 80GB,1,1,fp16,fp16,x,128,128,"
      "1,ttft_ms,fast,ms,\n"
      "LEN,s,Llama-2-7B,6.74,32,4096,32,32,11008,32000,H100 SXM 80GB,1,1,fp16,fp16,x,,128,"
      "1,ttft_ms,10,ms,\n"
      "GPT,s,GPT-2,1.5,48,1600,25,25,6400,50257,H100 SXM 80GB,1,1,fp16,fp16,x,128,128,"
      "1,ttft_ms,10,ms,\n";
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(header + rows, "synthetic.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(*t);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 5u);
  EXPECT_EQ((*runs)[0].not_supported,
            "inference.weight_dtype: fp8 is not supported on a100-sxm4-80gb (no FP8 tensor "
            "cores); use int8 or bf16");
  EXPECT_THAT((*runs)[1].not_supported, HasSubstr("metric 'joules'"));
  EXPECT_THAT((*runs)[2].not_supported, HasSubstr("value 'fast'"));
  EXPECT_THAT((*runs)[3].not_supported, HasSubstr("prompt length not stated"));
  EXPECT_THAT((*runs)[4].not_supported, HasSubstr("model family of 'GPT-2' unknown"));
  EXPECT_EQ((*runs)[2].line, 4);

  absl::StatusOr<sim::CsvTable> narrow = sim::ParseCsv("id,device,metric\nX,h100,ttft_ms\n", "n.csv");
  ASSERT_TRUE(narrow.ok());
  EXPECT_FALSE(IsInferenceRunsTable(*narrow));
  absl::StatusOr<std::vector<InferenceRun>> bad = MapInferenceRuns(*narrow);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("column 'source' is missing"));
}

// Every mapped row is predicted by the serving simulator; the rest say why not.
TEST(InferenceValidationTest, ReportListsEveryRowWithPredictionOrReason) {
  absl::StatusOr<InferenceValidationReport> r =
      ValidateInferenceTable(ShippedTable(), "inference-runs.csv");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 54u);
  EXPECT_EQ(r->ran, 43);
  const std::string text = FormatInferenceValidationReport(*r, 15);
  for (const InferenceValidationRow& row : r->rows) {
    EXPECT_THAT(text, HasSubstr(row.run.id)) << row.run.id;
    EXPECT_EQ(row.predicted.has_value(), row.run.scenario.has_value()) << row.run.id;
    EXPECT_EQ(row.not_run.empty(), row.predicted.has_value()) << row.run.id;
  }
  EXPECT_THAT(text, HasSubstr("setup: Llama-2-7B on 1x h100-sxm5-80gb (tp 1)"));
  EXPECT_THAT(text, HasSubstr("not run: not supported: device"));
  EXPECT_THAT(text, HasSubstr("rows: 54, mapped to a scenario: 43, not supported: 11, ran: 43"));
  EXPECT_THAT(text, HasSubstr("MAPE "));
}

// The KV-per-token metric comes from the memory plan (Llama 2 7B in BF16:
// 32 layers x 2 x 32 KV heads x 128 x 2 B = 524,288 B), exactly.
TEST(InferenceValidationTest, PredictsMemoryMetricsFromThePlan) {
  absl::StatusOr<InferenceValidationReport> r =
      ValidateInferenceTable(ShippedTable(), "inference-runs.csv");
  ASSERT_TRUE(r.ok()) << r.status();
  for (const InferenceValidationRow& row : r->rows) {
    if (row.run.metric != "kv_bytes_per_token" || !row.predicted) continue;
    EXPECT_NEAR(*row.predicted, row.run.measured, 0.5) << row.run.id;
  }
}

// The fit's splits: even and odd rows partition the table, and the host-time
// override reaches every row (a batch-1 decode row's TPOT grows by exactly it).
TEST(InferenceValidationTest, SplitsPartitionTheTableAndTheOverrideReachesEveryRow) {
  absl::StatusOr<InferenceValidationReport> even =
      ValidateInferenceTable(ShippedTable(), "t", {.stride = 2, .offset = 0});
  absl::StatusOr<InferenceValidationReport> odd =
      ValidateInferenceTable(ShippedTable(), "t", {.stride = 2, .offset = 1});
  ASSERT_TRUE(even.ok() && odd.ok());
  EXPECT_EQ(even->rows.size() + odd->rows.size(), 54u);
  EXPECT_EQ(even->ran + odd->ran, 43);
  EXPECT_EQ(even->rows[0].run.id, "TRTV08-01");
  EXPECT_EQ(odd->rows[0].run.id, "TRTV08-02");

  auto tpot = [](const InferenceValidationReport& r, std::string_view id) {
    for (const InferenceValidationRow& row : r.rows) {
      if (row.run.id == id && row.predicted) return *row.predicted;
    }
    return -1.0;
  };
  absl::StatusOr<InferenceValidationReport> none =
      ValidateInferenceTable(ShippedTable(), "t", {.host_us = 0});
  absl::StatusOr<InferenceValidationReport> some =
      ValidateInferenceTable(ShippedTable(), "t", {.host_us = 3000});
  ASSERT_TRUE(none.ok() && some.ok());
  EXPECT_NEAR(tpot(*some, "A10-01") - tpot(*none, "A10-01"), 3.0, 1e-6);
  EXPECT_NEAR(tpot(*some, "TINYCHAT-01") - tpot(*none, "TINYCHAT-01"), 3.0, 1e-6);
}

}  // namespace
}  // namespace clustersim::scenarios
