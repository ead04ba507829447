#include "sim/csv_table.h"

#include "gtest/gtest.h"

namespace clustersim::sim {
namespace {

TEST(CsvTableTest, ParsesQuotedFieldsBomAndCrlf) {
  absl::StatusOr<CsvTable> t =
      ParseCsv("\xEF\xBB\xBFid,notes\r\nA-1,\"x, \"\"y\"\"\nz\"\r\nA-2,plain\r\n", "t.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->Get(t->rows[0], "notes"), "x, \"y\"\nz");
  EXPECT_EQ(t->Get(t->rows[1], "id"), "A-2");
  EXPECT_EQ(t->row_lines[1], 4);
  EXPECT_EQ(t->Get(t->rows[1], "missing"), "");
}

TEST(CsvTableTest, RejectsRaggedRowsAndOpenQuotes) {
  absl::StatusOr<CsvTable> ragged = ParseCsv("a,b\n1,2,3\n", "r.csv");
  ASSERT_FALSE(ragged.ok());
  EXPECT_NE(ragged.status().message().find("r.csv: line 2 has 3 fields"), std::string::npos);
  EXPECT_FALSE(ParseCsv("a,b\n\"1,2\n", "q.csv").ok());
  EXPECT_FALSE(ParseCsv("", "e.csv").ok());
}

TEST(CsvTableTest, ReadsTheShippedValidationTables) {
  const std::string dir = std::string(std::getenv("CLUSTERSIM_SOURCE_DIR")) + "/tests/validation/";
  for (const char* f : {"published-runs.csv", "vtrain/ground_truth_single.csv",
                        "vtrain/ground_truth_multi.csv"}) {
    FILE* fp = std::fopen((dir + f).c_str(), "rb");
    ASSERT_NE(fp, nullptr) << f;
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, fp)) > 0) text.append(buf, n);
    std::fclose(fp);
    absl::StatusOr<CsvTable> t = ParseCsv(text, f);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_GT(t->rows.size(), 50u) << f;
  }
}

}  // namespace
}  // namespace clustersim::sim
