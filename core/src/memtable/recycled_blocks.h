// RecycledBlocks: memory blocks of the memtables, handed from a flushed memtable to the next one.
// A memtable's arena takes its blocks from a MemoryBlocks source; natively those are 2 MiB
// mappings, and the first touch of each page of a fresh one faults and zeroes it on the commit
// leader's inserts (6.4% of a durable update phase, docs/benchmarks.md). This wrapper keeps the
// blocks of the source's preferred size that memtables give back, up to a byte limit, and hands
// them to later allocations of that size: their pages are already there. Other sizes, and blocks
// past the limit, go to the source at once. The kept blocks go back to the source when the
// wrapper is destroyed (after the last memtable holding it).
//
// Thread safety: allocate() and release() may be called from several threads at once.

#ifndef SKV_MEMTABLE_RECYCLED_BLOCKS_H_
#define SKV_MEMTABLE_RECYCLED_BLOCKS_H_

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "skv/platform.h"

namespace skv {

class RecycledBlocks final : public MemoryBlocks {
 public:
  // Keeps at most `keep_bytes` of released blocks of source->preferred_block_size() (none when
  // the source has no preferred size). REQUIRES: source != nullptr.
  RecycledBlocks(std::shared_ptr<MemoryBlocks> source, size_t keep_bytes);
  ~RecycledBlocks() override;

  size_t preferred_block_size() const override { return block_size_; }
  char* allocate(size_t bytes) override;
  void release(char* block, size_t bytes) noexcept override;

  // Bytes of released blocks kept for reuse now.
  size_t kept_bytes() const;

 private:
  const std::shared_ptr<MemoryBlocks> source_;
  const size_t block_size_;
  const size_t keep_blocks_;
  mutable std::mutex mu_;
  std::vector<char*> kept_;  // guarded by mu_
};

}  // namespace skv

#endif  // SKV_MEMTABLE_RECYCLED_BLOCKS_H_
