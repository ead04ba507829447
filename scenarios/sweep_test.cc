#include "scenarios/sweep.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/loader.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

class SweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("clustersim_sweep_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    sweep_ = std::string(std::getenv("CLUSTERSIM_SOURCE_DIR")) +
             "/scenarios/sweeps/gpt-22b-grid.textproto";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<std::string> SortedLines(const std::string& path) {
    std::vector<std::string> lines = absl::StrSplit(*ReadFile(path), '\n', absl::SkipEmpty());
    std::sort(lines.begin(), lines.end());
    return lines;
  }

  std::filesystem::path dir_;
  std::string sweep_;
};

TEST_F(SweepTest, ExpandsTheGridInAxisOrder) {
  absl::StatusOr<std::vector<SweepPoint>> points = LoadSweep(sweep_);
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(points->size(), 16u);
  EXPECT_EQ((*points)[0].key,
            "num_gpus=8,tp=4,recompute=selective,price_source=specialty-a100-80gb");
  EXPECT_EQ((*points)[15].scenario.cluster().num_gpus(), 16);
  EXPECT_EQ((*points)[15].scenario.training().recompute_granularity(), "full");
  EXPECT_EQ((*points)[15].scenario.model().preset(), "gpt-22b");  // from base_scenario
}

TEST_F(SweepTest, ShardsAndResumeGiveTheSameLinesAsOneRun) {
  absl::StatusOr<std::vector<SweepPoint>> points = LoadSweep(sweep_);
  ASSERT_TRUE(points.ok());
  const std::string whole = (dir_ / "whole").string();
  absl::StatusOr<SweepSummary> one = RunSweep(*points, {.output_prefix = whole});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->ran, 16u);
  EXPECT_FALSE(one->pareto.empty());
  EXPECT_TRUE(one->train_axes);

  // Two shards into one prefix, the first interrupted mid-line.
  const std::string sharded = (dir_ / "sharded").string();
  ASSERT_TRUE(RunSweep(*points, {.output_prefix = sharded, .shard = 0, .num_shards = 2}).ok());
  { std::ofstream(sharded + ".jsonl", std::ios::app) << "{\"label\": \"num_gpus=16,tp"; }
  absl::StatusOr<SweepSummary> second =
      RunSweep(*points, {.output_prefix = sharded, .shard = 1, .num_shards = 2});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->ran, 8u);
  EXPECT_EQ(SortedLines(sharded + ".jsonl"), SortedLines(whole + ".jsonl"));
  EXPECT_EQ(SortedLines(sharded + ".csv"), SortedLines(whole + ".csv"));

  // A rerun finds everything done.
  absl::StatusOr<SweepSummary> again = RunSweep(*points, {.output_prefix = whole});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->skipped, 16u);
  EXPECT_EQ(again->ran, 0u);
  ASSERT_EQ(again->pareto.size(), one->pareto.size());
  for (size_t i = 1; i < again->pareto.size(); ++i) {
    EXPECT_LT(again->pareto[i - 1].time, again->pareto[i].time);
    EXPECT_GT(again->pareto[i - 1].cost, again->pareto[i].cost);
  }
}

// Killed after PREFIX.csv got point 4's row but before PREFIX.jsonl got its
// line (the CSV is replaced first): the extra row is dropped, point 4 runs
// again, and the files end as those of one uninterrupted run.
TEST_F(SweepTest, KilledBetweenTheTwoFilesResumesWithoutADuplicateRow) {
  absl::StatusOr<std::vector<SweepPoint>> points = LoadSweep(sweep_);
  ASSERT_TRUE(points.ok());
  const std::string whole = (dir_ / "whole").string();
  ASSERT_TRUE(RunSweep(*points, {.output_prefix = whole}).ok());
  const std::vector<std::string> json = absl::StrSplit(*ReadFile(whole + ".jsonl"), '\n');
  const std::vector<std::string> csv = absl::StrSplit(*ReadFile(whole + ".csv"), '\n');
  const std::string killed = (dir_ / "killed").string();
  {
    std::ofstream j(killed + ".jsonl");
    for (int i = 0; i < 3; ++i) j << json[i] << "\n";
    std::ofstream c(killed + ".csv");
    for (int i = 0; i < 5; ++i) c << csv[i] << "\n";  // the header and 4 rows
  }
  absl::StatusOr<SweepSummary> resumed = RunSweep(*points, {.output_prefix = killed});
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->skipped, 3u);
  EXPECT_EQ(resumed->ran, 13u);
  EXPECT_EQ(*ReadFile(killed + ".jsonl"), *ReadFile(whole + ".jsonl"));
  EXPECT_EQ(*ReadFile(killed + ".csv"), *ReadFile(whole + ".csv"));

  // Fewer CSV rows than JSON lines: the files were edited; say so, touch nothing.
  { std::ofstream(killed + ".csv") << csv[0] << "\n"; }
  absl::StatusOr<SweepSummary> edited = RunSweep(*points, {.output_prefix = killed});
  EXPECT_EQ(edited.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(edited.status().message(), HasSubstr("killed.csv has 0 rows but its .jsonl has 16"));
  EXPECT_THAT(edited.status().message(), HasSubstr("Delete both files"));
}

// A distributed executor hands lines back as points finish; the files keep
// point order, byte for byte those of one process (scenarios/sweep_mpi.h).
TEST_F(SweepTest, LinesKeepPointOrderWhateverOrderPointsFinish) {
  absl::StatusOr<std::vector<SweepPoint>> points = LoadSweep(sweep_);
  ASSERT_TRUE(points.ok());
  const std::string in_order = (dir_ / "in_order").string();
  ASSERT_TRUE(RunSweep(*points, {.output_prefix = in_order}).ok());
  const std::string reversed = (dir_ / "reversed").string();
  size_t written_before_last = 0;
  absl::StatusOr<SweepSummary> s = RunSweep(
      *points, {.output_prefix = reversed},
      [&](const std::vector<const SweepPoint*>& todo, const SweepEmit& emit) -> absl::Status {
        for (size_t i = todo.size(); i-- > 0;) {
          if (i == 0) written_before_last = SortedLines(reversed + ".jsonl").size();
          if (absl::Status st = emit(i, SimulateSweepPoint(*todo[i])); !st.ok()) return st;
        }
        return absl::OkStatus();
      });
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->ran, 16u);
  EXPECT_EQ(written_before_last, 0u);  // every later point waited for point 0
  EXPECT_EQ(*ReadFile(reversed + ".jsonl"), *ReadFile(in_order + ".jsonl"));
  EXPECT_EQ(*ReadFile(reversed + ".csv"), *ReadFile(in_order + ".csv"));
}

TEST_F(SweepTest, BadInputNamesTheProblem) {
  const std::string bad = (dir_ / "bad.textproto").string();
  std::ofstream(bad) << "axis { field: \"tpp\" values: \"2\" }\n";
  EXPECT_THAT(LoadSweep(bad).status().message(), HasSubstr("axis[0]"));
  SweepOptions o;
  EXPECT_THAT(ParseShard("2/2", &o).message(), HasSubstr("0 <= i < N"));
  EXPECT_TRUE(ParseShard("1/2", &o).ok());
  EXPECT_EQ(o.num_shards, 2);
}

}  // namespace
}  // namespace clustersim::scenarios
