#include "cli/parse_args.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::cli {
namespace {

namespace po = boost::program_options;
using ::testing::HasSubstr;

TEST(ParseArgsTest, TableFormatIsTextCsvOrJson) {
  for (const char* ok : {"text", "csv", "json"}) EXPECT_TRUE(CheckTableFormat(ok).ok()) << ok;
  const absl::Status bad = CheckTableFormat("yaml");
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message(), "--format=yaml is not known; use text, csv or json");
}

TEST(ParseArgsTest, UnknownFlagNamesTheCommand) {
  po::options_description options;
  options.add_options()("format", po::value<std::string>(), "text|csv|json");
  po::variables_map vm;
  const absl::Status s = ParseArgs({"--formt", "csv"}, options, nullptr, "compare", &vm);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("compare"));
}

}  // namespace
}  // namespace clustersim::cli
