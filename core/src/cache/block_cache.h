// BlockCache: a sharded LRU cache of decoded SSTable blocks with a hard byte capacity.
//
// Entries are keyed by (file number, block offset) and charged by their decoded size (at least
// one byte). The cache is split into shards (up to 16, each at least 512 KiB, so a cache below
// 1 MiB has a single shard) that each own an equal part of the capacity and run their own LRU
// list under their own mutex; a key always maps to the same shard. Inserting evicts the shard's
// least-recently-used entries until its charge fits its part, so the total never exceeds the
// capacity; an entry larger than its shard's part is not cached. Capacity 0 caches nothing. A
// block handed out stays alive while its holder keeps the shared_ptr, even after eviction (it is
// then no longer counted).
//
// Thread safety: all methods may be called from many threads at once.

#ifndef SKV_CACHE_BLOCK_CACHE_H_
#define SKV_CACHE_BLOCK_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <memory>

namespace skv {

class BlockCache {
 public:
  explicit BlockCache(size_t capacity);
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;
  ~BlockCache();

  // Null on a miss. A hit becomes the most recently used entry of its shard.
  std::shared_ptr<const void> lookup(uint64_t file_number, uint64_t offset);
  // Inserts (or replaces) an entry as the most recently used one. An entry too large for its
  // shard is not cached (and any older entry under the same key is dropped).
  void insert(uint64_t file_number, uint64_t offset, std::shared_ptr<const void> value,
              size_t charge);
  // Drops every entry of a file (called when the file is deleted).
  void erase_file(uint64_t file_number);

  // The exact total charge of the cached entries; never above capacity().
  size_t usage() const;
  size_t capacity() const;
  size_t num_shards() const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace skv

#endif  // SKV_CACHE_BLOCK_CACHE_H_
