// Goodput through the clustersim binary against Llama 3 405B's 54-day
// snapshot (Dubey et al. 2024, §3.3.4): 466 interruptions, >90% effective
// training time. The shipped example's failure-free run is about 49 days.
// The interruption count is a consistency check (the default rates are
// derived from the same table, topology/data/reliability.textproto); the
// effective training time is not fitted to it.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "scenarios/proto/result.pb.h"

namespace clustersim {
namespace {

std::string RunCommand(const std::string& command_and_args) {
  const std::string bin = std::string(std::getenv("CLUSTERSIM_BINARY_DIR")) + "/cli/clustersim";
  FILE* p = popen((bin + " " + command_and_args).c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << command_and_args;
  return out;
}

std::string RunJson(const std::string& args) {
  return RunCommand("run " + args + " --format json");
}

TEST(GoodputCliTest, Llama3405bOn16kH100For54Days) {
  const std::string src = std::getenv("CLUSTERSIM_SOURCE_DIR");
  config::Result r;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  RunJson(src + "/scenarios/examples/llama3-405b-goodput.textproto"), &r)
                  .ok());
  ASSERT_TRUE(r.has_goodput());
  const config::Goodput& g = r.goodput();
  EXPECT_GT(g.time_to_train_days().p50(), 50);
  EXPECT_LT(g.time_to_train_days().p50(), 58);
  EXPECT_GE(g.expected_interruptions(), 350);
  EXPECT_LE(g.expected_interruptions(), 600);
  EXPECT_GE(g.effective_training_time(), 0.85);
  EXPECT_LE(g.effective_training_time(), 0.95);
  RecordProperty("interruptions", std::to_string(g.expected_interruptions()));
  RecordProperty("effective_training_time", std::to_string(g.effective_training_time()));
}

TEST(GoodputCliTest, SameSeedSameBytesAndOptIn) {
  const std::string src = std::getenv("CLUSTERSIM_SOURCE_DIR");
  const std::string base = src + "/scenarios/examples/llama2-7b-h100.json --train-tokens 1e10";
  EXPECT_EQ(RunJson(base + " --goodput --trials 50"), RunJson(base + " --goodput --trials 50"));
  EXPECT_EQ(RunJson(base).find("goodput"), std::string::npos);
}

// A sweep whose base has a `reliability` section ends each CSV row in the
// goodput columns; each holds what `clustersim run` gives for that point.
TEST(GoodputCliTest, SweepCsvGoodputColumnsEqualTheRunsOwn) {
  const std::string src = std::getenv("CLUSTERSIM_SOURCE_DIR");
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("clustersim_goodput_sweep_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string scenario = src + "/scenarios/examples/llama2-7b-h100.json";
  {
    std::ofstream f(dir / "grid.textproto");
    f << "base_scenario: \"" << scenario << "\"\n"
      << "base { pricing { train_tokens: 1e12 } reliability { trials: 40 } }\n"
      << "axis { field: \"num_gpus\" values: \"8\" values: \"16\" }\n";
  }
  const std::string prefix = (dir / "grid").string();
  const std::string printed =
      RunCommand("sweep " + (dir / "grid.textproto").string() + " --output " + prefix);
  EXPECT_NE(printed.find("(days to train, p50 with failures vs total $ with failures)"),
            std::string::npos)
      << printed;
  std::ifstream in(prefix + ".csv");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);
  const std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  const std::vector<std::string> goodput_columns = {"goodput_percent",  "goodput_p10_days",
                                                    "goodput_p50_days", "goodput_p90_days",
                                                    "interruptions",    "goodput_total_usd"};
  ASSERT_GT(header.size(), goodput_columns.size());
  EXPECT_EQ(std::vector<std::string>(header.end() - goodput_columns.size(), header.end()),
            goodput_columns);
  const char* gpus[] = {"8", "16"};
  int on_front = 0;
  for (int i = 0; i < 2; ++i) {
    config::Result r;
    ASSERT_TRUE(
        google::protobuf::util::JsonStringToMessage(
            RunJson(scenario + " --train-tokens 1e12 --trials 40 --num-gpus " + gpus[i]), &r)
            .ok());
    ASSERT_TRUE(r.has_goodput());
    const config::Goodput& g = r.goodput();
    const std::vector<std::string> expected = {
        absl::StrFormat("%.2f", 100 * g.effective_training_time()),
        absl::StrFormat("%.2f", g.time_to_train_days().p10()),
        absl::StrFormat("%.2f", g.time_to_train_days().p50()),
        absl::StrFormat("%.2f", g.time_to_train_days().p90()),
        absl::StrFormat("%.1f", g.expected_interruptions()),
        absl::StrFormat("%.0f", g.total_usd())};
    const std::vector<std::string> row = absl::StrSplit(lines[1 + i], ',');
    ASSERT_EQ(row.size(), header.size()) << lines[1 + i];
    EXPECT_EQ(std::vector<std::string>(row.end() - expected.size(), row.end()), expected)
        << "num_gpus=" << gpus[i];
    // A point on the printed front shows the same median and total (the
    // JSONL keeps 9 significant digits).
    for (const std::string& l : std::vector<std::string>(absl::StrSplit(printed, '\n'))) {
      if (!absl::EndsWith(l, absl::StrCat("  num_gpus=", gpus[i]))) continue;
      const std::vector<std::string> cells = absl::StrSplit(l, ' ', absl::SkipEmpty());
      double days = 0, usd = 0;
      ASSERT_TRUE(absl::SimpleAtod(cells[0], &days) && absl::SimpleAtod(cells[1], &usd)) << l;
      EXPECT_NEAR(days, g.time_to_train_days().p50(), 1e-4) << l;
      EXPECT_NEAR(usd, g.total_usd(), 1e-6 * g.total_usd()) << l;
      ++on_front;
    }
    RecordProperty(absl::StrCat("goodput_row_", gpus[i]), lines[1 + i]);
  }
  EXPECT_GE(on_front, 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace clustersim
