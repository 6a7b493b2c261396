// MemTable: the in-memory sorted buffer that receives committed writes before they are flushed to
// an L0 SSTable. An arena-backed skiplist of internal keys (format/internal_key.h).
//
// Thread safety: add() calls must be serialized by the caller (one writer at a time, the commit
// leader); get(), iterators and the size accessors may run concurrently with add() and with each
// other, without locks. A MemTable is shared through std::shared_ptr; iterators do not keep it
// alive, so whoever creates an iterator keeps a reference for as long as the iterator lives.

#ifndef SKV_MEMTABLE_MEMTABLE_H_
#define SKV_MEMTABLE_MEMTABLE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

#include "format/internal_key.h"
#include "iterator/internal_iterator.h"
#include "memtable/arena.h"

namespace skv {

class MemTable {
 public:
  // `arena_block_size`: the size of the memory blocks entries are carved from (memory usage
  // grows in steps of it), see Arena. `expected_keys`: the distinct user keys the key index
  // (memtable/key_index.h, which lets get() skip the skiplist walk) is sized for before it first
  // grows. `blocks`: where the arena's blocks come from (a tree passes its platform's).
  // REQUIRES: blocks != nullptr.
  explicit MemTable(size_t arena_block_size = Arena::kBlockSize, size_t expected_keys = 0,
                    std::shared_ptr<MemoryBlocks> blocks = heap_memory_blocks());
  MemTable(const MemTable&) = delete;
  MemTable& operator=(const MemTable&) = delete;
  ~MemTable();

  // Inserts one version. REQUIRES: no entry with the same user key and sequence exists.
  void add(SequenceNumber seq, ValueKind kind, std::string_view user_key, std::string_view value,
           uint64_t timestamp);

  struct GetResult {
    ValueKind kind;          // Value or Delete
    std::string_view value;  // valid while the memtable lives
    SequenceNumber sequence;
    uint64_t timestamp;
  };
  // Finds the newest version of `user_key` with sequence <= `snapshot`. Returns false if the
  // memtable has none.
  bool get(std::string_view user_key, SequenceNumber snapshot, GetResult* out) const;

  // False only if this memtable holds no version of `user_key` (its key index says so). A version
  // added later was committed after every snapshot taken before this call.
  bool may_contain(std::string_view user_key) const;

  // A cursor over every entry (all versions), in internal-key order. Supports both directions.
  std::unique_ptr<InternalIterator> new_iterator() const;

  // Bytes allocated by the arena, the skiplist and the key index, the figure compared with
  // memtable_size.
  size_t approximate_memory_usage() const;
  // Distinct user keys added.
  size_t distinct_keys() const;
  uint64_t num_entries() const;
  bool empty() const { return num_entries() == 0; }
  SequenceNumber largest_sequence() const;
  // The largest commit timestamp of the batches inserted (memtable/batch_insert.h), so the
  // commit clock can continue above it after a restart. Timestamps given to set_at do not count.
  void note_commit_timestamp(uint64_t ts);
  uint64_t largest_commit_timestamp() const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace skv

#endif  // SKV_MEMTABLE_MEMTABLE_H_
