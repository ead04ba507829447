#include "strategies/serving_trace_reader.h"

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

double Ms(sim::Time t) { return t.ToSeconds() * 1e3; }

std::string Examples() {
  return std::string(std::getenv("CLUSTERSIM_SOURCE_DIR")) + "/scenarios/examples/serve-modes/";
}

TEST(AzureTraceTest, ArrivalsAreTimesSinceTheFirstRecord) {
  // 18:15:46.6805900 -> 18:15:47.0000000 is 319.41 ms; across midnight to
  // 00:00:00.25 the next day is 5 h 44 min 13.569410 s after the first.
  absl::StatusOr<RequestTrace> t = ParseAzureTrace(
      "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
      "2023-11-16 18:15:46.6805900,374,44\r\n"
      "2023-11-16 18:15:47.0000000,100,1\r\n"
      "2023-11-17 00:00:00.25,2048,300\r\n",
      "t.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->requests.size(), 3u);
  EXPECT_EQ(Ms(t->requests[0].arrival), 0);
  EXPECT_NEAR(Ms(t->requests[1].arrival), 319.41, 1e-9);
  EXPECT_NEAR(t->requests[2].arrival.ToSeconds(), 5 * 3600 + 44 * 60 + 13.56941, 1e-9);
  EXPECT_EQ(t->requests[0].prompt_tokens, 374);
  EXPECT_EQ(t->requests[0].output_tokens, 44);
  EXPECT_EQ(t->requests[2].output_tokens, 300);
  EXPECT_FALSE(t->has_hash_ids);
  EXPECT_EQ(t->hash_ids.size(), 3u);
}

// A UTC offset moves the time: 01:00:00+01:00 is midnight UTC, 30 min before
// 00:30:00Z.
TEST(AzureTraceTest, UtcOffsets) {
  absl::StatusOr<RequestTrace> t = ParseAzureTrace(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2024-05-10 01:00:00.000000+01:00,10,2\n"
      "2024-05-10 00:30:00Z,10,2\n"
      "2024-05-10 00:10:00.5-00:30,10,2\n",
      "t.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NEAR(t->requests[1].arrival.ToSeconds(), 1800, 1e-9);
  EXPECT_NEAR(t->requests[2].arrival.ToSeconds(), 2400.5, 1e-9);
  EXPECT_FALSE(ParseAzureTrace("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                               "2024-05-10 00:00:00+1:00,10,2\n",
                               "t.csv")
                   .ok());
}

TEST(AzureTraceTest, NumericSecondsAnyColumnOrderAndExtraColumns) {
  absl::StatusOr<RequestTrace> t = ParseAzureTrace(
      "GeneratedTokens,Model,ContextTokens,TIMESTAMP\n5,m,10,1.5\n6,m,20,2.25\n\n", "t.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->requests.size(), 2u);
  EXPECT_NEAR(Ms(t->requests[1].arrival), 750, 1e-9);
  EXPECT_EQ(t->requests[1].prompt_tokens, 20);
  EXPECT_EQ(t->requests[1].output_tokens, 6);
}

TEST(MooncakeTraceTest, MillisecondsLengthsAndHashIds) {
  absl::StatusOr<RequestTrace> t = ParseMooncakeTrace(
      "{\"timestamp\": 27482, \"input_length\": 6955, \"output_length\": 52, \"hash_ids\": [46, "
      "47, 48]}\n\n"
      "{\"timestamp\": 30535, \"input_length\": 600, \"output_length\": 10}\n",
      "t.jsonl");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->requests.size(), 2u);
  EXPECT_EQ(Ms(t->requests[0].arrival), 0);
  EXPECT_NEAR(Ms(t->requests[1].arrival), 30535 - 27482, 1e-9);
  EXPECT_EQ(t->requests[0].prompt_tokens, 6955);
  EXPECT_EQ(t->requests[0].output_tokens, 52);
  EXPECT_TRUE(t->has_hash_ids);
  EXPECT_EQ(t->hash_ids[0], (std::vector<int64_t>{46, 47, 48}));
  EXPECT_TRUE(t->hash_ids[1].empty());
}

TEST(TraceReaderTest, ShippedSamplesRead) {
  absl::StatusOr<RequestTrace> azure = ReadRequestTrace(
      Examples() + "azure-sample.csv", RequestTraceFormat::kAzure, "inference.workload.trace_file");
  ASSERT_TRUE(azure.ok()) << azure.status();
  EXPECT_EQ(azure->requests.size(), 40u);
  absl::StatusOr<RequestTrace> mooncake =
      ReadRequestTrace(Examples() + "mooncake-sample.jsonl", RequestTraceFormat::kMooncake,
                       "inference.workload.trace_file");
  ASSERT_TRUE(mooncake.ok()) << mooncake.status();
  EXPECT_EQ(mooncake->requests.size(), 30u);
  EXPECT_TRUE(mooncake->has_hash_ids);
}

struct BadCase {
  const char* name;
  bool azure;
  const char* text;
  std::vector<std::string> expected;
};

class BadTraceTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadTraceTest, IsInvalidArgumentNamingLineAndField) {
  const BadCase& c = GetParam();
  absl::StatusOr<RequestTrace> t =
      c.azure ? ParseAzureTrace(c.text, "f=x") : ParseMooncakeTrace(c.text, "f=x");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("f=x"));
  for (const std::string& e : c.expected) {
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(e));
  }
}

