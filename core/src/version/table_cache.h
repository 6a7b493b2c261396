// TableCache: keeps a bounded number of SSTables open, keyed by file number.
//
// get() returns the open Table for a file number, opening it through the storage's object store
// (table_file_name(number)) on a miss. At most `max_open` tables are kept; the least recently used
// one is dropped from the cache when a new one comes in (it closes once the last shared_ptr to it,
// e.g. an iterator, goes away).
//
// Lifetime: the cache shares ownership of the block cache (its tables read through it), and
// every Version holds the cache by shared_ptr, so an iterator (which pins its Version) keeps both
// alive for as long as it lives. The storage is only borrowed: close() ends that, after which a
// miss fails with Closed instead of opening a file.
//
// Thread safety: every method may be called from many threads at once (an internal mutex guards
// the map; tables are opened outside it, under a shared lock that close() waits for).

#ifndef SKV_VERSION_TABLE_CACHE_H_
#define SKV_VERSION_TABLE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "skv/platform.h"
#include "skv/status.h"
#include "sstable/table.h"

namespace skv {

class BlockCache;
namespace crypto {
class CipherSource;
}  // namespace crypto

class TableCache {
 public:
  // `storage` must stay valid until close() (or the cache's destruction); `block_cache` may be
  // null. `max_open` >= 1. `ciphers` opens the tables of an encrypted database (Table::open); null
  // for a plaintext one. It must outlive the cache.
  TableCache(Storage* storage, std::shared_ptr<BlockCache> block_cache, size_t max_open,
             crypto::CipherSource* ciphers = nullptr);
  TableCache(const TableCache&) = delete;
  TableCache& operator=(const TableCache&) = delete;
  ~TableCache();

  // The open table for `file_number`. Errors: Corruption naming the file if the object is missing
  // (a table the version set names must exist), Corruption from Table::open, or the platform's
  // I/O error. Failed opens are not cached: the next call tries again.
  Result<std::shared_ptr<Table>> get(uint64_t file_number);

  // Drops the table from this cache and its blocks from the block cache. Called when the file is
  // deleted. Holders of the table keep it until they release it.
  void evict(uint64_t file_number);

  // Number of tables currently cached.
  size_t size() const;

  // Stops using the storage: waits for opens in progress, then every miss fails with Closed.
  // Tables already open (and held by iterators) keep reading their files. Idempotent.
  void close();

  BlockCache* block_cache() const { return block_cache_.get(); }

 private:
  struct Entry {
    std::shared_ptr<Table> table;
    std::list<uint64_t>::iterator lru_pos;
  };

  std::shared_mutex storage_mu_;
  Storage* storage_;  // null after close(); guarded by storage_mu_
  const std::shared_ptr<BlockCache> block_cache_;
  const size_t max_open_;
  crypto::CipherSource* const ciphers_;  // null for a plaintext database

  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Entry> map_;  // guarded by mu_
  std::list<uint64_t> lru_;                  // most recently used first; guarded by mu_
};

}  // namespace skv

#endif  // SKV_VERSION_TABLE_CACHE_H_
