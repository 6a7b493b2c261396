// VlogCache: the value log files a tree reads through, kept open, and a cache of the values read
// from them (docs/vlog.md).
//
// read() turns the pointer a table entry of kind ValuePointer holds into its value: it decodes
// the pointer, looks in the cache (a BlockCache with a hard capacity), and on a miss reads through
// the file's VlogReader. The cache holds two kinds of things:
//   - chunks: the kReadChunk aligned bytes of a value log around an entry that lies inside one
//     chunk. A miss on such an entry reads its whole chunk and caches it, so the entries written
//     next to it (a flush writes a memtable's values in key order) are read from memory: a range
//     of pairs, or a batch of reads of rows written together, reads each chunk once, as table
//     reads read each block once. Used when the capacity holds at least kMinChunks chunks.
//   - values: an entry that crosses a chunk boundary, or any entry when chunks are not used, is
//     read alone and its value cached (keyed by file number and entry offset, charged by size).
// Every read from a cached chunk checks the entry's checksum and key again. Up to `max_open`
// readers are kept open, the least recently used one dropped first (it closes once the last read
// through it ends).
//
// Lifetime: the cache borrows the tree's storage until close(); after it, a read that needs to
// open a file fails with Closed, while readers already open keep reading their files. Iterators
// hold the cache by shared_ptr (through resolver()), so an iterator that outlives the tree never
// reads freed memory (tree.h, "Lifetimes").
//
// Thread safety: every method may be called from many threads at once (an internal mutex guards
// the readers; files are opened outside it, under a shared lock that close() waits for).

#ifndef SKV_VERSION_VLOG_CACHE_H_
#define SKV_VERSION_VLOG_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "cache/block_cache.h"
#include "iterator/db_iterator.h"
#include "skv/platform.h"
#include "skv/status.h"
#include "vlog/vlog_reader.h"

namespace skv {

class VlogCache : public std::enable_shared_from_this<VlogCache> {
 public:
  // The bytes of a chunk, and the fewest chunks a capacity must hold for chunks to be used.
  static constexpr size_t kReadChunk = 16 * 1024;
  static constexpr size_t kMinChunks = 64;

  // `storage` must stay valid until close() (or the cache's destruction). `value_capacity` is the
  // value cache's hard capacity in bytes (0: no cache); `max_open` >= 1 readers stay open.
  // `ciphers` opens the value logs of an encrypted database (null for a plaintext one); it must
  // outlive the cache.
  VlogCache(Storage* storage, size_t value_capacity, size_t max_open,
            crypto::CipherSource* ciphers = nullptr);
  VlogCache(const VlogCache&) = delete;
  VlogCache& operator=(const VlogCache&) = delete;
  ~VlogCache();

  // Sets *value to the value `encoded_pointer` (a ValuePointer entry's stored value) points at,
  // which must be stored under `user_key`. With `fill_cache`, what is read from the file (a chunk,
  // or the value) is added to the cache; without, only the entry is read. Corruption if the pointer
  // does not decode ("value pointer of key <k>: bad value pointer: ..."), if its file is missing
  // ("<file>: value log file is missing (value at offset <o>)") or if the entry fails its checks
  // (VlogReader, naming the file and offset); the platform's error for I/O; Closed after close().
  // On error *value is unspecified.
  Status read(std::string_view user_key, std::string_view encoded_pointer, std::string* value,
              bool fill_cache);

  // The open reader of value log `number` (opening it on a miss). Errors as read().
  Result<std::shared_ptr<const vlog::VlogReader>> reader(uint64_t number);

  // A resolver for DBIterator that reads through this cache (and keeps it alive).
  std::shared_ptr<ValueResolver> resolver(bool fill_cache);

  // Drops the reader of `number` and its values. Called when the file is deleted; reads in
  // progress keep their reader until they end.
  void evict(uint64_t number);

  // Stops using the storage: waits for opens in progress; later misses fail with Closed.
  // Idempotent.
  void close();

  // Bytes the cache holds (chunks and values).
  size_t cache_usage() const { return values_.usage(); }
  // Readers open now.
  size_t open_readers() const;

 private:
  struct Entry {
    std::shared_ptr<const vlog::VlogReader> reader;
    std::list<uint64_t>::iterator lru_pos;
  };

  std::shared_mutex storage_mu_;
  Storage* storage_;                     // null after close(); guarded by storage_mu_
  crypto::CipherSource* const ciphers_;  // null for a plaintext database
  BlockCache values_;  // chunks (offset kChunkKey | chunk index) and values (entry offset)
  const bool chunks_;  // whether misses read whole chunks
  const size_t max_open_;

  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Entry> readers_;  // guarded by mu_
  std::list<uint64_t> lru_;                      // most recently used first; guarded by mu_
};

}  // namespace skv

#endif  // SKV_VERSION_VLOG_CACHE_H_
