// insert_batch: the one way committed writes enter a memtable. The commit pipeline applies each
// batch of a group with it, and recovery applies each WAL record it replays: the same bytes, the
// same function, so a replayed database holds exactly what was committed.
//
// Thread safety: as MemTable::add (one writer at a time per memtable).

#ifndef SKV_MEMTABLE_BATCH_INSERT_H_
#define SKV_MEMTABLE_BATCH_INSERT_H_

#include <string_view>

#include "memtable/memtable.h"

namespace skv {

// Inserts every entry of `record` (an encoded WriteBatch, wal/write_batch.h) into `mem` under the
// batch's sequence number. REQUIRES: the record was built by a WriteBatch or passed
// WriteBatch::check(), and its sequence number is newer than anything in `mem` for its keys.
void insert_batch(std::string_view record, MemTable* mem);

}  // namespace skv

#endif  // SKV_MEMTABLE_BATCH_INSERT_H_
