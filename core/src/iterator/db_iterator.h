// DBIterator: turns a merged InternalIterator (every version of every key, from memtables and
// tables) into the user-visible view at one snapshot: for each user key only the newest version
// with sequence <= snapshot, and nothing for keys whose visible version is a tombstone.
// Restricted to user keys in [lower, upper) (an empty bound is unbounded).
//
// Going forward the iterator reads keys and values in place; going backward it copies the
// current key and value (unless keys_only), because the input must move past them. An entry of
// kind ValuePointer holds a pointer into a value log: the iterator reads its value through the
// ValueResolver when value() is first called on the entry (never for entries it only moves over,
// and never when keys_only). A failed read makes value() return an empty view and stops the
// iterator: valid() turns false and status() holds the error.
//
// Thread safety: one thread at a time.

#ifndef SKV_ITERATOR_DB_ITERATOR_H_
#define SKV_ITERATOR_DB_ITERATOR_H_

#include <memory>
#include <string>
#include <string_view>

#include "format/internal_key.h"
#include "iterator/internal_iterator.h"
#include "iterator/user_iterator.h"

namespace skv {

// Reads the values that live in a value log (docs/vlog.md) for the iterators that meet them.
// Thread safety: resolve() may be called from many threads at once.
class ValueResolver {
 public:
  virtual ~ValueResolver() = default;
  // Sets *value to the value `pointer` (the stored value of a ValuePointer entry) points at,
  // stored under `user_key`. Corruption or I/O errors naming the file and offset.
  virtual Status resolve(std::string_view user_key, std::string_view pointer,
                         std::string* value) = 0;
};

// `resolver` may be null when the input holds no ValuePointer entry (meeting one is then
// Corruption).
std::unique_ptr<UserIterator> new_db_iterator(std::unique_ptr<InternalIterator> input,
                                              SequenceNumber snapshot, std::string lower,
                                              std::string upper, bool keys_only,
                                              std::shared_ptr<ValueResolver> resolver = nullptr);

}  // namespace skv

#endif  // SKV_ITERATOR_DB_ITERATOR_H_
