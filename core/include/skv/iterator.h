// Iterator: a bidirectional cursor over the user keys of a transaction's view, restricted to the
// range it was created for ([start, end)).
//
// An iterator sees the transaction's snapshot merged with the transaction's own uncommitted
// writes as they were when the iterator was created (later writes by the transaction are not
// seen by it). Deleted keys are skipped. A new iterator is unpositioned: call seek_first(),
// seek_last() or seek() before reading.
//
// key() and value() views stay valid until the iterator moves or is destroyed. Every move
// returns valid(): false past either end, and false on an error (I/O, corruption), which
// status() then names. So check status() once the loop ends:
//
//   for (it.seek_first(); it.valid(); it.next()) { use(it.key(), it.value()); }
//   if (!it.status().ok()) { /* the scan stopped early: it.status() says why */ }
//
// Iterating to the end is not an error: valid() becomes false and status() stays OK.
//
// Lifetime: an iterator keeps what it reads alive by itself (its snapshot's memtables and tables,
// the caches they read through), so it may outlive its transaction and any Tree handle. It keeps
// working while the tree is open; once the tree is closed (Tree::close(), or its last handle
// dropped) every move leaves it invalid with status() Closed, and it reads nothing of the closed
// database. Destroying it afterwards is always safe.
//
// Thread safety: one iterator is used by one thread at a time; different iterators may be used
// from different threads at once, also while another thread closes the tree.
// Copying: movable, not copyable.

#ifndef SKV_ITERATOR_H_
#define SKV_ITERATOR_H_

#include <memory>
#include <string_view>

#include "skv/status.h"

namespace skv {

class IteratorImpl;

class Iterator {
 public:
  explicit Iterator(std::unique_ptr<IteratorImpl> impl);
  Iterator(Iterator&&) noexcept;
  Iterator& operator=(Iterator&&) noexcept;
  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;
  ~Iterator();

  bool valid() const;

  // Positions at the first key of the range. Returns valid().
  bool seek_first();
  // Positions at the last key of the range. Returns valid().
  bool seek_last();
  // Positions at the first key >= `key` inside the range. Returns valid().
  bool seek(std::string_view key);
  // Moves to the next key; invalid past the end. Returns valid(). On an invalid iterator it
  // does nothing and returns false (status() is unchanged).
  bool next();
  // Moves to the previous key; invalid before the start. Returns valid(). On an invalid
  // iterator it does nothing and returns false.
  bool prev();

  // REQUIRES: valid(). The user key.
  std::string_view key() const;
  // REQUIRES: valid(). The value. A keys-only iterator (Transaction::keys) returns
  // InvalidArgument: it never reads values. A value kept in a value log (docs/vlog.md) is read
  // here, on the first call for the entry, so moving over entries never reads one; if that read
  // fails, the error (Corruption, I/O) is returned and the iterator stops: valid() turns false and
  // status() holds it.
  Result<std::string_view> value() const;
  // The timestamp (nanoseconds) of the current entry: its commit's, or the one given to set_at;
  // 0 for the transaction's own uncommitted writes. REQUIRES: valid().
  uint64_t timestamp() const;
  // True when the current entry is a tombstone: only a history iterator asked for tombstones
  // (Transaction::history_range) yields them. REQUIRES: valid().
  bool is_tombstone() const;

  Status status() const;

 private:
  std::unique_ptr<IteratorImpl> impl_;
};

}  // namespace skv

#endif  // SKV_ITERATOR_H_
