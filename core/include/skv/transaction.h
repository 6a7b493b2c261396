// Transaction: a unit of reads and writes against one consistent snapshot of a tree.
//
// A transaction reads the snapshot taken by Tree::begin() plus its own writes (read your own
// writes). Writes are buffered in the transaction and reach the tree only when commit() succeeds.
// Isolation is snapshot isolation with optimistic concurrency: at commit, if another transaction
// committed a write to any key this one writes after this one's snapshot was taken, this commit
// fails with Code::Conflict (first committer wins) and changes nothing; retry with a new
// transaction. Read-only transactions never conflict.
//
// After commit() or rollback() the transaction is finished and every further call returns
// Code::Closed. Destroying an unfinished transaction rolls it back.
//
// Keys must be 1..kMaxKeySize bytes, values at most kMaxValueSize bytes (options.h); violations
// return Code::InvalidArgument and change nothing. The buffered writes, the versions savepoints
// may return to and the versions open iterators show share one memory limit,
// kMaxTransactionSize (options.h): a write or savepoint that could take the transaction past it
// returns Code::InvalidArgument naming the limit, changes nothing, and the transaction stays
// usable. Ranges are [start, end): an empty `start` means "from the first key", an empty `end`
// means "to the last key".
//
// Costs: a write is O(log n) in the writes buffered, also after iterators were created (they
// copy nothing); creating an iterator copies nothing of the buffer; rolling back to a savepoint
// is O(writes undone).
//
// Thread safety: one transaction is used by one thread at a time; different transactions may be
// used from different threads at once. Copying: movable, not copyable.

#ifndef SKV_TRANSACTION_H_
#define SKV_TRANSACTION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skv/future.h"
#include "skv/iterator.h"
#include "skv/options.h"
#include "skv/status.h"

namespace skv {

class TransactionImpl;

// One version of a key, as history() returns it.
struct KeyVersion {
  std::string value;       // empty for a tombstone
  uint64_t timestamp = 0;  // nanoseconds since the Unix epoch
  bool tombstone = false;  // the key was deleted at this time
};

struct HistoryOptions {
  bool include_tombstones = false;  // also return the versions that delete the key
  size_t limit = 0;                 // at most this many versions, newest first (0: all)
};

class Transaction {
 public:
  explicit Transaction(std::unique_ptr<TransactionImpl> impl);
  Transaction(Transaction&&) noexcept;
  Transaction& operator=(Transaction&&) noexcept;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  Mode mode() const;

  // Buffers a write of `value` under `key`. ReadOnly on a read-only transaction;
  // InvalidArgument past the size limits (above).
  Status set(std::string_view key, std::string_view value);
  // Buffers a delete of `key` (deleting a missing key is not an error). Same errors as set().
  Status del(std::string_view key);

  // The value of `key` in this transaction's view, or nullopt if it has none. The returned
  // string is a copy owned by the caller.
  Result<std::optional<std::string>> get(std::string_view key) const;

  // get() whose table and value log reads run as a task on the platform's executor: natively a
  // thread of the pool, so the caller is free meanwhile; where the executor is not concurrent
  // (the browser's, a QueueExecutor) the task runs when the embedder next runs queued work (the
  // JS wrapper does so on the next turn of the event loop). The answer is get()'s: the same
  // value, nullopt, or error. Argument errors, this transaction's own writes, and a closed tree
  // answer at once (a ready future). The read keeps this transaction's snapshot, so the
  // transaction may end, or the Transaction object go, before it runs.
  Future<Result<std::optional<std::string>>> get_async(std::string_view key) const;

  // A key-value iterator over [start, end). A range whose end sorts before its start (both
  // given) is refused with InvalidArgument rather than read as empty, since it is almost always
  // a mistake; start == end is an empty range.
  Result<Iterator> range(std::string_view start, std::string_view end) const;
  // A keys-only iterator over [start, end): it never reads or copies values. Same range rules.
  Result<Iterator> keys(std::string_view start, std::string_view end) const;
  // The number of live keys in [start, end) (reads no values). Same range rules as range().
  Result<uint64_t> count(std::string_view start, std::string_view end) const;

