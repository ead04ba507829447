// `clustersim validate --write-scenarios DIR`: each training row's file, run
// by `clustersim run`, gives the step time the validation predicted for it,
// and each serving row's, served by `clustersim serve`, its throughput; bad
// uses of the flag exit 2 naming it.
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "gtest/gtest.h"
#include "tests/cli_testing.h"
#include "tests/slurp.h"

namespace clustersim {
namespace {

class ValidateScenariosTest : public CliTest {};

TEST_F(ValidateScenariosTest, EveryWrittenRowRerunsToItsPredictedStepTime) {
  const std::filesystem::path rows = dir_ / "rows";
  Outcome v = Run("validate " + src_ + "/tests/validation/published-runs.csv " + src_ +
                  "/tests/validation/vtrain/ground_truth_multi.csv --stride 9 --format json "
                  "--write-scenarios " + rows.string());
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_NE(v.err.find("row scenarios to"), std::string::npos) << v.err;
  // Rows of the step-time metric: their prediction is the run's step time.
  const std::regex row(
      R"re("id": "([^"]+)", "source": "[^"]*", "metric": "iteration_time_s", "measured": [^,]+, "predicted": ([0-9.eE+-]+))re");
  int checked = 0;
  for (std::sregex_iterator it(v.out.begin(), v.out.end(), row), end; it != end; ++it) {
    const std::string id = (*it)[1];
    const double predicted = std::stod((*it)[2]);
    const std::filesystem::path file = rows / (id + ".textproto");
    ASSERT_TRUE(std::filesystem::exists(file)) << id;
    EXPECT_NE(Slurp(file).find("# Validation row " + id), std::string::npos);
    Outcome r = Run("run " + file.string() + " --format json");
    ASSERT_EQ(r.code, 0) << id << ": " << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"("step_time_s": ([0-9.eE+-]+))")))
        << r.out;
    EXPECT_NEAR(std::stod(m[1]), predicted, 1e-9 * predicted) << id;
    ++checked;
  }
  EXPECT_GE(checked, 10) << v.out;
}

TEST_F(ValidateScenariosTest, EveryWrittenServingRowServesToItsPredictedThroughput) {
  const std::filesystem::path rows = dir_ / "serving";
  Outcome v = Run("validate " + src_ +
                  "/tests/validation/inference-runs.csv --stride 2 --format json "
                  "--write-scenarios " + rows.string());
  ASSERT_EQ(v.code, 0) << v.err;
  // Rows whose metric is a field of the serve result as it is.
  const std::regex row(
      R"re("id": "([^"]+)", "source": "[^"]*", "metric": "(output_tokens_per_s_per_gpu|output_tokens_per_s_total)", "measured": [^,]+, "predicted": ([0-9.eE+-]+))re");
  int checked = 0;
  for (std::sregex_iterator it(v.out.begin(), v.out.end(), row), end; it != end; ++it) {
    const std::string id = (*it)[1];
    const std::string key =
        (*it)[2] == "output_tokens_per_s_total" ? "output_tokens_per_s" : std::string((*it)[2]);
    const double predicted = std::stod((*it)[3]);
    const std::filesystem::path file = rows / (id + ".textproto");
    ASSERT_TRUE(std::filesystem::exists(file)) << id;
    EXPECT_NE(Slurp(file).find("# rerun: clustersim serve "), std::string::npos) << id;
    Outcome r = Run("serve " + file.string() + " --no-curve --format json");
    ASSERT_EQ(r.code, 0) << id << ": " << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("\"" + key + R"(": ([0-9.eE+-]+))")))
        << r.out;
    EXPECT_NEAR(std::stod(m[1]), predicted, 1e-9 * predicted) << id;
    ++checked;
  }
  EXPECT_GE(checked, 3) << v.out;
}

TEST_F(ValidateScenariosTest, AFileInPlaceOfTheDirectoryExitsTwo) {
  std::ofstream(dir_ / "taken") << "x";
  Outcome o = Run("validate " + src_ + "/tests/validation/published-runs.csv --stride 50 "
                  "--write-scenarios " + (dir_ / "taken").string());
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--write-scenarios"), std::string::npos) << o.err;
}

TEST_F(ValidateScenariosTest, CrossValidationRefusesTheFlag) {
  Outcome o = Run("validate --leave-one-source-out " + src_ +
                  "/tests/validation/published-runs.csv --write-scenarios " +
                  (dir_ / "rows").string());
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--write-scenarios"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace clustersim
