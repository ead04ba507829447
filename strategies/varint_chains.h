// File: strategies/varint_chains.h
//
// Many append-only streams of signed integers (zigzag varints) in one arena of
// 64-byte chunks: a stream is a linked list of chunks, each 60 bytes of data
// and the index of the next. Appending touches the stream's last chunk only,
// and the arena grows in fixed blocks (no reallocation copies, no per-stream
// capacity slack): for millions of short appends spread over many streams,
// as a simulated step's per-lane spans are.
//
// Example:
//   VarintChains chains(/*streams=*/2);
//   chains.Append(1, -5);
//   chains.Append(1, 300);
//   VarintChains::Reader r = chains.Read(1);
//   int64_t v;
//   while (r.Next(v)) ...  // -5, then 300
#ifndef CLUSTERSIM_STRATEGIES_VARINT_CHAINS_H_
#define CLUSTERSIM_STRATEGIES_VARINT_CHAINS_H_

#include <cstdint>
#include <memory>
#include <vector>

namespace clustersim::strategies {

class VarintChains {
 public:
  explicit VarintChains(size_t streams) : tails_(streams) {}

  // Appends `v` to stream `s`. REQUIRES: s < streams.
  void Append(size_t s, int64_t v);

  // Reads one stream from its start; valid while the chains are not appended to.
  class Reader {
   public:
    // The next value into `v`; false at the end of the stream.
    bool Next(int64_t& v);

   private:
    friend class VarintChains;
    Reader(const VarintChains& chains, uint32_t chunk, uint32_t end_chunk, uint32_t end_used)
        : chains_(chains), chunk_(chunk), end_chunk_(end_chunk), end_used_(end_used) {}
    uint8_t Byte();
    const VarintChains& chains_;
    uint32_t chunk_;
    uint32_t pos_ = 0;
    uint32_t end_chunk_;
    uint32_t end_used_;
  };
  Reader Read(size_t s) const;

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  static constexpr uint32_t kChunkBytes = 60;
  static constexpr uint32_t kBlockChunks = 4096;  // 256 KiB per arena block
  struct Chunk {
    uint8_t bytes[kChunkBytes];
    uint32_t next;
  };
  static_assert(sizeof(Chunk) == 64);
  struct Tail {
    uint32_t first = kNone;
    uint32_t last = kNone;
    uint32_t used = 0;  // bytes of `last` in use
  };
  Chunk& At(uint32_t c) { return blocks_[c / kBlockChunks][c % kBlockChunks]; }
  const Chunk& At(uint32_t c) const { return blocks_[c / kBlockChunks][c % kBlockChunks]; }
  uint32_t NewChunk();
  void PutByte(Tail& t, uint8_t b);

  std::vector<Tail> tails_;
  std::vector<std::unique_ptr<Chunk[]>> blocks_;
  uint32_t num_chunks_ = 0;
};

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_VARINT_CHAINS_H_
