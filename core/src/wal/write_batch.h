// WriteBatch: one committed transaction's writes, in the one form they take from the transaction
// to the memtable: the transaction builds it at commit, the commit pipeline gives it its sequence
// number and writes it as one WAL record, and the memtable receives it through
// insert_batch() (memtable/batch_insert.h), which recovery uses too on the records it replays.
//
//   batch   := sequence:fixed64 count:fixed32 entry{count}
//   entry   := kind:u8 key_len:varint32 key timestamp:fixed64 [value_len:varint32 value]
//
// Every entry of a batch shares the batch's sequence number. The value is present only for
// ValueKind::Value. Decoding checks every length against the remaining input and rejects kinds
// other than Delete and Value (ValuePointer included: values are inline in a batch, and only
// tables hold value-log pointers), empty keys and trailing bytes (Corruption).
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

  void clear();
  void set_sequence(SequenceNumber seq);
  SequenceNumber sequence() const;
  uint32_t count() const { return count_; }

  // Appends one write. REQUIRES: key is not empty; key and value are shorter than
  // log::kMaxRecordSize (the caller validates user input).
  void put(std::string_view key, std::string_view value, uint64_t timestamp);
  void del(std::string_view key, uint64_t timestamp);

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
    uint32_t count = 0;
    std::string_view in = entries_of(record, &seq, &count);
    Entry e{};
    for (uint32_t i = 0; i < count; ++i) {
      next_entry(&in, &e);
      fn(static_cast<const Entry&>(e));
    }
    return seq;
  }

  // The sequence number of a well-formed record (same REQUIRES as for_each).
  static SequenceNumber sequence_of(std::string_view record);

  // check(), then for_each(): on Corruption `fn` was never called.
  static Status decode(std::string_view record, SequenceNumber* seq,
                       const std::function<void(const Entry&)>& fn);

 private:
  // The entries of a well-formed record, with its sequence number and entry count.
  static std::string_view entries_of(std::string_view record, SequenceNumber* seq, uint32_t* count);
  // Decodes the well-formed entry at the front of *in, advancing it.
  static void next_entry(std::string_view* in, Entry* e);

  std::string rep_;  // header placeholder + entries; count patched in by encoded()
  uint32_t count_ = 0;
};

}  // namespace skv

#endif  // SKV_WAL_WRITE_BATCH_H_
