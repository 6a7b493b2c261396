// CountingBlocks: a MemoryBlocks over the heap that records every block it hands out, checks
// that each is released once with its size, and reports a chosen preferred block size.
//
// Thread safety: all calls take one mutex (a tree allocates from its commit thread and releases
// from whichever thread drops the last reference to a memtable).

#ifndef SKV_TESTS_SUPPORT_COUNTING_BLOCKS_H_
#define SKV_TESTS_SUPPORT_COUNTING_BLOCKS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <new>
#include <set>

#include "skv/platform.h"

namespace skv::testing {

class CountingBlocks final : public MemoryBlocks {
 public:
  // `max_live`: allocate() throws std::bad_alloc while that many blocks are out.
  explicit CountingBlocks(size_t preferred = 0, size_t max_live = SIZE_MAX)
      : preferred_(preferred), max_live_(max_live) {}

  size_t preferred_block_size() const override { return preferred_; }
  char* allocate(size_t bytes) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (live_.size() >= max_live_) throw std::bad_alloc();
    }
    char* p = heap_memory_blocks()->allocate(bytes);
    std::lock_guard<std::mutex> lock(mu_);
    live_[p] = bytes;
    sizes_.insert(bytes);
    ++allocations_;
    return p;
  }
  void release(char* block, size_t bytes) noexcept override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = live_.find(block);
      if (it == live_.end() || it->second != bytes) ++bad_releases_;
      if (it != live_.end()) live_.erase(it);
    }
    heap_memory_blocks()->release(block, bytes);
  }

  size_t live_blocks() const {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.size();
  }
  size_t live_bytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto& [p, bytes] : live_) n += bytes;
    return n;
  }
  size_t allocations() const {
    std::lock_guard<std::mutex> lock(mu_);
    return allocations_;
  }
  size_t bad_releases() const {
    std::lock_guard<std::mutex> lock(mu_);
    return bad_releases_;
  }
  // Every size allocate() was asked for so far.
  std::set<size_t> sizes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return sizes_;
  }
  // True if [p, p + n) lies inside one live block.
  bool owns(const char* p, size_t n) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [block, bytes] : live_) {
      if (p >= block && p + n <= block + bytes) return true;
    }
    return false;
  }

 private:
  const size_t preferred_;
  const size_t max_live_;
  mutable std::mutex mu_;
  std::map<char*, size_t> live_;
  std::set<size_t> sizes_;
  size_t allocations_ = 0;
  size_t bad_releases_ = 0;
};

}  // namespace skv::testing

#endif  // SKV_TESTS_SUPPORT_COUNTING_BLOCKS_H_
