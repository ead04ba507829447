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
using serving_modes_testing::ShippedTable;

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
    // Offline rows of fixed lengths and a stated tp on catalog GPUs run
    // with the request count of their dataset cell; MLA, FP4, expert
    // parallelism and unstated lengths or tp stay refused and say so.
    const std::string& feature = t.Get(t.rows[i], "feature");
    if (mode == "offline" && feature == "offline" && !t.Get(t.rows[i], "tp").empty() &&
        !t.Get(t.rows[i], "input_len").empty()) {
      ASSERT_TRUE(r.scenario) << r.id << ": " << r.not_supported;
      EXPECT_EQ(r.scenario->inference().workload().kind(), "offline") << r.id;
      EXPECT_THAT(
          t.Get(t.rows[i], "dataset"),
          HasSubstr(absl::StrCat(r.scenario->inference().workload().num_requests(), " requests")))
          << r.id;
    }
    // FP4 rows run in NVFP4, MLA rows with DeepSeek-V3's latent attention.
    if (feature.find("fp4") != std::string::npos && r.scenario) {
      EXPECT_EQ(r.scenario->inference().weight_dtype(), "nvfp4") << r.id;
    }
    if (feature.find("mla") != std::string::npos && r.scenario) {
      EXPECT_EQ(r.scenario->model().preset(), "deepseek-v3-671b") << r.id;
    }
    // Expert parallelism runs only as ep = tp with data-parallel attention.
    if (r.scenario && r.scenario->inference().expert_parallel_size() > 1) {
      EXPECT_EQ(r.scenario->inference().expert_parallel_size(),
                r.scenario->inference().tensor_parallel_size())
          << r.id;
      EXPECT_EQ(t.Get(t.rows[i], "attention_dp"), "true") << r.id;
    }
    // A speculative row without an acceptance length says so.
    if (feature.find("spec") != std::string::npos &&
        t.Get(t.rows[i], "spec_method") != "draft-target" &&
        t.Get(t.rows[i], "acceptance_len").empty()) {
      EXPECT_THAT(r.not_supported, HasSubstr("the acceptance length the source does not state"))
          << r.id;
    }
    if (mode == "concurrency" && r.scenario) {
      const int clients = std::stoi(t.Get(t.rows[i], "concurrency"));
      if (clients > 1) {
        EXPECT_EQ(r.scenario->inference().workload().kind(), "concurrency") << r.id;
        EXPECT_EQ(r.scenario->inference().workload().concurrency(), clients) << r.id;
      }
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

// Settings the shipped rows infer where their source is silent, each argued in
// the row's notes and SOURCES.md: the NIM rows' FP8 KV cache (the capacity
// their page's saturated runs imply) and the trtllm-bench Qwen3-235B-A22B
// rows' attention DP (the page's MoE options) with ep 8 (the same repository's
// Qwen3-235B benchmark script).
TEST(ServingModesTest, ShippedRowsRunTheSettingsTheirNotesInfer) {
  const sim::CsvTable t = ShippedTable();
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(t);
  ASSERT_TRUE(runs.ok()) << runs.status();
  int nim = 0, qwen = 0;
  for (const InferenceRun& r : *runs) {
    if (r.id.starts_with("NIM-")) {
      ASSERT_TRUE(r.scenario) << r.id << ": " << r.not_supported;
      EXPECT_EQ(r.scenario->inference().kv_cache_dtype(), "fp8") << r.id;
      ++nim;
    }
    if (r.id == "TRTPO-24" || r.id == "TRTPO-25" || r.id == "TRTPO-26") {
      ASSERT_TRUE(r.scenario) << r.id << ": " << r.not_supported;
      EXPECT_EQ(r.scenario->inference().tensor_parallel_size(), 8) << r.id;
      EXPECT_EQ(r.scenario->inference().expert_parallel_size(), 8) << r.id;
      ++qwen;
    }
  }
  EXPECT_EQ(nim, 12);
  EXPECT_EQ(qwen, 3);
}

// An MLPerf offline row without lengths, its data set named by `dataset`.
std::string MlperfOfflineRow(const std::string& dataset) {
  const std::string row = Set(Row("M1", "output_tokens_per_s_total", "offline", "offline", ""),
                              "dataset", dataset);
  return Set(Set(row, "input_len", ""), "output_len", "");
}

TEST(ServingModesTest, MlperfRowsTakeTheirDataSetsLengths) {
  // An MLPerf offline row without lengths: every sample of its data set once.
  const std::string row = MlperfOfflineRow("mlperf llama2-70b OpenOrca 24576");
  const sim::CsvTable t = Parse(row);
  const ServingModeMapping m = MapServingMode(t, t.rows[0]);
  ASSERT_EQ(m.not_supported, "");
  EXPECT_EQ(m.lengths_file, "datasets/mlperf-llama2-70b.csv");
  EXPECT_EQ(m.num_requests, 24576);
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(t);
  ASSERT_TRUE(runs.ok() && (*runs)[0].scenario) << (*runs)[0].not_supported;
  const config::InferenceWorkload& w = (*runs)[0].scenario->inference().workload();
  EXPECT_EQ(w.lengths_file(), "datasets/mlperf-llama2-70b.csv");
  // MLPerf's Offline query: at least min_query_count (24,576 for llama2-70b,
  // the data set's size) and long enough for the 600 s min_duration.
  EXPECT_EQ(w.num_requests(), 24576);
  EXPECT_DOUBLE_EQ(w.duration_s(), 600);
  EXPECT_FALSE(w.has_prompt_length());
  // llama2-70b's reference outputs are GPT-4's: scaled to Llama 2 70B's 294.45
  // tokens per sample; mixtral-8x7b's are its own and stay.
  EXPECT_DOUBLE_EQ(w.output_tokens_mean(), 294.45);
  const sim::CsvTable mixtral = Parse(Set(row, "dataset", "mlperf mixtral-8x7b 15000"));
  EXPECT_EQ(MapServingMode(mixtral, mixtral.rows[0]).output_tokens_mean, 0);
  EXPECT_EQ(MlperfLengthsFile("mlperf mixtral-8x7b 15000").output_tokens_mean, 0);
  // A benchmark without a lengths file still says what it needs.
  const sim::CsvTable u = Parse(Set(row, "dataset", "mlperf gptj cnn"));
  EXPECT_THAT(MapServingMode(u, u.rows[0]).not_supported, HasSubstr("the request lengths of"));
}

TEST(ServingModesTest, MlperfRowsTakeTheQueryTheirLogStates) {
  // An Offline query larger than the data set (a log's samples_per_query) is
  // the run's; one smaller than the data set cannot be MLPerf's.
  const std::string row = MlperfOfflineRow("mlperf deepseek-r1 query of 26328 requests");
  const sim::CsvTable t = Parse(row);
  const ServingModeMapping m = MapServingMode(t, t.rows[0]);
  ASSERT_EQ(m.not_supported, "");
  EXPECT_EQ(m.lengths_file, "datasets/mlperf-deepseek-r1.csv");
  EXPECT_EQ(m.num_requests, 26328);
  EXPECT_DOUBLE_EQ(m.duration_s, 600);
  EXPECT_THAT(absl::StrJoin(m.assumptions, "; "), HasSubstr("the run's 26328 samples"));
  const sim::CsvTable small = Parse(Set(row, "dataset", "mlperf deepseek-r1 query of 10 requests"));
  EXPECT_EQ(MapServingMode(small, small.rows[0]).num_requests, 4388);
  // A Server run's min_query_count replaces loadgen's default of 100; none
  // stated keeps it.
  std::string server = Set(Set(row, "mode", "server"), "feature", "server");
  server = Set(Set(server, "ttft_limit_ms", "2000"), "tpot_limit_ms", "80");
  const sim::CsvTable s =
      Parse(Set(server, "dataset", "mlperf deepseek-r1 at least 26328 requests"));
  const ServingModeMapping ms = MapServingMode(s, s.rows[0]);
  ASSERT_EQ(ms.not_supported, "");
  EXPECT_EQ(ms.workload_kind, "server");
  EXPECT_EQ(ms.num_requests, 26328);
  EXPECT_THAT(absl::StrJoin(ms.assumptions, "; "), HasSubstr("(the run's min_query_count)"));
  const sim::CsvTable d = Parse(Set(server, "dataset", "mlperf deepseek-r1"));
  EXPECT_EQ(MapServingMode(d, d.rows[0]).num_requests, kMlperfServerMinQueries);
}

TEST(ServingModesTest, RowsWithoutATpRunAtTheInferredOne) {
  // Llama 3.1 8B in bf16 (15 GiB) on 8 H100s: tp 1 holds under half of 80 GB.
  std::string row = Row("T1", "output_tokens_per_s_total", "offline", "offline", "");
  row = Set(Set(row, "tp", ""), "num_devices", "8");
  // 70B parameters in FP8 (65 GiB): tp 2 is the first under half.
  std::string big = Set(Set(row, "id", "T2"), "params_b", "70");
  big = Set(big, "weight_dtype", "fp8");
  // 405B in FP8 (377 GiB) is over half even at tp 8; a params_b that is
  // not a number.
  const std::string huge = Set(Set(big, "id", "T3"), "params_b", "405");
  const std::string bad = Set(Set(row, "id", "T4"), "params_b", "many");
  absl::StatusOr<std::vector<InferenceRun>> runs = MapInferenceRuns(Parse(row + big + huge + bad));
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_TRUE((*runs)[0].scenario) << (*runs)[0].not_supported;
  EXPECT_EQ((*runs)[0].scenario->inference().tensor_parallel_size(), 1);
  EXPECT_TRUE((*runs)[0].inferred_tp);
  EXPECT_THAT(absl::StrJoin((*runs)[0].assumptions, "; "),
              HasSubstr("tp 1 inferred (the source states none)"));
  ASSERT_TRUE((*runs)[1].scenario) << (*runs)[1].not_supported;
  EXPECT_EQ((*runs)[1].scenario->inference().tensor_parallel_size(), 2);
  EXPECT_THAT((*runs)[2].not_supported, HasSubstr("state the row's tp"));
  EXPECT_THAT((*runs)[3].not_supported, HasSubstr("params_b 'many' is not a positive number"));
  // A stated tp is never replaced.
  absl::StatusOr<std::vector<InferenceRun>> stated = MapInferenceRuns(Parse(Set(big, "tp", "4")));
  ASSERT_TRUE(stated.ok() && (*stated)[0].scenario) << (*stated)[0].not_supported;
  EXPECT_EQ((*stated)[0].scenario->inference().tensor_parallel_size(), 4);
  EXPECT_FALSE((*stated)[0].inferred_tp);
}

TEST(ServingModesTest, ShareGptRowsDrawTheirPromptsFromTheFirstTurns) {
  std::string row = Row("S1", "requests_per_s", "offline", "offline;trace", "");
  row = Set(Set(Set(row, "input_len", ""), "output_len", ""), "dataset",
            "ShareGPT 200 prompts (fixed seed)");
  const sim::CsvTable t = Parse(row + Set(Set(row, "id", "S2"), "dataset", "ShareGPT"));
  const ServingModeMapping m = MapServingMode(t, t.rows[0]);
  ASSERT_EQ(m.not_supported, "");
  EXPECT_EQ(m.lengths_file, "datasets/sharegpt-first-turns.csv");
  EXPECT_EQ(m.num_requests, 200);
  // No prompt count: the sample is unknown.
  EXPECT_THAT(MapServingMode(t, t.rows[1]).not_supported,
              HasSubstr("dataset-driven request lengths (ShareGPT)"));
  EXPECT_EQ(ShareGptLengthsFile("ShareGPT 1000 prompts").prompts, 1000);
  EXPECT_EQ(ShareGptLengthsFile("MT-bench").prompts, 0);
  // The shipped file: the header and pairs within vLLM's length filter.
  const char* src = std::getenv("CLUSTERSIM_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  std::ifstream in(std::string(src) + "/tests/validation/serving-deployed/" +
                   std::string(kShareGptLengthsFile));
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, "input_length,output_length");
  int pairs = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = absl::StrSplit(line, ',');
    ASSERT_EQ(cells.size(), 2u) << line;
    const int prompt = std::stoi(cells[0]), reply = std::stoi(cells[1]);
    EXPECT_TRUE(prompt >= 4 && reply >= 4 && prompt <= 1024 && prompt + reply <= 2048) << line;
    ++pairs;
  }
  EXPECT_GE(pairs, 200);
}

TEST(ServingModesTest, ShippedMlperfLengthFilesHoldEverySample) {
  const char* src = std::getenv("CLUSTERSIM_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  for (const auto& [bench, samples] : std::vector<std::pair<std::string, int>>{
           {"llama2-70b", 24576}, {"mixtral-8x7b", 15000}, {"llama3.1-405b", 8313},
           {"deepseek-r1", 4388}}) {
    const MlperfDataset d = MlperfLengthsFile("mlperf " + bench);
    EXPECT_EQ(d.samples, samples) << bench;
    std::ifstream in(std::string(src) + "/tests/validation/serving-deployed/" + d.lengths_file);
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    EXPECT_EQ(lines, samples + 1) << d.lengths_file;  // the header and one line per sample
  }
}


}  // namespace
}  // namespace clustersim::scenarios
