#include "scenarios/accuracy/serving_modes.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/accuracy/inference_runs.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

constexpr char kPath[] = "/tests/validation/serving-deployed/runs.csv";

sim::CsvTable ShippedTable() {
  const char* src = std::getenv("CLUSTERSIM_SOURCE_DIR");
  EXPECT_NE(src, nullptr);
  std::ifstream in(std::string(src ? src : ".") + kPath);
  std::stringstream ss;
  ss << in.rdbuf();
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(ss.str(), "runs.csv");
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : sim::CsvTable{};
}

// The deployment table's header and one row built from named cells (the rest
// empty), so each test states only the cells it is about.
constexpr char kHeader[] =
    "id,source,model,params_b,layers,hidden,heads,kv_heads,ffn,vocab,device,num_devices,tp,"
    "weight_dtype,kv_dtype,framework,input_len,output_len,batch_or_concurrency,metric,value,unit,"
    "notes,mode,feature,concurrency,request_rate,ttft_limit_ms,tpot_limit_ms,spec_method,"
    "spec_tokens,acceptance_len,disagg_prefill,disagg_decode,ep,pp,attention_dp,num_nodes,dataset";

// A Llama 3.1 8B row on one H100 (dense, catalog device, bf16), 128 in / 64 out.
std::string Row(const std::string& id, const std::string& metric, const std::string& mode,
                const std::string& feature, const std::string& batch,
                const std::string& concurrency = "", const std::string& rate = "",
                const std::string& ep = "") {
  return id + ",src,Llama-3.1-8B,8.03,32,4096,32,8,14336,128256,H100 SXM 80GB,1,1,bf16,bf16,vLLM," +
         "128,64," + batch + "," + metric + ",10,ms,n," + mode + "," + feature + "," + concurrency +
         "," + rate + ",,,,,,,," + ep + ",,,,\n";
}

sim::CsvTable Parse(const std::string& rows) {
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(std::string(kHeader) + "\n" + rows, "t.csv");
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : sim::CsvTable{};
}

TEST(ServingModesTest, ShippedTableIsWellFormed) {
  const sim::CsvTable t = ShippedTable();
  EXPECT_TRUE(CheckServingDeployedTable(t, "runs.csv").ok())
      << CheckServingDeployedTable(t, "runs.csv");
  EXPECT_GE(t.rows.size(), 60u);
  EXPECT_TRUE(IsInferenceRunsTable(t));
}

TEST(ServingModesTest, EveryShippedRowRunsOrNamesWhatItNeeds) {
  const sim::CsvTable t = ShippedTable();
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(t);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), t.rows.size());
  for (size_t i = 0; i < runs->size(); ++i) {
    const InferenceRun& r = (*runs)[i];
    EXPECT_NE(r.scenario.has_value(), !r.not_supported.empty()) << r.id;
    const std::string& mode = t.Get(t.rows[i], "mode");
    // Offline and Server runs need modes the simulator does not have.
    if (mode == "offline") {
      EXPECT_THAT(r.not_supported, HasSubstr("offline")) << r.id;
    }
    if (mode == "server") {
      EXPECT_THAT(r.not_supported, HasSubstr("MLPerf Server")) << r.id;
    }
    // Poisson rows of fixed lengths on catalog GPUs run at the row's own rate.
    if (mode == "poisson") {
      ASSERT_TRUE(r.scenario) << r.id << ": " << r.not_supported;
      double rate = 0;
      ASSERT_TRUE(absl::SimpleAtod(t.Get(t.rows[i], "request_rate"), &rate)) << r.id;
      EXPECT_EQ(r.scenario->inference().workload().kind(), "poisson") << r.id;
      EXPECT_DOUBLE_EQ(r.scenario->inference().workload().request_rate_per_s(), rate) << r.id;
    }
  }
}

