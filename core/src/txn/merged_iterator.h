// The transaction's view as an iterator: the tree's snapshot (a UserIterator with deleted keys
// already hidden) overlaid with the transaction's buffered writes. A buffered write replaces the
// tree's entry for the same key; a buffered delete hides it.
//
// Thread safety: one thread at a time.

#ifndef SKV_TXN_MERGED_ITERATOR_H_
#define SKV_TXN_MERGED_ITERATOR_H_

#include <memory>

#include "iterator/user_iterator.h"

namespace skv {

std::unique_ptr<UserIterator> new_overlay_iterator(std::unique_ptr<UserIterator> writes,
                                                   std::unique_ptr<UserIterator> tree);

}  // namespace skv

#endif  // SKV_TXN_MERGED_ITERATOR_H_
