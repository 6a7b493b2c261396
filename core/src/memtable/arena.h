// Arena: a bump allocator that hands out memory from large blocks and frees it all at once when
// it is destroyed. The memtable keeps its entries and skiplist nodes here. Blocks come from a
// MemoryBlocks source (skv/platform.h): the platform's for a tree's memtables, the heap otherwise.
//
// Thread safety: allocate() and allocate_aligned() must be called by one thread at a time (the
// memtable's single writer). memory_usage() may be called from any thread at any time.

#ifndef SKV_MEMTABLE_ARENA_H_
#define SKV_MEMTABLE_ARENA_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "skv/platform.h"

namespace skv {

class Arena {
 public:
  // Default size of the blocks small allocations are carved from. An allocation bigger than a
  // quarter of a block gets a block of its own, so at most a quarter of a block is wasted at a
  // block's end.
  static constexpr size_t kBlockSize = size_t{32} << 10;
  static constexpr size_t kMinBlockSize = size_t{1} << 10;
  // What allocate_aligned() aligns to: enough for pointers, std::atomic of pointers and uint64_t
  // (every MemoryBlocks source aligns blocks to at least this much).
  static constexpr size_t kAlignment = 8;
  static_assert(alignof(void*) <= kAlignment && alignof(uint64_t) <= kAlignment);
  // What each block adds to memory_usage() besides its own bytes: its entry in the block list.
  static constexpr size_t kBlockOverhead = sizeof(char*) + sizeof(size_t);

  // REQUIRES: block_size >= kMinBlockSize (smaller values are raised to it). The first block for
  // small allocations has `first_block_size` bytes instead (0: block_size; otherwise raised to
  // at least a quarter of block_size), so an arena that stays small stays cheap. Every block
  // comes from `source` and goes back to it when the arena is destroyed.
  // REQUIRES: source != nullptr.
  explicit Arena(size_t block_size = kBlockSize, size_t first_block_size = 0,
                 std::shared_ptr<MemoryBlocks> source = heap_memory_blocks());
  // An arena that carves small allocations from `initial` (`initial_bytes` long, aligned to
  // kAlignment, not owned, outliving the arena) before taking any block from the heap: an owner
  // that embeds a small buffer makes an arena that stays within it cost no allocation. `initial`
  // is not counted in memory_usage().
  Arena(size_t block_size, size_t first_block_size, char* initial, size_t initial_bytes);
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena();

  // Returns `bytes` of uninitialized memory, valid until the arena is destroyed. No particular
  // alignment. REQUIRES: bytes > 0.
  char* allocate(size_t bytes);

  // Like allocate(), aligned to kAlignment.
  char* allocate_aligned(size_t bytes);

  // Bytes of every block allocated so far plus the bookkeeping, an upper bound of the memory the
  // arena holds.
  size_t memory_usage() const { return memory_usage_.load(std::memory_order_relaxed); }

 private:
  char* allocate_fallback(size_t bytes);
  char* allocate_new_block(size_t bytes);

  const size_t block_size_;
  size_t next_block_size_;  // of the next block for small allocations
  char* alloc_ptr_ = nullptr;
  size_t alloc_bytes_remaining_ = 0;
  struct Block {
    char* data;
    size_t bytes;
  };
  const std::shared_ptr<MemoryBlocks> source_;
  std::vector<Block> blocks_;
  std::atomic<size_t> memory_usage_{0};
};

inline char* Arena::allocate(size_t bytes) {
  if (bytes <= alloc_bytes_remaining_) {
    char* result = alloc_ptr_;
    alloc_ptr_ += bytes;
    alloc_bytes_remaining_ -= bytes;
    return result;
  }
  return allocate_fallback(bytes);
}

}  // namespace skv

#endif  // SKV_MEMTABLE_ARENA_H_
