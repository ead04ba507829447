#include "strategies/varint_chains.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace clustersim::strategies {
namespace {

std::vector<int64_t> ReadAll(const VarintChains& chains, size_t s) {
  std::vector<int64_t> out;
  VarintChains::Reader r = chains.Read(s);
  for (int64_t v; r.Next(v);) out.push_back(v);
  return out;
}

TEST(VarintChainsTest, EmptyStreamsReadNothing) {
  VarintChains chains(3);
  EXPECT_TRUE(ReadAll(chains, 0).empty());
  chains.Append(1, 7);
  EXPECT_TRUE(ReadAll(chains, 0).empty());
  EXPECT_TRUE(ReadAll(chains, 2).empty());
  EXPECT_EQ(ReadAll(chains, 1), std::vector<int64_t>{7});
}

TEST(VarintChainsTest, InterleavedStreamsKeepTheirOwnValuesAcrossChunks) {
  // Values of every varint length, including the extremes, appended to three
  // streams in turn: each stream spans many chunks and blocks, interleaved.
  std::vector<int64_t> values = {0, 1, -1, 63, -64, 64, 300, -300, INT64_MAX, INT64_MIN};
  for (int64_t v = 1; v <= INT64_MAX / 3; v *= 3) {
    values.push_back(v);
    values.push_back(-v);
  }
  VarintChains chains(3);
  std::vector<std::vector<int64_t>> want(3);
  for (int round = 0; round < 3000; ++round) {
    for (size_t s = 0; s < 3; ++s) {
      const int64_t v = values[(round * 7 + s) % values.size()];
      chains.Append(s, v);
      want[s].push_back(v);
    }
  }
  for (size_t s = 0; s < 3; ++s) EXPECT_EQ(ReadAll(chains, s), want[s]) << "stream " << s;
}

TEST(VarintChainsTest, StreamEndingExactlyAtAChunkBoundary) {
  // 60 one-byte values fill one chunk exactly; the 61st starts a new chunk.
  VarintChains chains(1);
  std::vector<int64_t> want;
  for (int i = 0; i < 60; ++i) {
    chains.Append(0, i % 50);
    want.push_back(i % 50);
  }
  EXPECT_EQ(ReadAll(chains, 0), want);
  chains.Append(0, -3);
  want.push_back(-3);
  EXPECT_EQ(ReadAll(chains, 0), want);
}

}  // namespace
}  // namespace clustersim::strategies
