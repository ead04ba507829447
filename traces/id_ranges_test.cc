#include "traces/id_ranges.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::traces {
namespace {

using ::testing::HasSubstr;

TEST(IdRangesTest, ParsesIdsAndInclusiveRanges) {
  absl::StatusOr<IdRanges> r = IdRanges::Parse("64, 0-7", "--trace-ranks");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->Contains(0));
  EXPECT_TRUE(r->Contains(7));
  EXPECT_FALSE(r->Contains(8));
  EXPECT_FALSE(r->Contains(63));
  EXPECT_TRUE(r->Contains(64));
  EXPECT_FALSE(r->Contains(65));
  EXPECT_EQ(r->ToString(), "0-7,64");
}

TEST(IdRangesTest, MergesOverlappingAndAdjacentRanges) {
  absl::StatusOr<IdRanges> r = IdRanges::Parse("4-9,0-3,8-12,20", "--trace-ranks");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->ToString(), "0-12,20");
  EXPECT_EQ(r->ranges().size(), 2u);
}

TEST(IdRangesTest, RejectsBadTextNamingTheFlagAndTheFix) {
  for (const char* bad : {"", "1,,2", "x", "3-1", "-2", "1-", "1.5"}) {
    absl::StatusOr<IdRanges> r = IdRanges::Parse(bad, "--trace-steps");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("--trace-steps"));
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("e.g. 0-7,64"));
  }
}

}  // namespace
}  // namespace clustersim::traces
