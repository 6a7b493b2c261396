// TransactionHost: what a transaction needs from the tree it belongs to. The tree implements it;
// a transaction sees nothing else of the tree, so the two meet at this one narrow interface.
//
// Thread safety: every method may be called from many threads at once.

#ifndef SKV_TXN_TRANSACTION_HOST_H_
#define SKV_TXN_TRANSACTION_HOST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "format/internal_key.h"
#include "iterator/user_iterator.h"
#include "skv/future.h"
#include "skv/status.h"
#include "wal/write_batch.h"

namespace skv {

// A read by time (versioned trees): the tree as of a timestamp, or every version of each key
// (iterator/version_iterators.h).
struct TimeQuery {
  enum class Kind { AsOf, History };
  Kind kind = Kind::AsOf;
  uint64_t timestamp = 0;           // AsOf: the time the tree is read as of
  bool keys_only = false;           // AsOf: no values
  bool include_tombstones = false;  // History: yield tombstones too
};

class TransactionHost {
 public:
  virtual ~TransactionHost() = default;

  // OK while the tree is open; Closed after close().
  virtual Status check_open() const = 0;

  // Gives back the snapshot the transaction was begun with (it was registered by the tree).
  virtual void release_snapshot(SequenceNumber snapshot) = 0;

  // The newest version of `key` at `snapshot`: *found is false if there is none or it is deleted.
  virtual Status get(std::string_view key, SequenceNumber snapshot, std::string* value,
                     bool* found) = 0;

  // As get(), run as a task on the platform's executor; the future carries the value (nullopt
  // when absent or deleted) or the error. `snapshot` stays registered until the task has run, so
  // the transaction may end first. REQUIRES: `snapshot` is registered now.
  virtual Future<Result<std::optional<std::string>>> get_async(std::string key,
                                                               SequenceNumber snapshot) = 0;

  // An iterator over the tree at `snapshot`, user keys in [lower, upper) (empty bounds are
  // open). Without `fill_cache` the blocks it reads go only to the block cache's scan pool
  // (BlockCache::Priority::Low).
  virtual Result<std::unique_ptr<UserIterator>> new_iterator(SequenceNumber snapshot,
                                                             std::string lower, std::string upper,
                                                             bool keys_only, bool fill_cache) = 0;

  // Whether the tree keeps versions by time (Options::versioning, as the database stores it).
  virtual bool versioned() const = 0;

  // An iterator answering `query` over the tree at `snapshot`, user keys in [lower, upper).
  virtual Result<std::unique_ptr<UserIterator>> new_time_iterator(SequenceNumber snapshot,
                                                                  std::string lower,
                                                                  std::string upper,
                                                                  const TimeQuery& query) = 0;

  // Commits `batch` (see commit/commit_pipeline.h): conflicts are checked against `snapshot`
  // when `check_conflicts`; the future completes once it is visible, and synced when `sync`.
  virtual CommitFuture commit(WriteBatch batch, SequenceNumber snapshot, bool check_conflicts,
                              bool sync) = 0;
};

}  // namespace skv

#endif  // SKV_TXN_TRANSACTION_HOST_H_
