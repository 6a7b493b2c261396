// WriteBuffer: a transaction's uncommitted writes, with savepoints, held within a memory limit.
//
// The writes live in a BufferStore (txn/buffer_store.h), an append-only, versioned skiplist: a
// write adds a version of its key and never copies or changes what is there. So
//
//   - an iterator is a view of the store (the write count when it was made) plus a reference to
//     it: making one copies nothing, writes after it cost what they cost before it, and it never
//     sees them;
//   - a savepoint is a write count; rolling back to it marks the writes made since as undone.
//     The versions a savepoint may return to are simply kept: there is no separate undo log.
//
// A write to a key whose current version no savepoint and no iterator can see, with a value no
// longer than the one there, changes that version in place instead.
//
// Versions that neither the current state nor any savepoint needs (a key written twice between
// two savepoints, writes undone by a rollback) are reclaimable. When they make up half the store
// and no iterator holds it, the buffer is compacted: the needed versions are copied into a new
// store and the old one is freed. Compaction costs O(what is copied) and happens only after at
// least as much was written, so it adds O(1) per byte written. While an iterator holds the store
// nothing can be reclaimed: those versions stay, and count.
//
// The limit is checked against memory_usage(): every byte the store's arena holds (keys, values,
// 40 bytes of entry header and a skiplist node per version, block slack), plus the savepoint
// stack. A write, or a savepoint, that could take it past the limit is refused with
// InvalidArgument before anything is allocated, after a compaction if one could make room, and
// the buffer is unchanged and still usable. A compaction itself only runs if the copy fits in
// the limit beside the original.
//
// Thread safety: used by its transaction's thread only. Iterators it hands out may be used on
// other threads while the transaction writes (buffer_iterator.h).

#ifndef SKV_TXN_WRITE_BUFFER_H_
#define SKV_TXN_WRITE_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iterator/user_iterator.h"
#include "skv/options.h"
#include "skv/status.h"
#include "txn/buffer_store.h"
#include "wal/write_batch.h"

namespace skv {

// The version of a key the buffer holds now.
struct BufferedWrite {
  bool is_delete = false;
  std::string_view value;  // valid until the next change to the buffer
  uint64_t timestamp = 0;  // 0: stamped with the commit time
};

class WriteBuffer {
 public:
  // `limit`: the bytes the buffer may hold.
  explicit WriteBuffer(size_t limit = kMaxTransactionSize);
  WriteBuffer(const WriteBuffer&) = delete;
  WriteBuffer& operator=(const WriteBuffer&) = delete;

  // Buffers a write of `value` under `key` (or a delete of `key`). InvalidArgument, naming the
  // limit, if holding it could take the buffer past its limit; nothing changes then.
  // REQUIRES: key is 1..kMaxKeySize bytes, value at most kMaxValueSize bytes.
  Status put(std::string_view key, std::string_view value, uint64_t timestamp);
  Status del(std::string_view key, uint64_t timestamp);

  // The buffered version of `key`, or nullopt if the buffer has none.
  std::optional<BufferedWrite> find(std::string_view key) const;

  bool empty() const { return live_keys_ == 0; }
  // Keys with a buffered version (a value or a delete).
  size_t size() const { return live_keys_; }
  // Bytes held, the figure checked against the limit.
  size_t memory_usage() const;
  size_t limit() const { return limit_; }
  // How many times the buffer was compacted (for tests).
  uint64_t compactions() const { return compactions_; }

  // Marks the current state. InvalidArgument if the savepoint stack cannot grow within the limit.
  Status set_savepoint();
  // Undoes the writes made since the most recent savepoint and removes it. False if there is
  // none. Allocates nothing.
  bool rollback_to_savepoint();
  // Forgets everything. Iterators handed out keep what they see.
  void clear();

  // The buffered writes as a batch for the commit pipeline, in key order. Writes without a
  // timestamp of their own go in without one: the pipeline stamps the batch's commit timestamp.
  WriteBatch to_batch() const;

  // An iterator over [lower, upper) (empty bounds are open) of the buffer as it is now; it keeps
  // what it sees alive by itself.
  std::unique_ptr<UserIterator> new_iterator(std::string lower, std::string upper) const;

 private:
  Status write(std::string_view key, std::string_view value, bool is_delete, uint64_t timestamp);
  // OK if `growth` more bytes fit in the limit, compacting first if that makes room.
  Status reserve(size_t growth);
  uint64_t top_savepoint() const { return savepoints_.empty() ? 0 : savepoints_.back(); }
  // Whether no iterator holds the store.
  bool store_unshared() const;
  // Whether no savepoint and no iterator can see `e`, so it may be changed in place.
  bool private_to_writer(const BufferEntry* e) const;
  // Replaces the value of `e` with one that fits in its space.
  void overwrite(BufferEntry* e, std::string_view value, bool is_delete, uint64_t timestamp);
  void mark_reclaimable(const BufferEntry* e);
  // Copies the needed versions into a new store if that is worth it (`pressing`: the limit was
  // reached) and possible. True if it did.
  bool compact(bool pressing);
  // After a rollback step `step` that undid the writes after `mark`: forgets the keys left
  // without a version.
  void uncount_undone_keys(uint64_t mark, uint64_t step);

  const size_t limit_;
  std::shared_ptr<BufferStore> store_;  // null until the first write
  BufferEntry* newest_ = nullptr;       // the last write; older ones follow BufferEntry::older
  uint64_t last_seq_ = 0;               // of the last write or rollback step
  mutable uint64_t last_view_ = 0;      // last_seq_ when the last iterator was made
  std::vector<uint64_t> savepoints_;    // last_seq_ when each was set
  size_t live_keys_ = 0;
  size_t reclaimable_bytes_ = 0;
  size_t compaction_retry_at_ = 0;  // after a compaction gave up: reclaimable bytes to wait for
  uint64_t compactions_ = 0;
  mutable BufferProbe probe_;
};

}  // namespace skv

#endif  // SKV_TXN_WRITE_BUFFER_H_
