// BufferStore: where a transaction's buffered writes live. Every write appends a new version of
// its key: a BufferEntry in an arena, linked into a skiplist ordered by key and then newest
// first. Nothing is ever changed in place except an entry's `died_at` (set when a savepoint
// rollback undoes it), so a reader that remembers the write count at some moment (a "view") can
// keep reading the buffer as it was at that moment while the transaction goes on writing.
//
// An entry is visible in view `v` when it was written by then (seq <= v) and not undone by then
// (died_at > v). The version of a key a view sees is its newest visible entry. Rollbacks take a
// step of the same counter as writes, so "undone before the view" is died_at <= v.
//
// Memory: the arena holds everything, and memory_usage() of the arena is the figure the
// transaction's limit is checked against. Per write that is sizeof(BufferEntry) (40 bytes) plus
// the key and the value, rounded up to 8 bytes, plus a skiplist node (8 bytes and 8 per level,
// about 19 on average).
//
// Thread safety: one writer (the transaction) and any number of readers on any threads, the
// skiplist's rules (memtable/skiplist.h). The writer may store `died_at` while readers load it;
// both values it can hold at that moment give every existing view the same answer. The fields
// marked "writer only" are never read by readers.

#ifndef SKV_TXN_BUFFER_STORE_H_
#define SKV_TXN_BUFFER_STORE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "memtable/arena.h"
#include "memtable/skiplist.h"

namespace skv {

struct BufferEntry {
  static constexpr uint64_t kAlive = std::numeric_limits<uint64_t>::max();
  // Larger than any sequence a write can get: a probe with it sorts before every entry of its key.
  static constexpr uint64_t kNewest = std::numeric_limits<uint64_t>::max();

  uint64_t seq = 0;  // 1 for the transaction's first write, then counting writes and rollbacks
  // The rollback step that undid this write, or kAlive. Set by the writer through the const
  // pointers the skiplist holds.
  mutable std::atomic<uint64_t> died_at{kAlive};
  uint64_t timestamp = 0;  // 0: stamped with the commit time; in a probe, its key's length
  union {
    BufferEntry* older = nullptr;  // writer only: the entry written just before this one
    const char* probe_key;         // in a probe: its key's bytes
  };
  uint32_t value_size = 0;
  uint16_t key_size = 0;  // at least 1; 0 marks a search probe (BufferProbe)
  bool is_delete = false;
  // Writer only: neither the transaction's current state nor any of its savepoints needs this
  // entry any more, so a compaction may leave it out.
  mutable bool reclaimable = false;

  // The key and value bytes follow the struct in the same allocation.
  std::string_view key() const { return {reinterpret_cast<const char*>(this + 1), key_size}; }
  std::string_view value() const {
    return {reinterpret_cast<const char*>(this + 1) + key_size, value_size};
  }
  // The key, for an entry or a probe (only the skiplist's comparisons meet probes).
  std::string_view search_key() const {
    if (key_size != 0) return key();
    return {probe_key, static_cast<size_t>(timestamp)};
  }
  bool alive() const { return died_at.load(std::memory_order_relaxed) == kAlive; }
  bool visible_in(uint64_t view) const {
    return seq <= view && died_at.load(std::memory_order_relaxed) > view;
  }
  // Bytes of the allocation holding this entry.
  static size_t allocation_size(size_t key_size, size_t value_size) {
    return sizeof(BufferEntry) + key_size + value_size;
  }
};
static_assert(sizeof(BufferEntry) == 40);

// Key ascending (bytewise), then seq descending: the newest version of a key comes first.
struct BufferEntryOrder {
  int operator()(const BufferEntry* a, const BufferEntry* b) const {
    const int c = a->search_key().compare(b->search_key());
    if (c != 0) return c;
    if (a->seq == b->seq) return 0;
    return a->seq > b->seq ? -1 : 1;
  }
};

struct BufferStore {
  using List = SkipList<const BufferEntry*, BufferEntryOrder>;

  // Arena blocks: large enough that the per-block bookkeeping stays below 1%. The first one is
  // smaller, so that a transaction of a few writes costs little (and its block comes from the
  // allocator's small-size caches).
  static constexpr size_t kBlockSize = 4096;
  static constexpr size_t kFirstBlockSize = 1024;
  // Bytes inside the store itself that the arena fills before its first block: the skiplist's
  // head and a write or two, so a transaction of one small write allocates no block.
  static constexpr size_t kInlineBytes = 512;

  BufferStore()
      : arena(kBlockSize, kFirstBlockSize, inline_bytes, kInlineBytes),
        list(BufferEntryOrder(), &arena) {}
  BufferStore(const BufferStore&) = delete;
  BufferStore& operator=(const BufferStore&) = delete;

  // Bytes held: the arena's blocks and this object.
  size_t memory_usage() const { return arena.memory_usage() + sizeof(BufferStore); }

  // Copies a new entry into the arena and links it in. REQUIRES: key is 1..UINT16_MAX bytes,
  // value.size() <= UINT32_MAX, no entry with the same key and seq.
  BufferEntry* add(uint64_t seq, std::string_view key, std::string_view value, bool is_delete,
                   uint64_t timestamp);

  alignas(Arena::kAlignment) char inline_bytes[kInlineBytes];  // outlives the arena
  Arena arena;
  List list;
};

// A search key for the store's skiplist: an entry header that points at `key` (which must stay
// valid while the probe is used) instead of holding it. The entry returned is valid until the
// next make().
class BufferProbe {
 public:
  const BufferEntry* make(std::string_view key, uint64_t seq) {
    probe_.seq = seq;
    probe_.key_size = 0;
    probe_.probe_key = key.data();
    probe_.timestamp = key.size();
    return &probe_;
  }

 private:
  BufferEntry probe_;
};

// The newest entry of `key` visible in `view`, or null. `it` is left on that entry.
const BufferEntry* find_visible(BufferStore::List::Iterator* it, BufferProbe* probe,
                                std::string_view key, uint64_t view);

}  // namespace skv

#endif  // SKV_TXN_BUFFER_STORE_H_
