// Serving-deployed rows mapped to scenarios (serving_modes.h): the table's
// check, the features a row waits for, benchmark modes becoming workloads,
// expert parallelism and stated limits, speculation and disaggregation, and
// device names.
#include "scenarios/accuracy/serving_modes.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/accuracy/inference_runs.h"
#include "scenarios/accuracy/inference_validation.h"
#include "scenarios/accuracy/serving_modes_testing.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;
using serving_modes_testing::Parse;
using serving_modes_testing::Row;
using serving_modes_testing::Set;

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
  std::string no_tp = Row("notp", "output_tokens_per_s_total", "offline", "offline", "");
  no_tp = Set(Set(no_tp, "tp", ""), "num_devices", "");
  const sim::CsvTable t = Parse(
      Row("srv", "output_tokens_per_s_total", "server", "server", "") +
      Row("c0", "ttft_ms", "concurrency", "concurrency", "") +
      Set(Row("spec", "ttft_ms", "fixed-batch", "fixed-batch;spec", "1"), "spec_method", "mtp") +
      Row("ep", "ttft_ms", "fixed-batch", "fixed-batch;moe", "1", "", "", "8") +
      Row("pd", "ttft_ms", "fixed-batch", "fixed-batch;disagg;fp4", "1") + no_tp +
      Set(Row("len", "output_tokens_per_s_total", "offline", "offline", ""), "input_len", ""));
  auto reason = [&](size_t i) { return MapServingMode(t, t.rows[i]).not_supported; };
  EXPECT_THAT(reason(0), HasSubstr("needs the server run's p99 TTFT/TPOT limits (not stated)"));
  EXPECT_THAT(reason(1), HasSubstr("closed-loop clients at a stated concurrency (not stated)"));
  EXPECT_THAT(reason(2), HasSubstr("the acceptance length the source does not state"));
  EXPECT_THAT(reason(3), HasSubstr("expert parallelism (ep 8, tp '1'"));
  EXPECT_THAT(reason(4), HasSubstr("both pools' GPU counts"));
  EXPECT_THAT(reason(4), testing::Not(HasSubstr("FP4")));
  EXPECT_THAT(reason(5), HasSubstr("the tensor-parallel size the source does not state (nor "
                                   "the GPU count to infer it from)"));
  EXPECT_THAT(reason(6), HasSubstr("the request lengths of"));
}

TEST(ServingModesTest, OfflineRowsQueueTheStatedRequests) {
  const std::string off = Row("off", "output_tokens_per_s_total", "offline", "offline", "");
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(
      Parse(Set(off, "dataset", "\"synthetic fixed 128/64, 3000 requests\"") + off));
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_TRUE((*runs)[0].scenario) << (*runs)[0].not_supported;
  const config::InferenceWorkload& wl = (*runs)[0].scenario->inference().workload();
  EXPECT_EQ(wl.kind(), "offline");
  EXPECT_EQ(wl.num_requests(), 3000);
  EXPECT_FALSE(wl.has_batch_size());
  EXPECT_THAT((*runs)[0].Setup(), HasSubstr("offline x 3000"));
  // vLLM rows keep the simulator's scheduler defaults.
  EXPECT_FALSE((*runs)[0].scenario->inference().has_max_batch_size());
  // No count in the dataset cell: serve's default, printed.
  ASSERT_TRUE((*runs)[1].scenario) << (*runs)[1].not_supported;
  EXPECT_EQ((*runs)[1].scenario->inference().workload().num_requests(), 200);
  EXPECT_THAT((*runs)[1].assumptions, testing::Contains(HasSubstr("200 (serve's default)")));
}

