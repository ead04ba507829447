#include "scenarios/accuracy/validation.h"

#include <string>

#include "gtest/gtest.h"
#include "sim/csv_table.h"

namespace clustersim::scenarios {
namespace {

// One row of `csv` through ValidateTable; the parse must succeed.
ValidationRow OnlyRow(const std::string& csv) {
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(csv, "test.csv");
  EXPECT_TRUE(t.ok()) << t.status();
  absl::StatusOr<ValidationReport> r = ValidateTable(*t, "test.csv", {});
  EXPECT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rows.size(), 1u);
  return r->rows.at(0);
}

constexpr char kVtrainHeader[] =
    "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,"
    "tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)\n";

// The report says which sources miss the target, not only the overall MAPE.
TEST(ValidationTest, ReportMarksEachSourceAboveTheTarget) {
  ValidationReport r;
  r.by_source = {{"GOOD", 3, 4.0}, {"BAD", 2, 12.5}};
  r.supported = 5;
  r.overall_mape = 7.4;
  const std::string text = FormatValidationReport(r, 10);
  EXPECT_NE(text.find("BAD              12.5%  (2 rows)  above the target\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("GOOD              4.0%  (3 rows)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("overall MAPE 7.4% over 5 rows; target 10%: met"), std::string::npos)
      << text;
}

// Fuzzing found a vTrain row with tensor parallelism 0 dividing by zero
// (Megatron's vocabulary padding to 128 x tp): SIGFPE.
TEST(ValidationTest, VtrainRowWithZeroTensorParallelIsKeptWithTheColumnNamed) {
  const ValidationRow v = OnlyRow(std::string(kVtrainHeader) + "8,8,1,1024,16,2,1024,0,8,1,100\n");
  EXPECT_FALSE(v.supported);
  EXPECT_NE(v.reason.find("'tensor parallelism' is '0'"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("from 1 to 1024"), std::string::npos) << v.reason;
}

TEST(ValidationTest, VtrainParallelSizesAboveTheLimitAreRefused) {
  const ValidationRow v =
      OnlyRow(std::string(kVtrainHeader) + "8,8,1,1024,16,2,1024,1,8,4096,100\n");
  EXPECT_FALSE(v.supported);
  EXPECT_NE(v.reason.find("'pipeline parallelism' is '4096'"), std::string::npos) << v.reason;
}

constexpr char kPublishedHeader[] =
    "id,source,model,layers,hidden,heads,seq_len,gpu,num_gpus,tp,pp,cp,micro_batch,"
    "global_batch,metric,value\n";

// cp 0 divided by zero deriving the global batch of a memory row.
TEST(ValidationTest, PublishedRowWithZeroContextParallelNamesTheColumn) {
  const ValidationRow v = OnlyRow(std::string(kPublishedHeader) +
                                  "KOR22-9,x,GPT,2,1024,16,2048,A100-SXM4-80GB,8,1,1,0,1,,"
                                  "memory_gb,10\n");
  EXPECT_FALSE(v.supported);
  EXPECT_NE(v.reason.find("'cp' is '0'"), std::string::npos) << v.reason;
}

TEST(ValidationTest, PublishedRowWithNegativeTensorParallelNamesTheColumn) {
  const ValidationRow v = OnlyRow(std::string(kPublishedHeader) +
                                  "NAR21-9,x,GPT,2,1024,16,2048,A100-SXM4-80GB,8,-2,1,,1,8,"
                                  "iteration_time_s,1\n");
  EXPECT_FALSE(v.supported);
  EXPECT_NE(v.reason.find("'tp' is '-2'"), std::string::npos) << v.reason;
}

// 4 x hidden for the default FFN overflowed int (UB) for hidden sizes over
// 2^29; Resolve's check now names the field.
TEST(ValidationTest, HugeHiddenSizeIsAClearErrorNotAnOverflow) {
  const ValidationRow v =
      OnlyRow(std::string(kVtrainHeader) + "1,1,1,1073741824,16,1,1024,1,1,1,100\n");
  EXPECT_FALSE(v.supported);
  EXPECT_NE(v.reason.find("model.hidden_size=1073741824 is too large"), std::string::npos)
      << v.reason;
}

}  // namespace
}  // namespace clustersim::scenarios
