// LevelIterator: one cursor over the tables of a level, in key order.
//
// The files must be sorted by smallest key and must not overlap (L1 and deeper; a single L0 file
// qualifies too). Tables are opened lazily through the table cache as the cursor reaches them,
// in both directions. An error opening or reading a table (missing file, corruption, I/O) makes
// the iterator invalid and is reported by status(); it is never mistaken for the end of the level.
// The first error is kept.
//
// Thread safety: one thread at a time, like every InternalIterator.

#ifndef SKV_VERSION_LEVEL_ITERATOR_H_
#define SKV_VERSION_LEVEL_ITERATOR_H_

#include <memory>
#include <vector>

#include "iterator/internal_iterator.h"
#include "sstable/table.h"
#include "version/table_cache.h"
#include "version/version_edit.h"

namespace skv {

// `pin` is kept alive as long as the iterator (the Version the files belong to, so they are not
// deleted while the cursor may still open them). `cache` must outlive the iterator.
std::unique_ptr<InternalIterator> new_level_iterator(std::shared_ptr<const void> pin,
                                                     TableCache* cache,
                                                     std::vector<FileMetaPtr> files,
                                                     const TableReadOptions& options);

}  // namespace skv

#endif  // SKV_VERSION_LEVEL_ITERATOR_H_