TEST(ServingModesTest, ExpertParallelRowsNeedEpEqualTpWithDataParallelAttention) {
  // DeepSeek-R1 (DeepSeek-V3's architecture) on 8 B200s, NVFP4, ep 8.
  auto deepseek = [](const std::string& id, const std::string& ep, const std::string& dp) {
    std::string row = Row(id, "output_tokens_per_s_total", "concurrency",
                          "concurrency;moe;mla;fp4", "64", "64", "", ep);
    for (const auto& [column, value] : std::vector<std::pair<std::string, std::string>>{
             {"model", "DeepSeek-R1 (MoE MLA)"},
             {"device", "B200 180GB (DGX B200)"},
             {"num_devices", "8"},
             {"tp", "8"},
             {"weight_dtype", "nvfp4 (nvidia/DeepSeek-R1-FP4)"},
             {"attention_dp", dp}}) {
      row = Set(row, column, value);
    }
    return row;
  };
  absl::StatusOr<std::vector<InferenceRun>> runs =
      MapInferenceRuns(Parse(deepseek("ep8", "8", "true") + deepseek("ep3", "3", "") +
                             deepseek("dp", "", "true") + deepseek("ep2", "2", "")));
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_TRUE((*runs)[0].scenario) << (*runs)[0].not_supported;
  const config::Scenario& s = *(*runs)[0].scenario;
  EXPECT_EQ(s.model().preset(), "deepseek-v3-671b");
  EXPECT_EQ(s.inference().expert_parallel_size(), 8);
  EXPECT_EQ(s.inference().weight_dtype(), "nvfp4");
  EXPECT_FALSE(s.inference().has_max_batch_size());  // the simulator's default
  EXPECT_THAT((*runs)[1].not_supported, HasSubstr("only ep = tp with data-parallel attention"));
  EXPECT_THAT((*runs)[2].not_supported,
              HasSubstr("data-parallel attention without expert parallelism"));
  // TensorRT-LLM's mixed split (experts ep 2 x tp 4 under attention tp 8)
  // runs as tp 8: the same expert bytes on every GPU.
  ASSERT_TRUE((*runs)[3].scenario) << (*runs)[3].not_supported;
  EXPECT_EQ((*runs)[3].scenario->inference().tensor_parallel_size(), 8);
  EXPECT_FALSE((*runs)[3].scenario->inference().has_expert_parallel_size());
  EXPECT_THAT(absl::StrJoin((*runs)[3].assumptions, "; "),
              HasSubstr("MoE experts split ep 2 x tp 4 run as tp 8"));
}

TEST(ServingModesTest, StatedLimitsArePerAttentionRank) {
  // ep 8 with data-parallel attention: 384 sequences and 1536 tokens per rank
  // are 3072 and 12288 for the replica; without EP the limits stand as stated.
  std::string ep = Row("ep", "output_tokens_per_s_total", "concurrency", "concurrency;moe", "64",
                       "64", "", "8");
  for (const auto& [column, value] : std::vector<std::pair<std::string, std::string>>{
           {"model", "DeepSeek-R1 (MoE MLA)"}, {"device", "B200 180GB (DGX B200)"},
           {"num_devices", "8"}, {"tp", "8"}, {"weight_dtype", "nvfp4"},
           {"attention_dp", "true"}, {"max_batch_size", "384"}, {"max_num_tokens", "1536"}}) {
    ep = Set(ep, column, value);
  }
  std::string dense = Row("dense", "ttft_ms", "concurrency", "concurrency", "64", "64");
  dense = Set(Set(dense, "max_batch_size", "96"), "framework", "TensorRT-LLM trtllm-bench");
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(Parse(ep + dense));
  ASSERT_TRUE(runs.ok()) << runs.status();
  for (const InferenceRun& r : *runs) ASSERT_TRUE(r.scenario) << r.id << ": " << r.not_supported;
  EXPECT_EQ((*runs)[0].scenario->inference().max_batch_size(), 3072);
  EXPECT_EQ((*runs)[0].scenario->inference().max_tokens_per_step(), 12288);
  EXPECT_THAT((*runs)[0].assumptions, testing::Contains(HasSubstr("per attention rank (x8)")));
  EXPECT_EQ((*runs)[1].scenario->inference().max_batch_size(), 96);
  EXPECT_FALSE((*runs)[1].scenario->inference().has_max_tokens_per_step());
}

