// A merging iterator: presents several sorted InternalIterators as one, in internal-key order,
// in both directions. Entries are not deduplicated: every version from every child appears.
//
// Thread safety: one thread at a time, like every InternalIterator.

#ifndef SKV_ITERATOR_MERGING_ITERATOR_H_
#define SKV_ITERATOR_MERGING_ITERATOR_H_

#include <memory>
#include <vector>

#include "iterator/internal_iterator.h"

namespace skv {

// Takes ownership of the children. With no children it is empty; with one it is that child.
std::unique_ptr<InternalIterator> new_merging_iterator(
    std::vector<std::unique_ptr<InternalIterator>> children);

}  // namespace skv

#endif  // SKV_ITERATOR_MERGING_ITERATOR_H_
