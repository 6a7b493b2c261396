// Manifest replay: CURRENT names the MANIFEST, a log of version edits; replaying them gives the
// column families (names, comparators, log numbers, dropped ones) and each family's live table
// and blob files. Unknown tags that must be understood are NotSupported; a torn last record is
// ignored; edits of an atomic group apply only once the whole group has been read.
//
// Thread safety: pure function of the directory's files.

#ifndef SKV_NATIVE_MIGRATE_ROCKSDB_MANIFEST_H_
#define SKV_NATIVE_MIGRATE_ROCKSDB_MANIFEST_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "skv/status.h"

namespace skv::migration::rocksdb {

struct TableFileMeta {
  uint64_t number = 0;
  uint32_t path_id = 0;
  uint64_t size = 0;
  uint64_t smallest_seqno = 0;
  uint64_t largest_seqno = 0;
};

struct ColumnFamilyState {
  uint32_t id = 0;
  std::string name;
  std::string comparator;
  uint64_t log_number = 0;
  bool dropped = false;
  std::map<uint64_t, TableFileMeta> tables;  // by file number (level does not matter to a scan)
  std::map<uint64_t, uint64_t> level_of;     // file number -> level
  std::set<uint64_t> blob_files;
};

struct ManifestState {
  std::string manifest_name;
  uint64_t manifest_size = 0;
  uint64_t last_sequence = 0;
  uint64_t next_file_number = 0;
  std::map<uint32_t, ColumnFamilyState> families;  // dropped ones included (flagged)
};

// Reads `dir`/CURRENT and replays the manifest it names.
Result<ManifestState> replay_manifest(const std::string& dir);

}  // namespace skv::migration::rocksdb

#endif  // SKV_NATIVE_MIGRATE_ROCKSDB_MANIFEST_H_
