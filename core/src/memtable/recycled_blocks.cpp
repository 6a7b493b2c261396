#include "memtable/recycled_blocks.h"

#include <cassert>
#include <utility>

namespace skv {

RecycledBlocks::RecycledBlocks(std::shared_ptr<MemoryBlocks> source, size_t keep_bytes)
    : source_(std::move(source)),
      block_size_(source_->preferred_block_size()),
      keep_blocks_(block_size_ == 0 ? 0 : keep_bytes / block_size_) {
  assert(source_ != nullptr);
  kept_.reserve(keep_blocks_);
}

RecycledBlocks::~RecycledBlocks() {
  for (char* block : kept_) source_->release(block, block_size_);
}

char* RecycledBlocks::allocate(size_t bytes) {
  if (bytes == block_size_) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!kept_.empty()) {
      char* block = kept_.back();
      kept_.pop_back();
      return block;
    }
  }
  return source_->allocate(bytes);
}

void RecycledBlocks::release(char* block, size_t bytes) noexcept {
  if (bytes == block_size_) {
    std::lock_guard<std::mutex> lock(mu_);
    if (kept_.size() < keep_blocks_) {
      kept_.push_back(block);  // no allocation: reserved for keep_blocks_ at construction
      return;
    }
  }
  source_->release(block, bytes);
}

size_t RecycledBlocks::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kept_.size() * block_size_;
}

}  // namespace skv
