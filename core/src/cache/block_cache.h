// BlockCache: a sharded LRU cache of decoded SSTable blocks with a hard byte capacity.
//
// Entries are keyed by (file number, block offset) and charged by their decoded size. Inserting
// evicts least-recently-used entries until the total charge fits the capacity; an entry larger
// than the whole capacity is not cached. A block handed out stays alive while its holder keeps
// the shared_ptr, even after eviction (it is then no longer counted).
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

  // Null on a miss.
  std::shared_ptr<const void> lookup(uint64_t file_number, uint64_t offset);
  // Inserts (or replaces) an entry.
  void insert(uint64_t file_number, uint64_t offset, std::shared_ptr<const void> value,
              size_t charge);
  // Drops every entry of a file (called when the file is deleted).
  void erase_file(uint64_t file_number);

  size_t usage() const;
  size_t capacity() const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace skv

#endif  // SKV_CACHE_BLOCK_CACHE_H_
