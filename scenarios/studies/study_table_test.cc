#include "scenarios/studies/study_table.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::scenarios {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

StudyRow Row(std::string label, double step, bool with_train) {
  config::Result r;
  r.set_step_time_s(step);
  r.set_tokens_per_s(1000 / step);
  r.set_fits_in_memory(step < 2);
  r.mutable_scenario()->mutable_parallelism()->set_tensor_model_parallel_size(2);
  if (with_train) r.mutable_train()->set_total_usd(1234.4);
  return {std::move(label), r};
}

TEST(StudyTableTest, TextSideBySideHasOneColumnPerResult) {
  absl::StatusOr<std::string> t =
      FormatStudyTable({Row("a", 1.5, false), Row("b", 3, true)}, "text", true);
  ASSERT_TRUE(t.ok());
  EXPECT_THAT(*t, ContainsRegex("\nstep_time_s +1\\.5000 +3\\.0000\n"));
  EXPECT_THAT(*t, ContainsRegex("\nstrategy +tp2 pp0 dp0 mbs0 gbs0 rc- +tp2"));
  EXPECT_THAT(*t, ContainsRegex("\nfits_in_memory +yes +no\n"));
  EXPECT_THAT(*t, ContainsRegex("\ntotal_usd +1234\n"));  // only b priced a run
}

TEST(StudyTableTest, CsvQuotesAndJsonKeepsRawNumbers) {
  absl::StatusOr<std::string> csv = FormatStudyTable({Row("x, \"y\"", 1, false)}, "csv", false);
  ASSERT_TRUE(csv.ok());
  EXPECT_THAT(*csv, HasSubstr("\"x, \"\"y\"\"\""));
  EXPECT_THAT(*csv, HasSubstr("label,strategy,step_time_s,"));
  absl::StatusOr<std::string> json = FormatStudyTable({Row("a", 1.25, false)}, "json", false);
  ASSERT_TRUE(json.ok());
  EXPECT_THAT(*json, HasSubstr("\"step_time_s\": 1.25"));
  EXPECT_THAT(*json, HasSubstr("\"fits_in_memory\": true"));
  EXPECT_THAT(*json, Not(HasSubstr("total_usd")));  // no run length given
  EXPECT_EQ(FormatStudyTable({}, "xml", false).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Goodput rows (text, JSON) and CSV columns appear only when some result
// carries them.
TEST(StudyTableTest, GoodputRowsOnlyWhenSimulated) {
  StudyRow with = Row("g", 1, true);
  with.result.mutable_goodput()->mutable_time_to_train_days()->set_p50(54.25);
  with.result.mutable_goodput()->set_effective_training_time(0.9);
  absl::StatusOr<std::string> plain = FormatStudyTable({Row("a", 1, true)}, "text", true);
  ASSERT_TRUE(plain.ok());
  EXPECT_THAT(*plain, Not(HasSubstr("goodput")));
  absl::StatusOr<std::string> t = FormatStudyTable({Row("a", 1, true), with}, "text", true);
  ASSERT_TRUE(t.ok());
  EXPECT_THAT(*t, ContainsRegex("\ngoodput_p50_days +54\.25\n"));
  EXPECT_THAT(*t, ContainsRegex("\neffective_training_time +0\.9000\n"));
  absl::StatusOr<std::string> json = FormatStudyTable({with}, "json", false);
  ASSERT_TRUE(json.ok());
  EXPECT_THAT(*json, HasSubstr("\"goodput_p50_days\": 54.25"));
  absl::StatusOr<std::string> plain_csv = FormatStudyTable({Row("a", 1, true)}, "csv", false);
  ASSERT_TRUE(plain_csv.ok());
  EXPECT_THAT(*plain_csv, Not(HasSubstr("goodput")));
  absl::StatusOr<std::string> csv = FormatStudyTable({Row("a", 1, true), with}, "csv", false);
  ASSERT_TRUE(csv.ok());
  EXPECT_THAT(*csv, HasSubstr(",goodput_percent,goodput_p10_days,goodput_p50_days,"));
  EXPECT_THAT(*csv, ContainsRegex(",90(\\.0+)?,[^,\n]*,54\\.25,"));  // the row with goodput
  EXPECT_THAT(*csv, ContainsRegex("\n\"?a\"?,[^\n]*,,,,,,\n"));  // the row without: empty cells
}

}  // namespace
}  // namespace clustersim::scenarios
