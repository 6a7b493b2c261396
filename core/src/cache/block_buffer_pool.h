// BlockBufferPool: the memory a block cache's data blocks are read and decoded into.
//
// A cache miss reads a block into fresh memory. From the general heap that memory is 4 KiB
// pages that come and go with the blocks (a page fault for each, and a TLB miss for each page
// the copy from the page cache writes), which can cost more than the read itself. The pool
// instead carves buffers from the platform's large blocks (MemoryBlocks; natively 2 MiB
// mappings the kernel may back with huge pages) and keeps the buffers of dropped blocks for the
// next miss of the same size.
//
// Buffers come in size classes of 1 KiB, up to 64 KiB; each class carves its own chunks. A
// request above the largest class, or one that would take the chunks past `max_bytes`, gets
// plain heap memory instead, so the pool never holds more than `max_bytes` of chunks. Chunks are
// given back to the source when the pool is gone and its last buffer freed: buffers may outlive
// the handle that made the pool (a block an iterator still holds after its tree closed).
//
// Thread safety: allocate() and freeing buffers may run on many threads at once.
#ifndef SKV_CACHE_BLOCK_BUFFER_POOL_H_
#define SKV_CACHE_BLOCK_BUFFER_POOL_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "skv/platform.h"

namespace skv {

class BlockBufferPool;

// A block's bytes: from a pool or from the heap. Move-only; frees itself.
class BlockBuffer {
 public:
  BlockBuffer() = default;
  BlockBuffer(BlockBuffer&& other) noexcept { *this = std::move(other); }
  BlockBuffer& operator=(BlockBuffer&& other) noexcept;
  BlockBuffer(const BlockBuffer&) = delete;
  BlockBuffer& operator=(const BlockBuffer&) = delete;
  ~BlockBuffer() { reset(); }

  // `bytes` (at least one) from the heap, or from `pool` when it is not null.
  static BlockBuffer allocate(size_t bytes, BlockBufferPool* pool);

  char* get() const { return data_; }
  // The bytes this buffer holds, at least the size asked for.
  size_t capacity() const { return capacity_; }
  // True if it came from a pool's chunk (false: the heap).
  bool pooled() const { return size_class_ != 0; }
  void reset() noexcept;

 private:
  friend class BlockBufferPool;
  char* data_ = nullptr;
  size_t capacity_ = 0;
  BlockBufferPool* pool_ = nullptr;  // set only while size_class_ != 0
  uint32_t size_class_ = 0;          // 0: heap
};

class BlockBufferPool {
 public:
  static constexpr size_t kClassBytes = 1024;
  static constexpr size_t kClasses = 64;  // classes 1..64: up to 64 KiB

  // Ends the handle's share of the pool (see the top of this file).
  struct Retire {
    void operator()(BlockBufferPool* pool) const noexcept;
  };
  using Handle = std::unique_ptr<BlockBufferPool, Retire>;

  // A pool carving chunks of `source->preferred_block_size()` bytes, at most `max_bytes` of
  // them. Null when the source has no preferred size or `max_bytes` holds less than two chunks:
  // then the heap serves as well.
  static Handle create(std::shared_ptr<MemoryBlocks> source, size_t max_bytes);

  BlockBuffer allocate(size_t bytes);

  // Bytes of chunks taken from the source so far (never above max_bytes).
  size_t chunk_bytes() const;
  // Bytes asked of the heap because a class's chunks would have passed max_bytes or a request
  // was above the largest class.
  uint64_t heap_fallback_bytes() const;

 private:
  friend class BlockBuffer;
  BlockBufferPool(std::shared_ptr<MemoryBlocks> source, size_t chunk, size_t max_bytes);
  ~BlockBufferPool();
  void free(char* data, uint32_t size_class) noexcept;
  void unref() noexcept;
  // A new chunk, or null when it would pass max_bytes (or the source fails).
  char* take_chunk();

  struct SizeClass {
    std::mutex mu;
    std::vector<char*> free;  // buffers of dropped blocks, reused newest first
    char* next = nullptr;     // uncarved rest of this class's newest chunk
    size_t left = 0;
    size_t carved = 0;  // buffers carved for this class so far
  };

  const std::shared_ptr<MemoryBlocks> source_;
  const size_t chunk_;
  const size_t max_bytes_;
  std::array<SizeClass, kClasses + 1> classes_;  // [0] unused
  mutable std::mutex chunks_mu_;
  std::vector<char*> chunks_;
  std::atomic<uint64_t> heap_fallback_bytes_{0};
  // One for the handle and one for each buffer out.
  std::atomic<uint64_t> refs_{1};
};

}  // namespace skv

#endif  // SKV_CACHE_BLOCK_BUFFER_POOL_H_
