// WriteBatch: one committed transaction's writes, in the one form they take from the transaction
// to the memtable: the transaction builds it at commit, the commit pipeline gives it its sequence
// number and writes it as one WAL record, and the memtable receives it through
// insert_batch() (memtable/batch_insert.h), which recovery uses too on the records it replays.
//
//   batch   := sequence:fixed64 commit_ts:fixed64 count:fixed32 entry{count}
//   entry   := tag:u8 key_len:varint32 key [timestamp:fixed64] [value_len:varint32 value]
//   tag     := kind (bits 0-6) | kExplicitTimestamp (bit 7)
//
// Every entry of a batch shares the batch's sequence number and, unless it carries a timestamp
// of its own (set_at: bit 7 of the tag, then the timestamp follows the key), the batch's commit
// timestamp, which the commit pipeline assigns together with the sequence number. The value is
// present only for ValueKind::Value; value pointers never appear in a batch. Decoding checks every
// length against the remaining input and rejects unknown kinds, empty keys, explicit timestamps
// above kMaxTimestamp and trailing bytes (Corruption).
//
// Thread safety: a plain value; one thread at a time.

#ifndef SKV_WAL_WRITE_BATCH_H_
#define SKV_WAL_WRITE_BATCH_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "format/internal_key.h"
#include "skv/status.h"

namespace skv {

class WriteBatch {
 public:
  WriteBatch() { clear(); }
  // An empty batch with room for `entry_bytes` of entries (see entry_bound), so the puts and
  // deletes that fill it do not reallocate.
  explicit WriteBatch(size_t entry_bytes);

  void clear();
  void set_sequence(SequenceNumber seq);
  SequenceNumber sequence() const;
  // The timestamp of every entry written without one of its own.
  void set_commit_timestamp(uint64_t ts);
  uint64_t commit_timestamp() const;
  uint32_t count() const { return count_; }

  // Appends one write. `timestamp` 0 means "the commit timestamp"; any other value (at most
  // kMaxTimestamp) is the entry's own. REQUIRES: key is not empty; key and value are shorter than
  // log::kMaxRecordSize (the caller validates user input).
  void put(std::string_view key, std::string_view value, uint64_t timestamp);
  void del(std::string_view key, uint64_t timestamp);

  // The most bytes put() (with `value_size`) or del() (value_size 0) of a key of `key_size` adds.
  static size_t entry_bound(size_t key_size, size_t value_size);
  // The encoded record (with the count filled in).
  const std::string& encoded();
  size_t approximate_size() const { return rep_.size(); }

  struct Entry {
    ValueKind kind;
    std::string_view key;
    std::string_view value;
    uint64_t timestamp;
  };

  // Checks a record read from storage: Corruption (naming the byte offset inside the record; the
  // caller adds the file and record offset) unless it is a well-formed batch.
  static Status check(std::string_view record);

  // Calls fn(const Entry&) for each entry of a well-formed record in order (views into `record`)
  // and returns its sequence number. REQUIRES: check(record) passed, or the record was built by
  // a WriteBatch.
  template <typename Fn>
  static SequenceNumber for_each(std::string_view record, Fn&& fn) {
    SequenceNumber seq = 0;
    uint64_t commit_ts = 0;
    uint32_t count = 0;
    std::string_view in = entries_of(record, &seq, &commit_ts, &count);
    Entry e{};
    for (uint32_t i = 0; i < count; ++i) {
      next_entry(&in, commit_ts, &e);
      fn(static_cast<const Entry&>(e));
    }
    return seq;
  }

  // The sequence number and commit timestamp of a well-formed record (same REQUIRES as for_each).
  static SequenceNumber sequence_of(std::string_view record);
  static uint64_t commit_timestamp_of(std::string_view record);

  // check(), then for_each(): on Corruption `fn` was never called.
  static Status decode(std::string_view record, SequenceNumber* seq,
                       const std::function<void(const Entry&)>& fn);

 private:
  // The entries of a well-formed record, with its sequence number, commit timestamp and count.
  static std::string_view entries_of(std::string_view record, SequenceNumber* seq,
                                     uint64_t* commit_ts, uint32_t* count);
  // Decodes the well-formed entry at the front of *in, advancing it; an entry without a
  // timestamp of its own gets `commit_ts`.
  static void next_entry(std::string_view* in, uint64_t commit_ts, Entry* e);
  void append(ValueKind kind, std::string_view key, uint64_t timestamp);

  std::string rep_;  // header placeholder + entries; count patched in by encoded()
  uint32_t count_ = 0;
};

}  // namespace skv

#endif  // SKV_WAL_WRITE_BATCH_H_
