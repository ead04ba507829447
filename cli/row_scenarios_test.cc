#include "cli/row_scenarios.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace clustersim::cli {
namespace {

std::filesystem::path TempDir(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         (name + "_" + std::to_string(::getpid()));
}

scenarios::ValidationRow Row(const std::string& id, bool supported) {
  scenarios::ValidationRow r;
  r.id = id;
  r.source = "SRC";
  r.metric = "iteration_time_s";
  r.measured = 2.0;
  r.supported = supported;
  r.predicted = 1.8;
  r.error = -0.1;
  r.reason = supported ? "" : "needs a layout\nfor pp 8";
  r.assumptions = "bf16; no recompute";
  r.scenario = "name: \"x\"\n";
  return r;
}

RowScenario Training(const scenarios::ValidationRow& r) {
  return TrainingRowScenarios({r}).at(0);
}

TEST(RowScenariosTest, HeaderCarriesTheRowAndHowToRerunIt) {
  const std::string text = RowScenarioText("rows/A-1.textproto", "t.csv", Training(Row("A-1", true)));
  EXPECT_NE(text.find("# Validation row A-1 (source SRC) of t.csv."), std::string::npos) << text;
  EXPECT_NE(text.find("# measured iteration_time_s = 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# predicted 1.8 (-10.0%)"), std::string::npos) << text;
  EXPECT_NE(text.find("# assumptions: bf16; no recompute\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# rerun: clustersim run rows/A-1.textproto\n"), std::string::npos);
  // The scenario itself follows the comment header.
  EXPECT_EQ(text.substr(text.size() - 10), "name: \"x\"\n");
}

TEST(RowScenariosTest, AMultiLineReasonStaysInsideTheComment) {
  const std::string text = RowScenarioText("p", "t.csv", Training(Row("A-2", false)));
  EXPECT_NE(text.find("# not run: needs a layout\n#   for pp 8\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("# predicted"), std::string::npos);
}

TEST(RowScenariosTest, WritesOneFilePerRowWithAScenarioUnderASafeName) {
  const std::filesystem::path dir = TempDir("row_scenarios");
  ASSERT_TRUE(PrepareScenarioDir((dir / "nested").string()).ok());
  scenarios::ValidationRow none = Row("B", true);
  none.scenario.clear();  // a row that never got a scenario
  absl::StatusOr<int> n = WriteRowScenarios((dir / "nested").string(), "t.csv",
                                            TrainingRowScenarios({Row("a/b c", true), none}));
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 1);
  EXPECT_TRUE(std::filesystem::exists(dir / "nested" / "a_b_c.textproto"));
  EXPECT_FALSE(std::filesystem::exists(dir / "nested" / "B.textproto"));
  std::filesystem::remove_all(dir);
}

TEST(RowScenariosTest, AServingRowRerunsWithServeAndKeepsItsAssumptions) {
  scenarios::InferenceValidationRow r;
  r.run.id = "S-1";
  r.run.source = "SRV";
  r.run.metric = "ttft_ms";
  r.run.measured = 20;
  r.run.assumptions = {"fp8 cache", "tp 2 inferred"};
  r.run.scenario.emplace();
  r.run.scenario->set_name("s");
  r.predicted = 15;
  r.error_pct = -25;
  const std::string text =
      RowScenarioText("rows/S-1.textproto", "serve.csv", ServingRowScenarios({r}).at(0));
  EXPECT_NE(text.find("# predicted 15 (-25.0%): read off the result of `clustersim serve"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# assumptions: fp8 cache; tp 2 inferred\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# rerun: clustersim serve rows/S-1.textproto --no-curve\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("name: \"s\""), std::string::npos) << text;
}

TEST(RowScenariosTest, AFileWhereTheDirectoryShouldBeIsRefusedByFlagName) {
  const std::filesystem::path file = TempDir("row_scenarios_file");
  std::ofstream(file) << "x";
  absl::Status s = PrepareScenarioDir(file.string());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--write-scenarios"), std::string::npos) << s;
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace clustersim::cli
