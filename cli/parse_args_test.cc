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

// Fuzzing found `--tp %value%` hanging: Boost substitutes %value% in its
// error message with the value, which contains %value% again, forever.
TEST(ParseArgsTest, BoostPlaceholderInAnArgumentIsRefusedNotHung) {
  po::options_description options;
  options.add_options()("tp", po::value<int>(), "tensor-parallel size");
  po::positional_options_description positional;
  positional.add("scenario", 1);
  options.add_options()("scenario", po::value<std::string>(), "file");
  for (const char* bad : {"%value%", "x%option%y", "%canonical_option%", "%original_token%"}) {
    po::variables_map vm;
    const absl::Status s = ParseArgs({"--tp", bad}, options, &positional, "run", &vm);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), HasSubstr("remove the % signs")) << bad;
  }
  po::variables_map vm;
  EXPECT_FALSE(ParseArgs({"--tp=%value%"}, options, &positional, "run", &vm).ok());
  EXPECT_FALSE(ParseArgs({"%prefix_option%"}, options, &positional, "run", &vm).ok());
}

TEST(ParseArgsTest, PercentSignsThatAreNoPlaceholderPass) {
  po::options_description options;
  options.add_options()("name", po::value<std::string>(), "a name");
  for (const char* ok : {"50%", "%", "a%b", "%%", "100% of 5%"}) {
    po::variables_map vm;
    EXPECT_TRUE(ParseArgs({"--name", ok}, options, nullptr, "run", &vm).ok()) << ok;
  }
}

}  // namespace
}  // namespace clustersim::cli