constexpr char kHeader[] = "TIMESTAMP,ContextTokens,GeneratedTokens\n";

INSTANTIATE_TEST_SUITE_P(
    All, BadTraceTest,
    ::testing::Values(
        BadCase{"AzureEmpty", true, "", {"empty table"}},
        BadCase{"AzureHeaderOnly", true, kHeader, {"no requests", "TIMESTAMP,ContextTokens"}},
        BadCase{"AzureNoColumn",
                true,
                "TIMESTAMP,ContextTokens\n1,2\n",
                {"line 1", "no GeneratedTokens column"}},
        BadCase{"AzureNegativeTime",
                true,
                "TIMESTAMP,ContextTokens,GeneratedTokens\n-1,5,5\n",
                {"line 2", "TIMESTAMP is negative"}},
        BadCase{"AzureDecreasing",
                true,
                "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:47,5,5\n"
                "2023-11-16 18:15:46.5,5,5\n",
                {"line 3", "before the previous", "sort the file"}},
        BadCase{"AzureMissing",
                true,
                "TIMESTAMP,ContextTokens,GeneratedTokens\n1,,5\n",
                {"line 2", "ContextTokens is missing"}},
        BadCase{"AzureNotNumber",
                true,
                "TIMESTAMP,ContextTokens,GeneratedTokens\n1,5,lots\n",
                {"line 2", "GeneratedTokens=\"lots\" is not a number"}},
        BadCase{"AzureBadTime",
                true,
                "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-13-45 99:00:00,5,5\n",
                {"line 2", "TIMESTAMP=\"2023-13-45 99:00:00\"", "YYYY-MM-DD"}},
        BadCase{"AzureZeroTokens",
                true,
                "TIMESTAMP,ContextTokens,GeneratedTokens\n1,5,0\n",
                {"line 2", "GeneratedTokens=0", "between 1 and 10000000"}},
        BadCase{"AzureFractionalTokens",
                true,
                "TIMESTAMP,ContextTokens,GeneratedTokens\n1,5.5,3\n",
                {"line 2", "ContextTokens=5.5", "whole number"}},
        BadCase{"AzureWrongFieldCount",
                true,
                "TIMESTAMP,ContextTokens,GeneratedTokens\n1,5\n",
                {"line 2", "fields"}},
        BadCase{"MooncakeEmpty", false, "\n\n", {"no requests", "JSON object per line"}},
        BadCase{"MooncakeNotJson",
                false,
                "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5}\n{oops\n",
                {"line 2", "not a JSON object"}},
        BadCase{"MooncakeMissingKey",
                false,
                "{\"timestamp\": 0, \"input_length\": 5}\n",
                {"line 1", "no \"output_length\""}},
        BadCase{"MooncakeString",
                false,
                "{\"timestamp\": \"0\", \"input_length\": 5, \"output_length\": 5}\n",
                {"line 1", "\"timestamp\" is not a number"}},
        BadCase{"MooncakeNegative",
                false,
                "{\"timestamp\": -3, \"input_length\": 5, \"output_length\": 5}\n",
                {"line 1", "negative"}},
        BadCase{"MooncakeDecreasing",
                false,
                "{\"timestamp\": 10, \"input_length\": 5, \"output_length\": 5}\n"
                "{\"timestamp\": 9, \"input_length\": 5, \"output_length\": 5}\n",
                {"line 2", "before the previous"}},
        BadCase{"MooncakeBadHashIds",
                false,
                "{\"timestamp\": 1, \"input_length\": 5, \"output_length\": 5, \"hash_ids\": [1, "
                "\"a\"]}\n",
                {"line 1", "hash_ids"}}),
    [](const ::testing::TestParamInfo<BadCase>& i) { return std::string(i.param.name); });

TEST(TraceReaderTest, UnreadablePathIsNotFoundNamingTheField) {
  absl::StatusOr<RequestTrace> t = ReadRequestTrace(
      "/nonexistent/trace.csv", RequestTraceFormat::kAzure, "inference.workload.trace_file");
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(t.status().message()),
              AllOf(HasSubstr("inference.workload.trace_file=/nonexistent/trace.csv"),
                    HasSubstr("current directory")));
}

}  // namespace
}  // namespace clustersim::strategies
