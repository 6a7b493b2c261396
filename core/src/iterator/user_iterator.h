// UserIterator: a cursor over user keys (one entry per key), the shape the transaction layer
// merges. Implemented by the snapshot iterator over the tree (DBIterator) and by the iterator
// over a transaction's own buffered writes.
//
// key(), value() views stay valid until the iterator moves. Errors make the iterator invalid
// and are reported by status(); value() may fail too (reading a value log lazily), so a caller
// checks status() after it.
//
// Thread safety: one thread at a time.

#ifndef SKV_ITERATOR_USER_ITERATOR_H_
#define SKV_ITERATOR_USER_ITERATOR_H_

#include <cstdint>
#include <string_view>

#include "skv/status.h"

namespace skv {

class UserIterator {
 public:
  UserIterator() = default;
  UserIterator(const UserIterator&) = delete;
  UserIterator& operator=(const UserIterator&) = delete;
  virtual ~UserIterator() = default;

  virtual bool valid() const = 0;
  virtual void seek_first() = 0;
  virtual void seek_last() = 0;
  // First key >= user_key.
  virtual void seek(std::string_view user_key) = 0;
  virtual void next() = 0;
  virtual void prev() = 0;
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  virtual uint64_t timestamp() const = 0;
  // True for an entry that deletes its key (only the write-buffer iterator yields these; the
  // tree iterator hides deleted keys itself).
  virtual bool is_delete() const { return false; }
  virtual Status status() const = 0;
};

}  // namespace skv

#endif  // SKV_ITERATOR_USER_ITERATOR_H_
