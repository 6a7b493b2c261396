#include "memtable/batch_insert.h"

#include "wal/write_batch.h"

namespace skv {

void insert_batch(std::string_view record, MemTable* mem) {
  const SequenceNumber seq = WriteBatch::sequence_of(record);
  mem->note_commit_timestamp(WriteBatch::commit_timestamp_of(record));
  WriteBatch::for_each(record, [&](const WriteBatch::Entry& e) {
    mem->add(seq, e.kind, e.key, e.value, e.timestamp);
  });
}

}  // namespace skv
