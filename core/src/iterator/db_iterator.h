// DBIterator: turns a merged InternalIterator (every version of every key, from memtables and
// tables) into the user-visible view at one snapshot: for each user key only the newest version
// with sequence <= snapshot, and nothing for keys whose visible version is a tombstone.
// Restricted to user keys in [lower, upper) (an empty bound is unbounded).
//
// Going forward the iterator reads keys and values in place; going backward it copies the
// current key and value (unless keys_only), because the input must move past them.
//
// Thread safety: one thread at a time.

#ifndef SKV_ITERATOR_DB_ITERATOR_H_
#define SKV_ITERATOR_DB_ITERATOR_H_

#include <memory>
#include <string>

#include "format/internal_key.h"
#include "iterator/internal_iterator.h"
#include "iterator/user_iterator.h"

namespace skv {

std::unique_ptr<UserIterator> new_db_iterator(std::unique_ptr<InternalIterator> input,
                                              SequenceNumber snapshot, std::string lower,
                                              std::string upper, bool keys_only);

}  // namespace skv

#endif  // SKV_ITERATOR_DB_ITERATOR_H_
