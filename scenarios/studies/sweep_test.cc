#include "scenarios/studies/sweep.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/input/loader.h"
#include "scenarios/studies/study_table.h"
#include "sim/status_macros.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

class SweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("clustersim_sweep_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    sweep_ = std::string(std::getenv("CLUSTERSIM_SOURCE_DIR")) +
             "/scenarios/examples/sweeps/gpt-22b-grid.textproto";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<std::string> SortedLines(const std::string& path) {
    std::vector<std::string> lines = absl::StrSplit(*ReadFile(path), '\n', absl::SkipEmpty());
    std::sort(lines.begin(), lines.end());
    return lines;
  }

  // Loads the grid into points_ and runs it uninterrupted into whole_;
  // json_ and csv_ hold the lines it wrote.
  void RunWhole() {
    absl::StatusOr<std::vector<SweepPoint>> points = LoadSweep(sweep_);
    ASSERT_TRUE(points.ok()) << points.status();
    points_ = *std::move(points);
    whole_ = (dir_ / "whole").string();
    ASSERT_TRUE(RunSweep(points_, {.output_prefix = whole_}).ok());
    json_ = absl::StrSplit(*ReadFile(whole_ + ".jsonl"), '\n');
    csv_ = absl::StrSplit(*ReadFile(whole_ + ".csv"), '\n');
  }

  // The files an interrupted run leaves: PREFIX.jsonl holds the whole run's
  // first `json_lines` lines, then `json_tail`; PREFIX.csv its first
  // `csv_lines` lines (the header included), then `csv_tail`.
  std::string WriteInterrupted(const std::string& name, int json_lines, const std::string& json_tail,
                               int csv_lines, const std::string& csv_tail) {
    const std::string prefix = (dir_ / name).string();
    std::ofstream j(prefix + ".jsonl");
    for (int i = 0; i < json_lines; ++i) j << json_[i] << "\n";
    j << json_tail;
    std::ofstream c(prefix + ".csv");
    for (int i = 0; i < csv_lines; ++i) c << csv_[i] << "\n";
    c << csv_tail;
    return prefix;
  }

  // Resumes `prefix`; expects `skipped` points found done, the rest run, and
  // the files byte for byte those of the uninterrupted run.
  void ExpectResumesToTheWholeRun(const std::string& prefix, size_t skipped) {
    absl::StatusOr<SweepSummary> resumed = RunSweep(points_, {.output_prefix = prefix});
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(resumed->skipped, skipped);
    EXPECT_EQ(resumed->ran, points_.size() - skipped);
    EXPECT_EQ(*ReadFile(prefix + ".jsonl"), *ReadFile(whole_ + ".jsonl"));
    EXPECT_EQ(*ReadFile(prefix + ".csv"), *ReadFile(whole_ + ".csv"));
  }

  std::filesystem::path dir_;
  std::string sweep_;
  std::vector<SweepPoint> points_;
  std::string whole_;
  std::vector<std::string> json_, csv_;
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

// Without a reliability section the CSV keeps its fixed columns; with one
// (goodput.h's GoodputRequested on some point) every row, in every shard or
// MPI rank (each loads the same points), ends in the goodput columns.
TEST_F(SweepTest, GoodputColumnsOnlyWithAReliabilitySection) {
  RunWhole();
  EXPECT_EQ(csv_[0] + "\n", StudyCsvHeader());
  EXPECT_EQ(csv_[0].find("goodput"), std::string::npos);
  for (const SweepPoint& p : points_) EXPECT_FALSE(p.goodput_columns);

  const std::string base =
      "base { model { preset: \"gpt3-1.3b\" } cluster { gpu: \"a100-sxm4-80gb\" } "
      "training { global_batch_size: 8 } ";
  const std::string axis = "axis { field: \"num_gpus\" values: \"4\" values: \"8\" }";
  absl::StatusOr<std::vector<SweepPoint>> stragglers_only = ParseSweep(
      base + "reliability { stragglers { slow_gpu_fraction: 0.1 } } }\n" + axis, "t", "");
  ASSERT_TRUE(stragglers_only.ok()) << stragglers_only.status();
  EXPECT_FALSE((*stragglers_only)[0].goodput_columns);  // no run length: the straggler tax only
  absl::StatusOr<std::vector<SweepPoint>> points = ParseSweep(
      base + "pricing { train_tokens: 1e9 } reliability { trials: 20 } }\n" + axis, "t", "");
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(points->size(), 2u);
  const std::string prefix = (dir_ / "goodput").string();
  ASSERT_TRUE(RunSweep(*points, {.output_prefix = prefix}).ok());
  const std::vector<std::string> lines =
      absl::StrSplit(*ReadFile(prefix + ".csv"), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0] + "\n", StudyCsvHeader(true));
  const size_t columns = std::count(lines[0].begin(), lines[0].end(), ',');
  for (const std::string& row : {lines[1], lines[2]}) {
    EXPECT_EQ(static_cast<size_t>(std::count(row.begin(), row.end(), ',')), columns) << row;
    EXPECT_NE(row.back(), ',') << row;  // the last goodput cell is filled
  }
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
// line (the CSV is appended first): the extra row is dropped, point 4 runs
// again, and the files end as those of one uninterrupted run.
TEST_F(SweepTest, KilledBetweenTheTwoFilesResumesWithoutADuplicateRow) {
  ASSERT_NO_FATAL_FAILURE(RunWhole());
  const std::string killed = WriteInterrupted("killed", 3, "", 5, "");  // the header and 4 rows
  ExpectResumesToTheWholeRun(killed, 3);

  // Fewer CSV rows than JSON lines: the files were edited; say so, touch nothing.
  { std::ofstream(killed + ".csv") << csv_[0] << "\n"; }
  absl::StatusOr<SweepSummary> edited = RunSweep(points_, {.output_prefix = killed});
  EXPECT_EQ(edited.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(edited.status().message(), HasSubstr("killed.csv has 0 rows but its .jsonl has 16"));
  EXPECT_THAT(edited.status().message(), HasSubstr("Delete both files"));
}

// Killed mid-append (SIGKILL during write(2)): each file ends in a torn line.
// The torn tails are cut, the CSV's extra row is dropped, and the points run
// again: the files end byte for byte as one uninterrupted run's. The resumed
// run appends to the same files (same inode) instead of replacing them.
TEST_F(SweepTest, TornLastLinesAreCutAndTheirPointsRunAgain) {
  ASSERT_NO_FATAL_FAILURE(RunWhole());
  // Point 4's JSON line and point 5's CSV row, each cut mid-write.
  const std::string torn =
      WriteInterrupted("torn", 3, json_[3].substr(0, 25), 5, csv_[5].substr(0, 10));
  const auto inode = [](const std::string& path) {
    struct stat st {};
    ::stat(path.c_str(), &st);
    return st.st_ino;
  };
  const ino_t jsonl_inode = inode(torn + ".jsonl"), csv_inode = inode(torn + ".csv");
  ExpectResumesToTheWholeRun(torn, 3);
  EXPECT_EQ(inode(torn + ".jsonl"), jsonl_inode);
  EXPECT_EQ(inode(torn + ".csv"), csv_inode);
}

// The reverse of a kill between the files: PREFIX.jsonl holds a point whose
// CSV row is missing (the CSV's last append lost). That line is dropped and
// its point runs again; nothing is duplicated.
TEST_F(SweepTest, AJsonLineWithoutItsCsvRowIsDroppedAndRunAgain) {
  ASSERT_NO_FATAL_FAILURE(RunWhole());
  ExpectResumesToTheWholeRun(WriteInterrupted("ahead", 5, "", 5, ""), 4);
}

// A distributed executor hands lines back as points finish; the files keep
// point order, byte for byte those of one process (scenarios/studies/sweep_mpi.h).
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
          CLUSTERSIM_RETURN_IF_ERROR(emit(i, SimulateSweepPoint(*todo[i])));
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

namespace clustersim::scenarios {
namespace {

// Six axes of ten values are a million points: refused before any is built
// (unbounded grids exhausted memory).
TEST(SweepLimitTest, GridOverTheLimitIsRefusedBeforeItIsBuilt) {
  std::string text;
  for (int a = 0; a < 6; ++a) {
    text += "axis { field: \"tp\" values: \"1\" values: \"2\" values: \"3\" values: \"4\" "
            "values: \"5\" values: \"6\" values: \"7\" values: \"8\" values: \"9\" values: \"10\" }\n";
  }
  absl::StatusOr<std::vector<SweepPoint>> points = ParseSweep(text, "big.sweep", "/nonexistent");
  EXPECT_EQ(points.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(points.status().message()),
              ::testing::HasSubstr("big.sweep: the axes make 1e+06 points, over the limit of "
                                   "100000"));
}

TEST(SweepLimitTest, ParseSweepExpandsTextWithoutAFile) {
  absl::StatusOr<std::vector<SweepPoint>> points = ParseSweep(
      "axis { field: \"tp\" values: \"1\" values: \"2\" }", "inline", "/nonexistent");
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(points->size(), 2u);
  EXPECT_EQ((*points)[1].key, "tp=2");
}

}  // namespace
}  // namespace clustersim::scenarios
