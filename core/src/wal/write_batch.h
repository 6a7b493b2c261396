// WriteBatch: the payload of one WAL record, holding one committed transaction's writes.
//
//   batch   := sequence:fixed64 count:fixed32 entry{count}
//   entry   := kind:u8 key_len:varint32 key timestamp:fixed64 [value_len:varint32 value]
//
// Every entry of a batch shares the batch's sequence number. The value is present only for
// ValueKind::Value. Decoding checks every length against the remaining input and rejects unknown
// kinds, empty keys and trailing bytes (Corruption).
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
  // Decodes `record`, calling `fn` for each entry in order. Views point into `record`. The whole
  // record is checked before `fn` is called, so on Corruption (message naming the byte offset
  // inside the record; the caller adds the file and record offset) `fn` was never called.
  static Status decode(std::string_view record, SequenceNumber* seq,
                       const std::function<void(const Entry&)>& fn);

 private:
  std::string rep_;  // header placeholder + entries; count patched in by encoded()
  uint32_t count_ = 0;
};

}  // namespace skv

#endif  // SKV_WAL_WRITE_BATCH_H_