TEST(ServingModesTest, CheckNamesTheBadRowAndColumn) {
  EXPECT_TRUE(CheckServingDeployedTable(
                  Parse(Row("A", "ttft_ms", "fixed-batch", "fixed-batch", "8")), "t.csv")
                  .ok());
  std::string no_source = Row("A", "ttft_ms", "fixed-batch", "fixed-batch", "8");
  no_source.replace(no_source.find(",src,"), 5, ",,");
  EXPECT_THAT(CheckServingDeployedTable(Parse(no_source), "t.csv").message(),
              HasSubstr("(A): source is empty"));
  std::string text_value = Row("B", "ttft_ms", "fixed-batch", "fixed-batch", "8");
  text_value.replace(text_value.find(",10,ms,"), 7, ",ten,ms,");
  EXPECT_THAT(CheckServingDeployedTable(Parse(text_value), "t.csv").message(),
              HasSubstr("(B): value 'ten' is not a number"));
  EXPECT_THAT(
      CheckServingDeployedTable(Parse(Row("C", "ttft_ms", "burst", "fixed-batch", "8")), "t.csv")
          .message(),
      HasSubstr("(C): mode 'burst' is not one of"));
  EXPECT_THAT(CheckServingDeployedTable(Parse(Row("D", "ttft_ms", "offline", "warp", "")), "t.csv")
                  .message(),
              HasSubstr("(D): feature 'warp'"));
  EXPECT_THAT(
      CheckServingDeployedTable(Parse(Row("E", "ttft_ms", "fixed-batch", "fixed-batch", "8") +
                                      Row("E", "ttft_ms", "fixed-batch", "fixed-batch", "8")),
                                "t.csv")
          .message(),
      HasSubstr("line 3 (E): id repeats"));
  EXPECT_THAT(CheckServingDeployedTable(
                  Parse(Row("F", "ttft_ms", "concurrency", "concurrency", "", "many")), "t.csv")
                  .message(),
              HasSubstr("(F): concurrency 'many' is not a number"));
  EXPECT_THAT(CheckServingDeployedTable(
                  Parse(Row("G", "ttft_ms", "fixed-batch", "fixed-batch", "")), "t.csv")
                  .message(),
              HasSubstr("(G): batch_or_concurrency must give the batch"));
}

TEST(ServingModesTest, RowsNameTheFeatureTheyWaitFor) {
  const sim::CsvTable t =
      Parse(Row("off", "output_tokens_per_s_total", "offline", "offline", "") +
            Row("srv", "output_tokens_per_s_total", "server", "server", "") +
            Row("c64", "ttft_ms", "concurrency", "concurrency", "64", "64") +
            Row("spec", "ttft_ms", "fixed-batch", "fixed-batch;spec", "1") +
            Row("ep", "ttft_ms", "fixed-batch", "fixed-batch;moe", "1", "", "", "8") +
            Row("pd", "ttft_ms", "fixed-batch", "fixed-batch;disagg;fp4", "1"));
  auto reason = [&](size_t i) { return MapServingMode(t, t.rows[i]).not_supported; };
  EXPECT_THAT(reason(0), HasSubstr("needs offline max-throughput mode"));
  EXPECT_THAT(reason(1), HasSubstr("needs MLPerf Server mode"));
  EXPECT_THAT(reason(2), HasSubstr("closed-loop clients at fixed concurrency (64)"));
  EXPECT_THAT(reason(3), HasSubstr("speculative decoding"));
  EXPECT_THAT(reason(4), HasSubstr("expert parallelism (ep 8)"));
  EXPECT_THAT(reason(5), HasSubstr("disaggregated prefill/decode; FP4 weights"));
}

