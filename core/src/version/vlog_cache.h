// VlogCache: the value log files a tree reads through, kept open, and a cache of the values read
// from them (docs/vlog.md).
//
// read() turns the pointer a table entry of kind ValuePointer holds into its value: it decodes
// the pointer, looks in the value cache (keyed by file number and entry offset, charged by the
// value's size, with a hard capacity: a BlockCache), and on a miss reads the entry through the
// file's VlogReader. Up to `max_open` readers are kept open, the least recently used one dropped
// first (it closes once the last read through it ends).
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
  // which must be stored under `user_key`. With `fill_cache`, a value read from the file is added
  // to the value cache. Corruption if the pointer does not decode ("value pointer of key <k>:
  // bad value pointer: ..."), if its file is missing ("<file>: value log file is missing (value
  // at offset <o>)") or if the entry fails its checks (VlogReader, naming the file and offset);
  // the platform's error for I/O; Closed after close(). On error *value is unspecified.
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

  // Bytes the value cache holds.
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
  BlockCache values_;
  const size_t max_open_;

  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Entry> readers_;  // guarded by mu_
  std::list<uint64_t> lru_;                      // most recently used first; guarded by mu_
};

}  // namespace skv

#endif  // SKV_VERSION_VLOG_CACHE_H_
