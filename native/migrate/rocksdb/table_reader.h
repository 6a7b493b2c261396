// TableReader: one block-based table (.sst) of a RocksDB database, read for a full scan: footer
// (legacy, format versions 1-5 and 6+), metaindex, properties, compression dictionary, range
// deletions, and the index (binary, hash, two-level, with first key; user-key index keys;
// delta-encoded values) flattened into the list of data blocks. Data blocks are read one at a
// time by TableIter. PlainTable and CuckooTable files are NotSupported by name.
//
// Thread safety: a TableReader is immutable after open; a TableIter is not thread-safe.

#ifndef SKV_NATIVE_MIGRATE_ROCKSDB_TABLE_READER_H_
#define SKV_NATIVE_MIGRATE_ROCKSDB_TABLE_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "native/migrate/rocksdb/block.h"
#include "native/migrate/source_file.h"
#include "skv/status.h"

namespace skv::migration::rocksdb {

struct RangeTombstone {
  std::string start;  // user keys; end exclusive
  std::string end;
  uint64_t seq = 0;
};

struct TableProperties {
  std::string comparator;
  std::string merge_operator;
  std::string column_family_name;
  uint32_t index_type = 0;
  bool index_key_is_user_key = false;
  bool index_value_is_delta_encoded = false;
  bool external = false;  // an ingested file
  uint64_t global_seqno = 0;
};

class TableReader {
 public:
  // `ingest_seqno`: the file's sequence number from the manifest, used for ingested files.
  static Result<std::unique_ptr<TableReader>> open(SourceFile file, uint64_t ingest_seqno);

  const SourceFile& file() const { return file_; }
  const TableProperties& properties() const { return props_; }
  const std::vector<RangeTombstone>& range_tombstones() const { return tombstones_; }
  const std::vector<BlockHandle>& data_blocks() const { return data_blocks_; }
  const BlockReader& blocks() const { return blocks_; }
  // Nonzero for ingested files: every entry's sequence number.
  uint64_t forced_seqno() const { return forced_seqno_; }

 private:
  explicit TableReader(SourceFile file) : file_(std::move(file)) {}
  Status load(uint64_t ingest_seqno);
  Status load_index(const BlockHandle& h, bool top_level);

  SourceFile file_;
  BlockReader blocks_;
  TableProperties props_;
  std::vector<RangeTombstone> tombstones_;
  std::vector<BlockHandle> data_blocks_;
  uint64_t forced_seqno_ = 0;
};

// One decoded internal key.
struct ParsedEntry {
  std::string_view user_key;
  uint64_t seq = 0;
  uint8_t type = 0;
  std::string_view value;
};
bool parse_internal_key(std::string_view ikey, ParsedEntry* out);

// Walks a table's entries in order, one data block in memory at a time.
class TableIter {
 public:
  explicit TableIter(const TableReader* table) : table_(table) {}
  // False at the end or on error (status()).
  bool next();
  const ParsedEntry& entry() const { return entry_; }
  const Status& status() const { return status_; }
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  const TableReader* table_;
  size_t block_index_ = 0;
  std::string block_;
  std::unique_ptr<BlockIter> iter_;
  uint64_t iter_offset_ = 0;
  ParsedEntry entry_;
  Status status_;
  uint64_t bytes_read_ = 0;
};

}  // namespace skv::migration::rocksdb

#endif  // SKV_NATIVE_MIGRATE_ROCKSDB_TABLE_READER_H_