  // --- Versioned queries (docs/versioning.md). Each needs a tree opened with
  // TreeBuilder::with_versioning(true, ...): on any other tree they return NotSupported. A
  // timestamp is in nanoseconds since the Unix epoch and at most kMaxTimestamp (2^63 - 1);
  // larger ones are InvalidArgument.
  //
  // Reads by time see the committed versions of this transaction's snapshot: a version committed
  // after the snapshot is never seen, whatever its timestamp, and this transaction's own
  // uncommitted writes are not part of them (they get their timestamps when they commit). The
  // version "as of T" of a key is its version with the newest timestamp at or before T (of two
  // with the same timestamp, the one committed later); a tombstone there means the key is absent.

  // Buffers a write of `value` under `key` stamped with `timestamp` (1..kMaxTimestamp) instead
  // of the commit's time; a time in the past is allowed. A transaction holds one write per key:
  // a later set, set_at or del of the same key in it replaces this one, timestamp included.
  Status set_at(std::string_view key, std::string_view value, uint64_t timestamp);
  // Buffers a delete of `key` stamped with `timestamp` (1..kMaxTimestamp): a tombstone version,
  // so the key is absent as of `timestamp` until a newer version. Same rules as set_at.
  Status del_at(std::string_view key, uint64_t timestamp);
  // The value of `key` as of `timestamp`, or nullopt if it had none then.
  Result<std::optional<std::string>> get_at(std::string_view key, uint64_t timestamp) const;
  // Every version of `key`, newest timestamp first (then the later commit first).
  Result<std::vector<KeyVersion>> history(std::string_view key,
                                          const HistoryOptions& options = {}) const;
  // Every version of every key in [start, end): one iterator entry per version, keys in order,
  // each key's versions newest first; timestamp() and is_tombstone() describe the version. Same
  // range rules as range(); `options.limit` is ignored.
  Result<Iterator> history_range(std::string_view start, std::string_view end,
                                 const HistoryOptions& options = {}) const;
  // The tree as of `timestamp`, over [start, end): each key with its version as of then,
  // skipping keys absent then. Both directions. Same range rules as range().
  Result<Iterator> range_at(std::string_view start, std::string_view end, uint64_t timestamp) const;
  // As range_at(), keys only.
  Result<Iterator> keys_at(std::string_view start, std::string_view end, uint64_t timestamp) const;

  // How commit() waits for the WAL. Defaults to the tree's default durability.
  void set_durability(Durability durability);

  // Commits the buffered writes. The future completes with OK once they are visible to new
  // transactions (and synced, for Durability::Immediate), or with the error that stopped them
  // (Conflict, IO, Closed, ...), in which case nothing is visible. One case is indeterminate: an
  // IO or Quota error from the write-ahead log ("write-ahead log: ...") means the WAL write or
  // sync failed after the commit's bytes may have reached the file, so after a crash or a reopen
  // the commit may or may not be there. The tree then refuses every later write with that error
  // (docs/commit.md). A transaction with no writes completes at once with OK. The transaction is
  // finished either way.
  CommitFuture commit();

  // Discards the buffered writes and finishes the transaction.
  Status rollback();

  // Marks the current state of the buffered writes; savepoints nest. InvalidArgument if the
  // transaction is at its memory limit. The versions a savepoint can return to stay held (and
  // count) until it is rolled back or the transaction ends.
  Status set_savepoint();
  // Undoes the buffered writes made since the most recent savepoint and removes it.
  // InvalidArgument if there is none.
  Status rollback_to_savepoint();

 private:
  std::unique_ptr<TransactionImpl> impl_;
};

}  // namespace skv

#endif  // SKV_TRANSACTION_H_