TEST(ServingModesTest, ChunkedContextRowsChunkTheirPrompts) {
  // A row stating chunked-context runs its prompts in chunks of the token
  // budget; a row without it keeps prefill-only iterations.
  std::string chunked = Row("chunked", "output_tokens_per_s_total", "offline",
                            "offline;chunked-context", "64");
  chunked = Set(Set(chunked, "max_batch_size", "768"), "max_num_tokens", "768");
  const std::string plain = Row("plain", "output_tokens_per_s_total", "offline", "offline", "64");
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(Parse(chunked + plain));
  ASSERT_TRUE(runs.ok()) << runs.status();
  for (const InferenceRun& r : *runs) ASSERT_TRUE(r.scenario) << r.id << ": " << r.not_supported;
  EXPECT_TRUE((*runs)[0].scenario->inference().chunked_prefill());
  EXPECT_EQ((*runs)[0].scenario->inference().max_tokens_per_step(), 768);
  EXPECT_FALSE((*runs)[1].scenario->inference().chunked_prefill());
}

TEST(ServingModesTest, MlaRowsNeedALatentAttentionPreset) {
  std::string mixtral = Row("mx", "ttft_ms", "fixed-batch", "fixed-batch;moe;mla", "1");
  mixtral = Set(Set(mixtral, "model", "Mixtral-8x7B (MoE)"), "num_devices", "2");
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(Parse(Set(mixtral, "tp", "2")));
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_THAT((*runs)[0].not_supported, HasSubstr("mixtral-8x7b has no kv_lora_rank"));
}

TEST(ServingModesTest, ClosedLoopsOfManyClientsAndServerRuns) {
  std::string srv = Row("srv", "output_tokens_per_s_total", "server", "server", "");
  srv = Set(Set(srv, "ttft_limit_ms", "2000"), "tpot_limit_ms", "200");
  absl::StatusOr<std::vector<InferenceRun>> runs =
      MapInferenceRuns(Parse(Row("c64", "ttft_ms", "concurrency", "concurrency", "64", "64") +
                             Row("c3", "ttft_ms", "concurrency", "concurrency", "3", "3") + srv));
  ASSERT_TRUE(runs.ok()) << runs.status();
  for (const InferenceRun& r : *runs) ASSERT_TRUE(r.scenario) << r.id << ": " << r.not_supported;
  // AIPerf's default request count for synthetic data: max(10, 2 x clients).
  const config::InferenceWorkload& c64 = (*runs)[0].scenario->inference().workload();
  EXPECT_EQ(c64.kind(), "concurrency");
  EXPECT_EQ(c64.concurrency(), 64);
  EXPECT_EQ(c64.num_requests(), 128);
  EXPECT_THAT((*runs)[0].assumptions, testing::Contains(HasSubstr("AIPerf's default")));
  EXPECT_EQ((*runs)[1].scenario->inference().workload().num_requests(), 10);
  const config::InferenceConfig& s = (*runs)[2].scenario->inference();
  EXPECT_EQ(s.workload().kind(), "server");
  EXPECT_DOUBLE_EQ(s.target_time_to_first_token_ms(), 2000);
  EXPECT_DOUBLE_EQ(s.target_time_per_output_token_ms(), 200);
  // MLPerf's Server run: 600 s of arrivals, at least loadgen's 100 queries.
  EXPECT_EQ(s.workload().num_requests(), 100);
  EXPECT_DOUBLE_EQ(s.workload().duration_s(), 600);
  EXPECT_THAT((*runs)[2].Setup(), HasSubstr("server at p99 TTFT <= 2000 ms, TPOT <= 200 ms"));
  // A latency of a server run: the run at its scheduled rate for 600 s.
  const sim::CsvTable lat = Parse(Set(
      Set(Set(srv, "metric", "ttft_p99_ms"), "unit", "ms"), "request_rate", "101.25"));
  const ServingModeMapping m = MapServingMode(lat, lat.rows[0]);
  ASSERT_EQ(m.not_supported, "");
  EXPECT_EQ(m.workload_kind, "poisson");
  EXPECT_DOUBLE_EQ(m.request_rate, 101.25);
  EXPECT_EQ(m.num_requests, 60750);
  EXPECT_EQ(m.ttft_limit_ms, 0);
}

