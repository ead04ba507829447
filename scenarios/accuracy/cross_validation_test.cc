#include "scenarios/accuracy/cross_validation.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "models/framework_profile.h"

namespace clustersim::scenarios {
namespace {

constexpr char kHeader[] =
    "id,source,model,layers,hidden,heads,seq_len,vocab,gpu,num_gpus,tp,pp,cp,vp,micro_batch,"
    "global_batch,recompute,metric,value,notes,framework,precision,ep\n";

// One small GPT row of `source` on `stack`, measured at `seconds` per step.
std::string Row(const std::string& id, int layers, double seconds, const std::string& stack) {
  return absl::StrFormat(
      "%s,x,GPT,%d,1024,16,1024,51200,A100-SXM4-80GB,8,1,1,1,,1,8,,iteration_time_s,%.17g,,%s,"
      "bf16,\n",
      id, layers, seconds, stack);
}

constexpr char kCore[] = "nemo-25.09 (Megatron-Core)";
constexpr char kFsdp[] = "pytorch-fsdp-llm-foundry (Composer)";

NamedTable Table(const std::string& csv) {
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(csv, "t.csv");
  EXPECT_TRUE(t.ok()) << t.status();
  return {"t.csv", *t};
}

// The simulated step of a row at GEMM factor f.
double StepAt(const std::string& row, double f) {
  ValidationOptions o;
  o.framework_gemm_factor = f;
  absl::StatusOr<ValidationReport> r =
      ValidateTable(Table(std::string(kHeader) + row).table, "t.csv", o);
  EXPECT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->rows.at(0).supported) << r->rows.at(0).reason;
  return r->rows.at(0).predicted;
}

// Source A's runs match the model at factor 0.79, source B's at 1.0: each
// source is predicted with the factor the other one fits, never its own; a
// stack with one source keeps its shipped value; the fit on all sources and
// the in-sample figures come off the same grid.
TEST(CrossValidationTest, EachSourceIsPredictedWithTheOthersFit) {
  const double a = StepAt(Row("A-01", 4, 1, kCore), 0.79);
  const double b = StepAt(Row("B-01", 6, 1, kCore), 1.0);
  const double c = StepAt(Row("C-01", 4, 1, kFsdp), 0.85);
  const std::string csv = std::string(kHeader) + Row("A-01", 4, a, kCore) +
                          Row("B-01", 6, b, kCore) + Row("C-01", 4, c, kFsdp);
  absl::StatusOr<CrossValidation> cv =
      LeaveOneSourceOut({Table(csv)}, {.gemm_grid = {0.79, 0.85, 1.0}, .threads = 2});
  ASSERT_TRUE(cv.ok()) << cv.status();
  // The grid given plus every profile's shipped value.
  const models::FrameworkCatalog& catalog = models::FrameworkCatalog::Default();
  std::vector<double> grid = {0.79, 0.85, 1.0};
  for (const models::FrameworkProfile& p : catalog.profiles()) grid.push_back(p.gemm_factor.value);
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  EXPECT_EQ(cv->grid, grid);
  const double core = (*catalog.Find("megatron-core"))->gemm_factor.value;
  const double fsdp = (*catalog.Find("pytorch-fsdp"))->gemm_factor.value;
  EXPECT_EQ(cv->rows, 3);
  ASSERT_EQ(cv->sources.size(), 3u);
  const SourceFold& fa = cv->sources[0];
  EXPECT_EQ(fa.source, "A");
  EXPECT_EQ(fa.fitted_without, "megatron-core 1.00");
  EXPECT_NEAR(fa.out_of_source_mape, 100 * std::abs(StepAt(Row("A-01", 4, 1, kCore), 1.0) - a) / a,
              1e-9);
  EXPECT_EQ(cv->sources[1].fitted_without, "megatron-core 0.79");
  EXPECT_EQ(cv->sources[2].fitted_without,
            absl::StrFormat("pytorch-fsdp %.2f (shipped: no other source)", fsdp));
  // In sample, every row runs at its profile's shipped value.
  EXPECT_NEAR(fa.in_sample_mape,
              100 * std::abs(StepAt(Row("A-01", 4, 1, kCore), core) - a) / a, 1e-9);
  ASSERT_EQ(cv->fits.size(), 2u);
  EXPECT_EQ(cv->fits[0].stack, "megatron-core");
  EXPECT_EQ(cv->fits[0].sources, 2);
  EXPECT_EQ(cv->fits[1].stack, "pytorch-fsdp");
  EXPECT_DOUBLE_EQ(cv->fits[1].fitted, 0.85);
  EXPECT_NEAR(cv->fits[1].objective[1], 0, 1e-9);
  const std::string text = FormatCrossValidation(*cv, 8, 12);
  EXPECT_NE(text.find("out-of-source MAPE"), std::string::npos) << text;
  // Three small GPTs on 8 A100s: every run fits.
  EXPECT_EQ(cv->memory.simulated, 3);
  EXPECT_TRUE(cv->memory.misfits.empty());
  EXPECT_NE(text.find("memory: 0 of 3 training runs that ran are predicted not to fit their GPU "
                      "(each is a miss of the memory model)\n"),
            std::string::npos)
      << text;
}

// The memory line counts the misfits over every table, names them by source,
// and says how many runs measured memory rather than step time.
TEST(CrossValidationTest, MemoryLineCountsMisfitsBySource) {
  CrossValidation cv;
  cv.rows = 38;
  cv.memory = {.simulated = 40, .misfits = {"A-01", "A-02", "B-07"}};
  cv.misfits_by_source = {{"A", 2}, {"B", 1}};
  const std::string text = FormatCrossValidation(cv, 8, 12);
  EXPECT_NE(text.find("memory: 3 of 40 training runs that ran are predicted not to fit their GPU "
                      "(each is a miss of the memory model); by source: A 2, B 1; the 40 runs "
                      "are the 38 rows above and 2 measured for memory only\n"),
            std::string::npos)
      << text;
}

TEST(CrossValidationTest, ServingTablesAndMissingFilesAreRefusedByName) {
  EXPECT_NE(LoadTrainingTables({"no/such/table.csv"}).status().message().find("no/such/table.csv"),
            std::string::npos);
}

}  // namespace
}  // namespace clustersim::scenarios
