#include "sim/prefault.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "sim/huge_pages.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace clustersim::sim {
namespace {

constexpr size_t kPage = 4096;

// Whether this kernel populates on request (Linux 5.14+).
bool KernelPopulates() {
  void* p = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  const bool ok = madvise(p, kPage, MADV_POPULATE_WRITE) == 0;
  munmap(p, kPage);
  return ok;
}

// Pages of [p, p + bytes) resident in memory.
size_t ResidentPages(void* p, size_t bytes) {
  std::vector<unsigned char> in((bytes + kPage - 1) / kPage);
  EXPECT_EQ(mincore(p, bytes, in.data()), 0);
  size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

TEST(PrefaultTest, PopulatesWithoutChangingTheContents) {
  const size_t bytes = 4 * kHugeBlockBytes;
  auto* p = static_cast<uint8_t*>(AllocateHugeBlock(bytes));
  std::memset(p, 7, kPage);  // already written: must keep its value
  PrefaultAsync(p, bytes);
  WaitForPrefaults();
  if (KernelPopulates()) EXPECT_EQ(ResidentPages(p, bytes), bytes / kPage);
  for (size_t i = 0; i < kPage; ++i) ASSERT_EQ(p[i], 7);
  for (size_t i = kPage; i < bytes; i += kPage) ASSERT_EQ(p[i], 0);
  FreeHugeBlock(p, bytes);
}

TEST(PrefaultTest, FreeingCancelsPendingRequests) {
  // Many requests queued, each block freed at once: the thread must drop or
  // finish them before the memory goes back (a crash or a sanitizer report
  // otherwise), and later requests still run.
  for (int i = 0; i < 20; ++i) {
    const size_t bytes = 8 * kHugeBlockBytes;
    void* p = AllocateHugeBlock(bytes);
    PrefaultAsync(p, bytes);
    FreeHugeBlock(p, bytes);
  }
  const size_t bytes = kHugeBlockBytes;
  void* p = AllocateHugeBlock(bytes);
  PrefaultAsync(p, bytes);
  WaitForPrefaults();
  if (KernelPopulates()) EXPECT_EQ(ResidentPages(p, bytes), bytes / kPage);
  FreeHugeBlock(p, bytes);
}

TEST(PrefaultTest, GrowingVectorStaysAheadAndKeepsItsValues) {
  HugeVector<uint64_t> v;
  const size_t n = 3 * kPrefaultAheadBytes / sizeof(uint64_t);
  v.reserve(n);
  PrefaultAhead(v);
  for (size_t i = 0; i < n; ++i) {
    v.push_back(i * 3);
    PrefaultAhead(v);
  }
  WaitForPrefaults();
  for (size_t i = 0; i < n; i += 4099) ASSERT_EQ(v[i], i * 3);
}

TEST(PrefaultTest, SmallStorageIsLeftAlone) {
  HugeVector<uint32_t> v(100, 1u);  // from operator new, not a huge block
  PrefaultElements(v, 0, v.size());
  PrefaultAhead(v);
  WaitForPrefaults();
  EXPECT_EQ(v[99], 1u);
}

}  // namespace
}  // namespace clustersim::sim
