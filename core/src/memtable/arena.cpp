#include "memtable/arena.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <utility>

namespace skv {

Arena::Arena(size_t block_size, size_t first_block_size, std::shared_ptr<MemoryBlocks> source)
    : block_size_(block_size < kMinBlockSize ? kMinBlockSize : block_size),
      next_block_size_(first_block_size == 0 ? block_size_
                                             : std::max(first_block_size, block_size_ / 4)),
      source_(std::move(source)) {
  assert(source_ != nullptr);
}

Arena::Arena(size_t block_size, size_t first_block_size, char* initial, size_t initial_bytes)
    : Arena(block_size, first_block_size) {
  assert((reinterpret_cast<uintptr_t>(initial) & (kAlignment - 1)) == 0);
  alloc_ptr_ = initial;
  alloc_bytes_remaining_ = initial_bytes;
}

Arena::~Arena() {
  for (const Block& b : blocks_) source_->release(b.data, b.bytes);
}

char* Arena::allocate_fallback(size_t bytes) {
  assert(bytes > 0);
  if (bytes > block_size_ / 4) {
    // Big: its own block, and the current block keeps serving small requests.
    return allocate_new_block(bytes);
  }
  alloc_ptr_ = allocate_new_block(next_block_size_);
  alloc_bytes_remaining_ = next_block_size_;
  next_block_size_ = block_size_;
  char* result = alloc_ptr_;
  alloc_ptr_ += bytes;
  alloc_bytes_remaining_ -= bytes;
  return result;
}

char* Arena::allocate_aligned(size_t bytes) {
  const size_t misalignment = reinterpret_cast<uintptr_t>(alloc_ptr_) & (kAlignment - 1);
  const size_t slop = misalignment == 0 ? 0 : kAlignment - misalignment;
  char* result;
  if (bytes + slop <= alloc_bytes_remaining_) {
    result = alloc_ptr_ + slop;
    alloc_ptr_ += bytes + slop;
    alloc_bytes_remaining_ -= bytes + slop;
  } else {
    result = allocate_fallback(bytes);
  }
  assert((reinterpret_cast<uintptr_t>(result) & (kAlignment - 1)) == 0);
  return result;
}

char* Arena::allocate_new_block(size_t bytes) {
  // Room first, so the push below cannot throw and leak the block.
  if (blocks_.size() == blocks_.capacity())
    blocks_.reserve(std::max<size_t>(8, 2 * blocks_.size()));
  char* data = source_->allocate(bytes);
  blocks_.push_back(Block{data, bytes});
  static_assert(sizeof(Block) == kBlockOverhead);
  memory_usage_.fetch_add(bytes + kBlockOverhead, std::memory_order_relaxed);
  return data;
}

}  // namespace skv
