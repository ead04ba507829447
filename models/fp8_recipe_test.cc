// Fp8Recipe (fp8_recipe.h): names, parsing and each recipe's cast bytes.
#include "models/fp8_recipe.h"

#include <string>

#include "gtest/gtest.h"

namespace clustersim::models {
namespace {

TEST(Fp8RecipeTest, NamesRoundTripAndUnknownNamesListTheValidOnes) {
  for (Fp8Recipe r : {Fp8Recipe::kDelayed, Fp8Recipe::kCurrent, Fp8Recipe::kMxfp8}) {
    absl::StatusOr<Fp8Recipe> parsed = ParseFp8Recipe(Fp8RecipeName(r));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, r);
  }
  absl::StatusOr<Fp8Recipe> bad = ParseFp8Recipe("hybrid");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(bad.status().message()).find("use delayed, current or mxfp8"),
            std::string::npos);
}

// Delayed: cast_transpose (2 B in, 1 + 1 B out); current: an amax read
// first; MXFP8: both layouts with one E8M0 scale per 32 elements each.
TEST(Fp8RecipeTest, CastBytesPerElement) {
  EXPECT_EQ(Fp8CastBytesPerElement(Fp8Recipe::kDelayed), 4);
  EXPECT_EQ(Fp8CastBytesPerElement(Fp8Recipe::kCurrent), 6);
  EXPECT_EQ(Fp8CastBytesPerElement(Fp8Recipe::kMxfp8), 4.0625);
}

}  // namespace
}  // namespace clustersim::models
