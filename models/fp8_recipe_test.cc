// Fp8Recipe (fp8_recipe.h): names, parsing and each recipe's cast bytes.
#include "models/fp8_recipe.h"

#include <string>

#include "gtest/gtest.h"

namespace clustersim::models {
namespace {

TEST(Fp8RecipeTest, NamesRoundTripAndUnknownNamesListTheValidOnes) {
  for (Fp8Recipe r :
       {Fp8Recipe::kDelayed, Fp8Recipe::kCurrent, Fp8Recipe::kMxfp8, Fp8Recipe::kRowwise}) {
    absl::StatusOr<Fp8Recipe> parsed = ParseFp8Recipe(Fp8RecipeName(r));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, r);
  }
  absl::StatusOr<Fp8Recipe> bad = ParseFp8Recipe("hybrid");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(bad.status().message()).find("use delayed, current, mxfp8 or rowwise"),
            std::string::npos);
}

// Delayed: cast_transpose (2 B in, 1 + 1 B out); current: an amax read
// first; MXFP8: both layouts with one E8M0 scale per 32 elements each.
TEST(Fp8RecipeTest, CastBytesPerElement) {
  EXPECT_EQ(Fp8CastBytesPerElement(Fp8Recipe::kDelayed), 4);
  EXPECT_EQ(Fp8CastBytesPerElement(Fp8Recipe::kCurrent), 6);
  EXPECT_EQ(Fp8CastBytesPerElement(Fp8Recipe::kMxfp8), 4.0625);
}

// torchao rowwise: two kernels per activation (2 + 1 + 2, then 2 + 1), the
// weight's second layout through a 16-bit transpose (3 + 4 + 3), and a 16-bit
// read and write of each backward GEMM output; the other recipes cast weights
// as activations and rescale nothing.
TEST(Fp8RecipeTest, RowwiseCastsTwiceAndRescalesTheBackwardOutputs) {
  EXPECT_EQ(Fp8CastBytesPerElement(Fp8Recipe::kRowwise), 8);
  EXPECT_EQ(Fp8WeightCastBytesPerElement(Fp8Recipe::kRowwise), 10);
  EXPECT_EQ(Fp8BackwardRescaleBytesPerElement(Fp8Recipe::kRowwise), 4);
  EXPECT_EQ(Fp8WeightCastBytesPerElement(Fp8Recipe::kCurrent), 6);
  EXPECT_EQ(Fp8BackwardRescaleBytesPerElement(Fp8Recipe::kDelayed), 0);
}

// Grouped GEMM inputs: current scaling's amax, scale and cast per expert;
// MXFP8's one cast per expert; delayed scaling's one fused multi-tensor cast.
TEST(Fp8RecipeTest, GroupedCastKernels) {
  EXPECT_EQ(Fp8GroupedCastKernels(Fp8Recipe::kCurrent, 16), 48);
  EXPECT_EQ(Fp8GroupedCastKernels(Fp8Recipe::kMxfp8, 16), 16);
  EXPECT_EQ(Fp8GroupedCastKernels(Fp8Recipe::kDelayed, 16), 1);
  EXPECT_EQ(Fp8GroupedCastKernels(Fp8Recipe::kRowwise, 16), 2);
}

// MXFP8's block-scaled GEMMs against per-tensor ones (TE's GEMM profiling
// guide, pre-quantized B300 kernels): 6.812 / 7.161 ms; the others run at 1.
TEST(Fp8RecipeTest, BlockScaledGemmsRunSlowerThanPerTensorOnes) {
  EXPECT_NEAR(Fp8GemmRateFactor(Fp8Recipe::kMxfp8), 0.951, 5e-4);
  EXPECT_EQ(Fp8GemmRateFactor(Fp8Recipe::kDelayed), 1);
  EXPECT_EQ(Fp8GemmRateFactor(Fp8Recipe::kCurrent), 1);
  EXPECT_EQ(Fp8GemmRateFactor(Fp8Recipe::kRowwise), 1);
}

}  // namespace
}  // namespace clustersim::models
