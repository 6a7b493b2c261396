// Merging the sorted runs of one column family (each live table, and the family's WAL entries
// held in memory) into one stream in RocksDB's internal order: user key ascending (for
// timestamped keys: the key without its timestamp ascending, then the timestamp descending),
// then sequence number descending.
//
// Not thread-safe.

#ifndef SKV_NATIVE_MIGRATE_ROCKSDB_MERGE_ITERATOR_H_
#define SKV_NATIVE_MIGRATE_ROCKSDB_MERGE_ITERATOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "native/migrate/rocksdb/table_reader.h"
#include "skv/status.h"

namespace skv::migration::rocksdb {

// An entry decoded from the WAL, owned.
struct MemEntry {
  std::string key;
  uint64_t seq = 0;
  uint8_t type = 0;
  std::string value;
};

// Orders two internal entries; `ts` is true for keys ending in an 8-byte timestamp.
bool entry_before(const ParsedEntry& a, const ParsedEntry& b, bool ts);

class MergeIterator {
 public:
  // `mem` must be sorted with entry_before.
  MergeIterator(std::vector<const TableReader*> tables, const std::vector<MemEntry>* mem, bool ts);
  bool next();
  const ParsedEntry& entry() const { return current_; }
  const Status& status() const { return status_; }
  uint64_t table_bytes_read() const;

 private:
  struct Cursor {
    std::unique_ptr<TableIter> table;
    size_t mem_pos = 0;
    bool valid = false;
    ParsedEntry e;
  };
  bool advance(Cursor* c);
  std::vector<Cursor> cursors_;
  const std::vector<MemEntry>* mem_;
  bool ts_;
  bool started_ = false;
  int current_index_ = -1;
  ParsedEntry current_;
  Status status_;
};

}  // namespace skv::migration::rocksdb

#endif  // SKV_NATIVE_MIGRATE_ROCKSDB_MERGE_ITERATOR_H_
