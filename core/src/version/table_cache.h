// TableCache: opens SSTables and keeps a bounded number of them open.
//
// get(f) returns the open Table for a file, opening it through the storage's object store
// (table_file_name(f.number)) the first time. A table is then kept in one of two places:
//
// - pinned in the file's own FileMetaData (table_pin.h), which later reads find with one atomic
//   load and no lock. The table stays open until that metadata is destroyed, i.e. until no
//   Version names the file. Most of the budget goes to pins.
// - otherwise, once the pin budget is spent, in an LRU list of the most recently used tables; the
//   least recently used one is dropped when another comes in (it closes once the last shared_ptr
//   to it, e.g. an iterator's, goes away).
//
// So at most `max_open` tables are open through the cache at once: max_open - max_open / 8
// pinned (at least one slot stays for the LRU), the rest in the LRU. Tables dropped from the LRU
// but still read by an iterator are open beyond that until the iterator lets go.
//
// Lifetime: the cache shares ownership of the block cache (its tables read through it), and
// every Version holds the cache by shared_ptr, so an iterator (which pins its Version) keeps both
// alive for as long as it lives. The storage is only borrowed: close() ends that, after which a
// table not yet open fails with Closed instead of opening a file.
//
// Thread safety: every method may be called from many threads at once (an internal mutex guards
// the LRU; tables are opened outside it, under a shared lock that close() waits for; a pinned
// table is found without any lock).

#ifndef SKV_VERSION_TABLE_CACHE_H_
#define SKV_VERSION_TABLE_CACHE_H_

#include <atomic>
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
#include "version/version_edit.h"

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

  // A table in use. `table` stays valid while the FileMetaData it was got for lives (when the
  // table is pinned there) or else while `hold` does.
  struct Ref {
    Table* table = nullptr;
    std::shared_ptr<Table> hold;  // empty for a pinned table
    Table* operator->() const { return table; }
  };

  // The open table for `f`, pinned to `f` if the budget allows. Errors: Corruption naming the
  // file if the object is missing (a table the version set names must exist), Corruption from
  // Table::open, or the platform's I/O error. Failed opens are not cached: the next call tries
  // again.
  Result<Ref> get(const FileMetaData& f);

  // Drops the table from this cache and its blocks from the block cache. Called when the file is
  // deleted. Holders of the table keep it until they release it.
  void evict(uint64_t file_number);

  // Tables in the LRU (open and not pinned).
  size_t size() const;
  // Tables pinned to a FileMetaData that still lives (of any version).
  size_t pinned() const { return pinned_->load(std::memory_order_relaxed); }
  // The most tables pinned at once: max_open - max_open / 8, at least one slot short of max_open.
  size_t max_pinned() const { return max_pinned_; }

  // Stops using the storage: waits for opens in progress, then every miss fails with Closed.
  // Tables already open (and held by iterators) keep reading their files. Idempotent.
  void close();

  BlockCache* block_cache() const { return block_cache_.get(); }

 private:
  // The table for `file_number` from the LRU, opened on a miss.
  Result<std::shared_ptr<Table>> get_unpinned(uint64_t file_number);

  struct Entry {
    std::shared_ptr<Table> table;
    std::list<uint64_t>::iterator lru_pos;
  };

  std::shared_mutex storage_mu_;
  Storage* storage_;  // null after close(); guarded by storage_mu_
  const std::shared_ptr<BlockCache> block_cache_;
  const size_t max_lru_;     // tables the LRU keeps
  const size_t max_pinned_;  // tables pinned at once
  // Pinned tables alive; shared with each pin, which may outlive the cache.
  const std::shared_ptr<std::atomic<size_t>> pinned_;
  crypto::CipherSource* const ciphers_;  // null for a plaintext database

  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Entry> map_;  // guarded by mu_
  std::list<uint64_t> lru_;                  // most recently used first; guarded by mu_
};

}  // namespace skv

#endif  // SKV_VERSION_TABLE_CACHE_H_
