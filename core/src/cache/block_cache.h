// BlockCache: a sharded LRU cache of decoded SSTable blocks with a hard byte capacity.
//
// Entries are keyed by (file number, block offset) and charged by their decoded size (at least
// one byte). The cache is split into shards (up to 16, each at least 512 KiB, so a cache below
// 1 MiB has a single shard) that each own an equal part of the capacity under their own mutex; a
// key always maps to the same shard. An entry larger than its shard's part is not cached.
// Capacity 0 caches nothing. A block handed out stays alive while its holder keeps the
// shared_ptr, even after eviction (it is then no longer counted).
//
// Two priorities share each shard's capacity:
//   - High: blocks that point reads and ordinary scans keep. An LRU list: a hit moves the entry
//     to the front.
//   - Low (the scan pool): blocks that a sweep over more data than the cache reads once (a
//     count). They go to a list of their own, newest first, that holds at most a quarter of the
//     shard: below that, a Low insert takes room from the least recently used High entries; at
//     it, from the pool's own oldest entries. A High insert takes room from the pool first, and
//     a Low lookup that hits does not move the entry. So a sweep never takes more than a quarter
//     of the cache from the blocks point reads keep, and sweeps that run at the same time still
//     find the blocks the first of them read. A High lookup that hits a Low entry promotes it.
// The total charge never exceeds the capacity.
//
// Thread safety: all methods may be called from many threads at once.
#ifndef SKV_CACHE_BLOCK_CACHE_H_
#define SKV_CACHE_BLOCK_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "cache/block_buffer_pool.h"

namespace skv {

class BlockCache {
 public:
  // `buffers`, when not null, is the memory the blocks read through this cache are read into
  // (block_buffer_pool.h); its buffers may outlive the cache.
  explicit BlockCache(size_t capacity, BlockBufferPool::Handle buffers = nullptr);
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;
  ~BlockCache();

  enum class Priority { High, Low };

  // Null on a miss. A High lookup makes a hit the most recently used High entry of its shard
  // (promoting a Low one); a Low lookup leaves the entry where it is.
  std::shared_ptr<const void> lookup(uint64_t file_number, uint64_t offset,
                                     Priority priority = Priority::High);
  // Inserts (or replaces) an entry: High as the most recently used one, Low as the newest entry
  // of the scan pool. An entry too large for its shard (or, when Low, for the pool) is not
  // cached, and any older entry under the same key is dropped.
  void insert(uint64_t file_number, uint64_t offset, std::shared_ptr<const void> value,
              size_t charge, Priority priority = Priority::High);
  // Reads a block the cache may not hold: returns its block, or null when it failed.
  // `read` sets *charge and returns the block, or null when it failed (the caller keeps its
  // own record of why).
  using Reader = std::function<std::shared_ptr<const void>(size_t* charge)>;

  // lookup() with `priority`; on a miss, runs `read` and, with `keep`, inserts what it returns
  // with `priority`. A caller that misses on a block another caller is reading through this
  // call waits for that read and shares its block instead of reading it again (so sweeps that
  // run side by side decode each block once); if that read failed, it runs its own `read`.
  std::shared_ptr<const void> read_through(uint64_t file_number, uint64_t offset, Priority priority,
                                           bool keep, const Reader& read);

  // Drops every entry of a file (called when the file is deleted).
  void erase_file(uint64_t file_number);

  // The exact total charge of the cached entries; never above capacity().
  size_t usage() const;
  // The part of usage() held by Low entries; never above a quarter of capacity() (plus one
  // byte per shard for the rounding of the shards' parts).
  size_t low_usage() const;
  size_t capacity() const;
  size_t num_shards() const;
  // The pool given at construction, or null.
  BlockBufferPool* buffers() const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace skv

#endif  // SKV_CACHE_BLOCK_CACHE_H_
