#include "strategies/varint_chains.h"

#include "sim/check.h"

namespace clustersim::strategies {

uint32_t VarintChains::NewChunk() {
  SIM_CHECK(num_chunks_ < kNone) << "varint chains: arena full";
  if (num_chunks_ % kBlockChunks == 0) {
    blocks_.push_back(std::make_unique_for_overwrite<Chunk[]>(kBlockChunks));
  }
  const uint32_t c = num_chunks_++;
  At(c).next = kNone;
  return c;
}

void VarintChains::PutByte(Tail& t, uint8_t b) {
  if (t.last == kNone || t.used == kChunkBytes) {
    const uint32_t c = NewChunk();
    if (t.last == kNone) {
      t.first = c;
    } else {
      At(t.last).next = c;
    }
    t.last = c;
    t.used = 0;
  }
  At(t.last).bytes[t.used++] = b;
}

void VarintChains::Append(size_t s, int64_t v) {
  Tail& t = tails_[s];
  uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);  // zigzag
  while (z >= 0x80) {
    PutByte(t, static_cast<uint8_t>(z | 0x80));
    z >>= 7;
  }
  PutByte(t, static_cast<uint8_t>(z));
}

VarintChains::Reader VarintChains::Read(size_t s) const {
  const Tail& t = tails_[s];
  return Reader(*this, t.first, t.last, t.used);
}

uint8_t VarintChains::Reader::Byte() {
  if (pos_ == kChunkBytes) {
    chunk_ = chains_.At(chunk_).next;
    pos_ = 0;
  }
  return chains_.At(chunk_).bytes[pos_++];
}

bool VarintChains::Reader::Next(int64_t& v) {
  if (chunk_ == kNone || (chunk_ == end_chunk_ && pos_ == end_used_)) return false;
  uint64_t z = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t b = Byte();
    z |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  v = static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
  return true;
}

}  // namespace clustersim::strategies
