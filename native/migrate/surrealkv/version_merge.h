// VersionMerge: the entries of several SurrealKV tables and of the WAL, merged into one stream
// of keys ascending (bytewise), each with all its versions newest first (by sequence number).
//
// Each table is read one data block at a time; the WAL's entries are held in memory. An entry
// found twice with one (key, seq), as when a WAL segment overlaps a flushed table, is kept once
// when both copies agree and is Corruption (naming both places) when they do not.
//
// Not thread-safe. Not copyable.

#ifndef SKV_NATIVE_MIGRATE_SURREALKV_VERSION_MERGE_H_
#define SKV_NATIVE_MIGRATE_SURREALKV_VERSION_MERGE_H_

#include <memory>
#include <vector>

#include "native/migrate/surrealkv/surrealkv_format.h"
#include "native/migrate/surrealkv/table_reader.h"
#include "skv/status.h"

namespace skv::migration::surrealkv {

class VersionMerge {
 public:
  // `wal` in log order; it is sorted here.
  VersionMerge(std::vector<std::unique_ptr<TableReader>> tables, std::vector<Entry> wal);
  VersionMerge(const VersionMerge&) = delete;
  VersionMerge& operator=(const VersionMerge&) = delete;

  // The next key's versions, newest first, into *versions (replaced); *end once every source is
  // exhausted. After an error the merge must not be used again.
  Status next_key(std::vector<Entry>* versions, bool* end);

 private:
  struct Source {
    TableReader* table = nullptr;  // null: the WAL
    bool has = false;
    Entry cur;
  };
  Status advance(Source* s);

  std::vector<std::unique_ptr<TableReader>> tables_;
  std::vector<Entry> wal_;
  size_t wal_pos_ = 0;
  std::vector<Source> sources_;
  bool started_ = false;
};

}  // namespace skv::migration::surrealkv

#endif  // SKV_NATIVE_MIGRATE_SURREALKV_VERSION_MERGE_H_
