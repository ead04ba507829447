#include "sim/huge_pages.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace clustersim::sim {
namespace {

TEST(HugePagesTest, LargeBlocksAreAlignedAndZeroed) {
  const size_t bytes = kHugeBlockBytes + 12345;
  auto* p = static_cast<uint8_t*>(AllocateHugeBlock(bytes));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (size_t{2} << 20), 0u);
  for (size_t i = 0; i < bytes; i += 4096) EXPECT_EQ(p[i], 0);
  EXPECT_EQ(p[bytes - 1], 0);
  p[0] = 1;
  p[bytes - 1] = 2;  // the whole block is writable
  FreeHugeBlock(p, bytes);
}

TEST(HugePagesTest, VectorGrowsAcrossTheThresholdKeepingItsValues) {
  HugeVector<uint32_t> v;
  const uint32_t n = static_cast<uint32_t>(3 * kHugeBlockBytes / sizeof(uint32_t));
  for (uint32_t i = 0; i < n; ++i) v.push_back(i * 7);
  ASSERT_EQ(v.size(), n);
  for (uint32_t i = 0; i < n; i += 997) ASSERT_EQ(v[i], i * 7);
  HugeVector<uint32_t> small(10, 5u);  // below the threshold: operator new
  EXPECT_EQ(small[9], 5u);
  v.clear();
  v.shrink_to_fit();
  EXPECT_EQ(v.capacity(), 0u);
}

}  // namespace
}  // namespace clustersim::sim
