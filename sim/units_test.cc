#include "sim/units.h"

#include "gtest/gtest.h"

namespace clustersim::sim {
namespace {

TEST(UnitsTest, FactoriesAgreeOnPicoseconds) {
  EXPECT_EQ(Nanoseconds(1).picoseconds(), 1000);
  EXPECT_EQ(Microseconds(1), Nanoseconds(1000));
  EXPECT_EQ(Milliseconds(1), Microseconds(1000));
  EXPECT_EQ(Seconds(1), Milliseconds(1000));
  EXPECT_EQ(Duration::FromSecondsDouble(1.5e-6), Nanoseconds(1500));
}

TEST(UnitsTest, TimeArithmetic) {
  const Time t = Time::Zero() + Microseconds(3);
  EXPECT_EQ(t - Time::Zero(), Microseconds(3));
  EXPECT_DOUBLE_EQ(t.ToMicroseconds(), 3.0);
  EXPECT_LT(Time::Zero(), t);
}

TEST(UnitsTest, TransferTimeRoundsUp) {
  // 1 byte at 3 bits/s is 8/3 s = 2666666666666.67 ps -> rounds up.
  EXPECT_EQ(TransferTime(Bytes(1), Bandwidth::BitsPerSecond(3)).picoseconds(), 2666666666667);
  // 100 GB/s moves 1e9 bytes in exactly 10 ms.
  EXPECT_EQ(TransferTime(Bytes(1000000000), Bandwidth::GigabytesPerSecond(100)), Milliseconds(10));
}

TEST(UnitsTest, ComputeTimeRoundsUp) {
  EXPECT_EQ(ComputeTime(Flops(1e12), 1e12), Seconds(1));
  EXPECT_EQ(ComputeTime(Flops(1), 3e12).picoseconds(), 1);
}

TEST(UnitsTest, ConversionsSaturateAtTheClocksEnd) {
  // 1e7 s and 2^62 bytes at 1 b/s are past the ~9.2e6 s the clock holds.
  EXPECT_EQ(Duration::FromSecondsDouble(1e7), Duration::Max());
  EXPECT_EQ(Duration::FromSecondsDouble(-1e7), Duration::Zero() - Duration::Max());
  EXPECT_EQ(Duration::FromSecondsDouble(9e6), Seconds(9000000));
  EXPECT_EQ(TransferTime(Bytes(int64_t{1} << 62), Bandwidth::BitsPerSecond(1)), Duration::Max());
  EXPECT_EQ(ComputeTime(Flops(1e30), 1e12), Duration::Max());
  EXPECT_EQ(ComputeTime(Flops(9e18), 1e12), Seconds(9000000));
}

TEST(UnitsTest, CheckedAddDetectsOverflow) {
  Time out;
  EXPECT_TRUE(CheckedAdd(Time::Zero(), Seconds(5), &out));
  EXPECT_EQ(out - Time::Zero(), Seconds(5));
  EXPECT_FALSE(CheckedAdd(Time::Zero() + Duration::Max(), Picoseconds(1), &out));
}

TEST(UnitsTest, BandwidthConversions) {
  EXPECT_EQ(Bandwidth::Gbps(400).bits_per_second(), 400000000000);
  EXPECT_DOUBLE_EQ(Bandwidth::GigabytesPerSecond(50).GigabytesPerSecond(), 50.0);
  EXPECT_EQ(Bandwidth::GigabytesPerSecond(100).Scaled(0.5), Bandwidth::GigabytesPerSecond(50));
}

}  // namespace
}  // namespace clustersim::sim
