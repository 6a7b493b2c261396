// Iterators over versions by time, for versioned trees (docs/versioning.md): the tree as of a
// timestamp (range_at, keys_at, get_at) and every version of each key (history).
//
// Internal keys order a key's versions by sequence number, newest first, but a version's
// timestamp need not follow that order (set_at may write a time in the past). So both iterators
// read every version of a key that the snapshot sees (sequence <= snapshot) and order them by
// timestamp, newest first; two versions with the same timestamp order by sequence number, the
// later commit first. "The version as of T" is the first version in that order whose timestamp is
// at or before T: a tombstone there means the key is absent at T.
//
// Both are UserIterators (user_iterator.h) over user keys in [lower, upper) (an empty bound is
// open), in both directions. The history iterator yields one entry per version: its key repeats,
// versions of a key come newest first going forward (oldest first going backward), and
// is_delete() tells tombstones (yielded only when asked for).
//
// Costs: each key's versions are read and kept in memory while the iterator is on that key
// (values copied unless keys only), so a key with very many versions costs their total size.
//
// Thread safety: one thread at a time.

#ifndef SKV_ITERATOR_VERSION_ITERATORS_H_
#define SKV_ITERATOR_VERSION_ITERATORS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "format/internal_key.h"
#include "iterator/db_iterator.h"
#include "iterator/internal_iterator.h"
#include "iterator/user_iterator.h"

namespace skv {

// The tree as of `timestamp`: for each key, the version as of that time (see above), skipping
// keys absent then. With `keys_only`, values are neither copied nor returned (and the value log
// is never read). `resolver` reads separated values (ValuePointer entries); it may be null for
// keys only or an input without pointers (meeting one is then Corruption).
std::unique_ptr<UserIterator> new_as_of_iterator(std::unique_ptr<InternalIterator> input,
                                                 SequenceNumber snapshot, std::string lower,
                                                 std::string upper, uint64_t timestamp,
                                                 bool keys_only,
                                                 std::shared_ptr<ValueResolver> resolver);

// Every version of every key, newest timestamp first within a key. Tombstones are yielded (with
// is_delete()) only with `include_tombstones`.
std::unique_ptr<UserIterator> new_history_iterator(std::unique_ptr<InternalIterator> input,
                                                   SequenceNumber snapshot, std::string lower,
                                                   std::string upper, bool include_tombstones,
                                                   std::shared_ptr<ValueResolver> resolver);

}  // namespace skv

#endif  // SKV_ITERATOR_VERSION_ITERATORS_H_
