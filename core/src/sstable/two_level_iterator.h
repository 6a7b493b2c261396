// TwoLevelIterator: walks an SSTable by an index iterator whose values are block handles, opening
// each data block through a loader function. Both directions; empty data blocks are skipped.
//
// The first error (a bad handle in the index, a block that fails to load or decode) makes the
// iterator invalid for good and is reported by status().
//
// Thread safety: one iterator is used by one thread at a time.

#ifndef SKV_SSTABLE_TWO_LEVEL_ITERATOR_H_
#define SKV_SSTABLE_TWO_LEVEL_ITERATOR_H_

#include <functional>
#include <memory>
#include <string_view>

#include "iterator/internal_iterator.h"
#include "sstable/block.h"
#include "sstable/block_format.h"

namespace skv {

// Returns an iterator over the data block at `handle`, or the error that kept it from loading.
using DataBlockLoader = std::function<Result<std::unique_ptr<BlockIterator>>(const BlockHandle&)>;

// `file` names the table in messages and must outlive the iterator.
std::unique_ptr<InternalIterator> new_two_level_iterator(std::unique_ptr<BlockIterator> index,
                                                         DataBlockLoader loader,
                                                         std::string_view file);

}  // namespace skv

#endif  // SKV_SSTABLE_TWO_LEVEL_ITERATOR_H_
