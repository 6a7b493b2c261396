// InternalIterator: the cursor every sorted source of internal keys implements (a memtable, an
// SSTable block, a whole table, a level, a merge of them).
//
// Positions are over internal keys in internal-key order (format/internal_key.h). key() and
// value() views stay valid until the iterator moves or is destroyed. An iterator that meets an
// error becomes invalid and reports it from status(); it never yields corrupt data as entries.
//
// Thread safety: one iterator is used by one thread at a time.

#ifndef SKV_ITERATOR_INTERNAL_ITERATOR_H_
#define SKV_ITERATOR_INTERNAL_ITERATOR_H_

#include <memory>
#include <string_view>

#include "skv/status.h"

namespace skv {

class InternalIterator {
 public:
  InternalIterator() = default;
  InternalIterator(const InternalIterator&) = delete;
  InternalIterator& operator=(const InternalIterator&) = delete;
  virtual ~InternalIterator() = default;

  virtual bool valid() const = 0;
  // Positions at the first entry, or invalid if empty.
  virtual void seek_first() = 0;
  // Positions at the last entry, or invalid if empty.
  virtual void seek_last() = 0;
  // Positions at the first entry with key >= target (internal-key order).
  virtual void seek(std::string_view target) = 0;
  // Positions at the last entry with key <= target. Implementations without a native form may
  // do seek(target) and step back.
  virtual void seek_for_prev(std::string_view target);
  // REQUIRES: valid().
  virtual void next() = 0;
  // REQUIRES: valid().
  virtual void prev() = 0;
  // REQUIRES: valid(). The internal key.
  virtual std::string_view key() const = 0;
  // REQUIRES: valid().
  virtual std::string_view value() const = 0;
  // OK unless an error was met.
  virtual Status status() const = 0;
};

// Positions `it` at the last entry whose user key sorts before `user_key` (every version of
// `user_key` and of larger keys lies after it), or invalid if there is none or on an error.
void seek_before_user_key(InternalIterator* it, std::string_view user_key);

// An iterator over nothing, optionally carrying an error.
std::unique_ptr<InternalIterator> new_empty_iterator(Status status = Status());

}  // namespace skv

#endif  // SKV_ITERATOR_INTERNAL_ITERATOR_H_
