// skv-test-modules: util sstable
// skv-test-wasm: off
// Not in wasm32: the pool serves native platforms only (the browser's memory blocks are the
// heap's, so it has none), and these cases use threads and a source that throws bad_alloc, which
// the wasm build neither runs nor catches in core code.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "cache/block_buffer_pool.h"
#include "support/counting_blocks.h"

using namespace skv;

namespace {

using testing::CountingBlocks;

constexpr size_t kChunk = 256 * 1024;

}  // namespace

TEST_CASE("block buffer pool: made only for a source with large blocks and room for two",
          "[block_buffer_pool]") {
  CHECK(BlockBufferPool::create(heap_memory_blocks(), 64 << 20) == nullptr);
  CHECK(BlockBufferPool::create(nullptr, 64 << 20) == nullptr);
  auto blocks = std::make_shared<CountingBlocks>(kChunk);
  CHECK(BlockBufferPool::create(blocks, 2 * kChunk - 1) == nullptr);
  // A preferred size below the largest class could not hold a buffer of every class.
  CHECK(BlockBufferPool::create(std::make_shared<CountingBlocks>(32 * 1024), 64 << 20) == nullptr);
  CHECK(BlockBufferPool::create(std::make_shared<CountingBlocks>(0), 64 << 20) == nullptr);
  CHECK(BlockBufferPool::create(blocks, 2 * kChunk) != nullptr);
  CHECK(blocks->allocations() == 0);  // nothing taken until a buffer is asked for

  BlockBuffer heap = BlockBuffer::allocate(5000, nullptr);
  CHECK_FALSE(heap.pooled());
  CHECK(heap.capacity() == 5000);
  BlockBuffer empty = BlockBuffer::allocate(0, nullptr);
  CHECK(empty.get() != nullptr);
  CHECK(empty.capacity() == 1);
}

TEST_CASE("block buffer pool: size classes, reuse of freed buffers, heap beyond the classes",
          "[block_buffer_pool]") {
  auto blocks = std::make_shared<CountingBlocks>(kChunk);
  auto pool = BlockBufferPool::create(blocks, 8 * kChunk);
  REQUIRE(pool != nullptr);

  BlockBuffer a = pool->allocate(16 * 1024 + 5);
  REQUIRE(a.pooled());
  CHECK(a.capacity() == 17 * 1024);
  std::memset(a.get(), 0xab, a.capacity());   // the whole capacity is the caller's
  BlockBuffer b = pool->allocate(17 * 1024);  // the same class, another buffer
  CHECK(b.pooled());
  CHECK(b.capacity() == 17 * 1024);
  CHECK(b.get() != a.get());
  CHECK(blocks->allocations() == 1);

  char* const freed = a.get();
  a.reset();
  CHECK(a.get() == nullptr);
  BlockBuffer c = pool->allocate(16 * 1024 + 1);  // reuses the freed buffer of its class
  CHECK(c.get() == freed);
  BlockBuffer d = pool->allocate(1);  // another class: its own chunk
  CHECK(d.capacity() == 1024);
  CHECK(blocks->allocations() == 2);

  BlockBuffer big = pool->allocate(64 * 1024 + 1);  // above the largest class
  CHECK_FALSE(big.pooled());
  CHECK(big.capacity() == 64 * 1024 + 1);
  CHECK(pool->heap_fallback_bytes() == 64 * 1024 + 1);
  BlockBuffer largest = pool->allocate(64 * 1024);
  CHECK(largest.pooled());

  // Moving hands the buffer over without freeing it.
  BlockBuffer moved = std::move(c);
  CHECK(c.get() == nullptr);
  CHECK(moved.get() == freed);
  CHECK(pool->chunk_bytes() == 3 * kChunk);
}

