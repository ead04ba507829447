#include "models/fitted_constants.h"

#include <string>

#include "gtest/gtest.h"

namespace clustersim::models {
namespace {

constexpr char kAllRows[] = R"pb(
  constant { name: "serving_host_us_per_iteration" value: 1250 training_split: "t" fit_script: "f" source: "s" }
  constant { name: "decode_attention_flops_per_sm_cycle" value: 32 training_split: "t" fit_script: "f" source: "s" }
)pb";

TEST(FittedConstantsTest, ShippedTableHasEveryConstant) {
  const FittedConstants& f = Fitted();
  EXPECT_GT(f.serving_host_us_per_iteration, 0);
  EXPECT_GT(f.decode_attention_flops_per_sm_cycle, 0);
}

TEST(FittedConstantsTest, ParsesEveryRowIntoItsField) {
  absl::StatusOr<FittedConstants> f = ParseFittedConstants(kAllRows, "test");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->serving_host_us_per_iteration, 1250);
  EXPECT_EQ(f->decode_attention_flops_per_sm_cycle, 32);
}

TEST(FittedConstantsTest, MissingDuplicateUnknownAndUnsourcedRowsAreRefused) {
  const std::string all = kAllRows;
  const std::string missing = all.substr(0, all.rfind("constant {"));
  EXPECT_NE(ParseFittedConstants(missing, "f").status().message().find(
                "no row for 'decode_attention_flops_per_sm_cycle'"),
            std::string::npos);
  const std::string duplicate =
      all + R"pb(constant { name: "serving_host_us_per_iteration" value: 1 training_split: "t" fit_script: "f" source: "s" })pb";
  EXPECT_NE(ParseFittedConstants(duplicate, "f").status().message().find("duplicate name"),
            std::string::npos);
  const std::string unknown =
      all + R"pb(constant { name: "magic" value: 1 training_split: "t" fit_script: "f" source: "s" })pb";
  EXPECT_NE(ParseFittedConstants(unknown, "f").status().message().find("'magic': unknown name"),
            std::string::npos);
  const std::string unsourced = R"pb(constant { name: "serving_host_us_per_iteration" value: 900 })pb";
  EXPECT_NE(ParseFittedConstants(unsourced, "f").status().message().find("training_split"),
            std::string::npos);
  const std::string negative =
      R"pb(constant { name: "serving_host_us_per_iteration" value: -1 training_split: "t" fit_script: "f" source: "s" })pb";
  EXPECT_NE(ParseFittedConstants(negative, "f").status().message().find("must be finite"),
            std::string::npos);
  EXPECT_FALSE(ParseFittedConstants("constant {", "f").ok());
}

}  // namespace
}  // namespace clustersim::models