TEST(ServingModesTest, SpeculativeAndDisaggregatedRowsMapWhenStated) {
  std::string spec = Row("sp", "tpot_ms", "fixed-batch", "fixed-batch;spec", "1");
  spec =
      Set(Set(Set(spec, "spec_method", "eagle3"), "spec_tokens", "3"), "acceptance_len", "1.875");
  std::string pd = Row("pd", "ttft_ms", "poisson", "poisson;disagg", "100", "", "2");
  pd = Set(Set(pd, "disagg_prefill", "1 node (2 GPUs)"), "disagg_decode", "1 node (6 GPUs)");
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(Parse(spec + pd));
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_TRUE((*runs)[0].scenario) << (*runs)[0].not_supported;
  // 1 + a + a^2 + a^3 = 1.875 at a = 0.5.
  const config::SpeculativeConfig& sc = (*runs)[0].scenario->inference().speculative();
  EXPECT_EQ(sc.method(), "eagle");
  EXPECT_EQ(sc.num_speculative_tokens(), 3);
  EXPECT_NEAR(sc.acceptance_rate(), 0.5, 1e-9);
  ASSERT_TRUE((*runs)[1].scenario) << (*runs)[1].not_supported;
  const config::Scenario& d = *(*runs)[1].scenario;
  EXPECT_EQ(d.inference().disaggregated().prefill().num_gpus(), 2);
  EXPECT_EQ(d.inference().disaggregated().decode().num_gpus(), 6);
  EXPECT_EQ(d.inference().disaggregated().decode().tensor_parallel_size(), 1);
  EXPECT_EQ(d.cluster().num_gpus(), 8);
}

TEST(ServingModesTest, PerUserRateAndSpeculativeSpeedup) {
  // One client, MTP with 3 drafts at 2 tokens per step, 128 in / 64 out.
  std::string row = Row("U1", "output_tokens_per_s_per_user", "concurrency",
                        "concurrency;spec", "1", "1");
  row = Set(Set(Set(row, "spec_method", "mtp"), "spec_tokens", "3"), "acceptance_len", "2");
  const std::string speedup = Set(Set(row, "id", "U2"), "metric", "speedup_vs_no_spec");
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(Parse(row + speedup));
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_TRUE((*runs)[0].scenario) << (*runs)[0].not_supported;
  ASSERT_TRUE((*runs)[1].scenario) << (*runs)[1].not_supported;
  const config::Scenario& s = *(*runs)[0].scenario;
  // A batch of one: the per-user rate is the whole output rate.
  absl::StatusOr<double> user = PredictServingMetric(s, "output_tokens_per_s_per_user");
  absl::StatusOr<double> total = PredictServingMetric(s, "output_tokens_per_s_total");
  ASSERT_TRUE(user.ok() && total.ok()) << user.status() << total.status();
  EXPECT_DOUBLE_EQ(*user, *total);
  // Two tokens per step, each step a little dearer than a plain one: a gain
  // above 1 and below 2.
  absl::StatusOr<double> gain = PredictServingMetric(*(*runs)[1].scenario, "speedup_vs_no_spec");
  ASSERT_TRUE(gain.ok()) << gain.status();
  EXPECT_GT(*gain, 1.0);
  EXPECT_LT(*gain, 2.0);
  // Without speculation there is no gain to measure; an offline run has no
  // per-user rate.
  config::Scenario plain = s;
  plain.mutable_inference()->clear_speculative();
  EXPECT_THAT(PredictServingMetric(plain, "speedup_vs_no_spec").status().message(),
              HasSubstr("needs a scenario with inference.speculative set"));
  plain.mutable_inference()->mutable_workload()->set_kind("offline");
  plain.mutable_inference()->mutable_workload()->set_num_requests(4);
  plain.mutable_inference()->mutable_workload()->clear_batch_size();
  EXPECT_THAT(PredictServingMetric(plain, "output_tokens_per_s_per_user").status().message(),
              HasSubstr("needs a fixed batch or a closed loop"));
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