TEST_CASE("block buffer pool: never takes more than max_bytes, then serves from the heap",
          "[block_buffer_pool]") {
  auto blocks = std::make_shared<CountingBlocks>(kChunk);
  auto pool = BlockBufferPool::create(blocks, 2 * kChunk);
  REQUIRE(pool != nullptr);
  std::vector<BlockBuffer> held;
  size_t pooled = 0;
  for (int i = 0; i < 40; ++i) {  // 40 x 16 KiB: more than two 256 KiB chunks hold
    held.push_back(pool->allocate(16 * 1024));
    if (held.back().pooled()) ++pooled;
  }
  CHECK(pooled == 2 * kChunk / (16 * 1024));
  CHECK(pool->chunk_bytes() == 2 * kChunk);
  CHECK(blocks->allocations() == 2);
  CHECK(pool->heap_fallback_bytes() == (40 - pooled) * 16 * 1024);
  // Freed pooled buffers are served again before the heap.
  char* const first = held[0].get();
  held[0].reset();
  BlockBuffer again = pool->allocate(15 * 1024 + 1);
  CHECK(again.pooled());
  CHECK(again.get() == first);
}

TEST_CASE("block buffer pool: a source that fails leaves the heap to serve",
          "[block_buffer_pool]") {
  auto blocks = std::make_shared<CountingBlocks>(kChunk, /*max_live=*/1);
  auto pool = BlockBufferPool::create(blocks, 16 * kChunk);
  BlockBuffer a = pool->allocate(2000);
  CHECK(a.pooled());
  BlockBuffer b = pool->allocate(3000);  // its class needs a second chunk; the source refuses
  CHECK_FALSE(b.pooled());
  CHECK(b.capacity() == 3000);
  CHECK(pool->chunk_bytes() == kChunk);
}

TEST_CASE("block buffer pool: chunks go back once the handle and every buffer are gone",
          "[block_buffer_pool]") {
  auto blocks = std::make_shared<CountingBlocks>(kChunk);
  auto pool = BlockBufferPool::create(blocks, 8 * kChunk);
  BlockBuffer a = pool->allocate(9000);
  BlockBuffer b = pool->allocate(40000);
  std::memset(b.get(), 1, b.capacity());
  pool.reset();  // the cache that made it is gone; its blocks are still held
  CHECK(blocks->live_blocks() == 2);
  std::memset(a.get(), 2, a.capacity());  // still usable (ASan would see a use after free)
  a.reset();
  CHECK(blocks->live_blocks() == 2);
  b.reset();
  CHECK(blocks->live_blocks() == 0);
  CHECK(blocks->bad_releases() == 0);

  // A pool that never handed out a buffer gives its chunks back with its handle.
  auto idle = BlockBufferPool::create(blocks, 8 * kChunk);
  { BlockBuffer c = idle->allocate(100); }
  idle.reset();
  CHECK(blocks->live_blocks() == 0);
}

TEST_CASE("block buffer pool: threads allocating and freeing never share a live buffer",
          "[block_buffer_pool]") {
  auto blocks = std::make_shared<CountingBlocks>(kChunk);
  auto pool = BlockBufferPool::create(blocks, 6 * kChunk);
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t + 1));
      struct Live {
        BlockBuffer buf;
        size_t size;
        char mark;
      };
      std::vector<Live> live;
      for (int i = 0; i < 20000; ++i) {
        if (live.size() < 24 && rng() % 3 != 0) {
          const size_t n = 1 + rng() % (70 * 1024);  // some above the largest class
          BlockBuffer buf = pool->allocate(n);
          const char mark = static_cast<char>(t * 50 + i % 50);
          std::memset(buf.get(), mark, n);
          live.push_back(Live{std::move(buf), n, mark});
        } else if (!live.empty()) {
          const size_t k = rng() % live.size();
          const Live& l = live[k];
          // Every byte written still holds this buffer's mark: no other buffer overlapped it.
          for (size_t j = 0; j < l.size; j += 61) {
            if (l.buf.get()[j] != l.mark) ++failures[static_cast<size_t>(t)];
          }
          if (l.buf.get()[l.size - 1] != l.mark) ++failures[static_cast<size_t>(t)];
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int f : failures) CHECK(f == 0);
  CHECK(pool->chunk_bytes() <= 6 * kChunk);
  pool.reset();
  CHECK(blocks->live_blocks() == 0);
}