TEST(ServingModesTest, RunnableModesBecomeWorkloads) {
  const sim::CsvTable t = Parse(Row("fb", "e2e_latency_ms", "fixed-batch", "fixed-batch", "8") +
                                Row("c1", "ttft_ms", "concurrency", "concurrency", "1", "1") +
                                Row("po", "ttft_ms", "poisson", "poisson", "200", "", "2.5") +
                                Row("bad", "ttft_ms", "poisson", "poisson", "200"));
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(t);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 4u);
  // The cells of each row, read back from the scenario.
  ASSERT_TRUE((*runs)[0].scenario) << (*runs)[0].not_supported;
  EXPECT_EQ((*runs)[0].scenario->inference().workload().kind(), "fixed-batch");
  EXPECT_EQ((*runs)[0].scenario->inference().workload().batch_size(), 8);
  ASSERT_TRUE((*runs)[1].scenario) << (*runs)[1].not_supported;
  EXPECT_EQ((*runs)[1].scenario->inference().workload().batch_size(), 1);
  EXPECT_THAT((*runs)[1].assumptions, testing::Contains(HasSubstr("closed loop of one client")));
  ASSERT_TRUE((*runs)[2].scenario) << (*runs)[2].not_supported;
  const config::InferenceWorkload& wl = (*runs)[2].scenario->inference().workload();
  EXPECT_EQ(wl.kind(), "poisson");
  EXPECT_DOUBLE_EQ(wl.request_rate_per_s(), 2.5);
  EXPECT_EQ(wl.num_requests(), 200);
  EXPECT_THAT((*runs)[2].Setup(), HasSubstr("poisson 2.5/s x 200"));
  EXPECT_THAT((*runs)[3].not_supported, HasSubstr("poisson row needs request_rate > 0"));
}

TEST(ServingModesTest, TensorrtLlmAfter08DecodesGqaWithXqa) {
  // The same GQA row under three framework texts: after 0.8 XQA (grouped
  // heads, the default); 0.8 without XQA the per-query-head kernel.
  auto with_framework = [](const std::string& framework) {
    std::string row = Row("x", "ttft_ms", "fixed-batch", "fixed-batch", "1");
    row.replace(row.find(",vLLM,"), 6, "," + framework + ",");
    return row;
  };
  absl::StatusOr<std::vector<InferenceRun>> runs =
      MapInferenceRuns(Parse(with_framework("TensorRT-LLM 0.14.0 (Triton backend)") +
                             with_framework("TensorRT-LLM ~v1.0 trtllm-bench") +
                             with_framework("TensorRT-LLM 0.8.0 (gptSessionBenchmark)")));
  ASSERT_TRUE(runs.ok()) << runs.status();
  for (int i : {0, 1}) {
    ASSERT_TRUE((*runs)[i].scenario) << (*runs)[i].not_supported;
    EXPECT_FALSE((*runs)[i].scenario->inference().has_decode_attention_grouped_gqa());
    EXPECT_THAT((*runs)[i].assumptions, testing::Contains(HasSubstr("XQA")));
  }
  ASSERT_TRUE((*runs)[2].scenario) << (*runs)[2].not_supported;
  EXPECT_FALSE((*runs)[2].scenario->inference().decode_attention_grouped_gqa());
}

TEST(ServingModesTest, BlackwellDevicesMapToTheCatalog) {
  std::string b200 = Row("b", "ttft_ms", "fixed-batch", "fixed-batch", "1");
  b200.replace(b200.find("H100 SXM 80GB"), 13, "B200 180GB (DGX B200)");
  std::string gb200 = Row("g", "ttft_ms", "fixed-batch", "fixed-batch", "1");
  gb200.replace(gb200.find("H100 SXM 80GB"), 13, "GB200 192GB (GB200 NVL72)");
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(Parse(b200 + gb200));
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_TRUE((*runs)[0].scenario) << (*runs)[0].not_supported;
  EXPECT_EQ((*runs)[0].scenario->cluster().gpu(), "b200-sxm-180gb");
  ASSERT_TRUE((*runs)[1].scenario) << (*runs)[1].not_supported;
  EXPECT_EQ((*runs)[1].scenario->cluster().gpu(), "gb200-186gb");
}

}  // namespace
}  // namespace clustersim::scenarios
