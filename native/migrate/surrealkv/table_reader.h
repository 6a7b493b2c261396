// TableReader: one SurrealKV 0.20/0.21 SSTable (sstables/%020u.sst), read from start to end one
// data block at a time.
//
// Layout: data blocks, an optional filter block, index partitions, the top-level index, the
// meta-index block, then a 50-byte footer:
//   format u8 (=1) | checksum type u8 (=1, IEEE CRC-32) | meta-index handle | index handle |
//   zero padding to byte 42 | magic 57 fb 80 8b 24 75 47 db
// (handles are varint offset, varint size; see table_block.h for blocks). The meta-index maps
// internal keys "meta" (the TableMetadata, big-endian, see table_meta.h) and
// "filter.leveldb.BloomFilter" (ignored: an import needs no filter). The index is two-level: the
// top level maps each partition's last separator to the partition, a partition maps separators to
// data blocks, which follow each other from offset 0.
//
// Everything read is checked: every block CRC, the footer bytes, key order (user key ascending,
// seq descending, no two entries with one (key, seq)), and at the end the counts, sequence range
// and first/last keys the TableMetadata records. Errors name the file and offset.
//
// Not thread-safe: one reader per thread. Not copyable.

#ifndef SKV_NATIVE_MIGRATE_SURREALKV_TABLE_READER_H_
#define SKV_NATIVE_MIGRATE_SURREALKV_TABLE_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "native/migrate/source_file.h"
#include "native/migrate/surrealkv/surrealkv_format.h"
#include "native/migrate/surrealkv/table_block.h"
#include "native/migrate/surrealkv/table_meta.h"
#include "skv/status.h"

namespace skv::migration::surrealkv {

class TableReader {
 public:
  // Opens the table, checks its footer and reads its TableMetadata and top-level index. `id` is
  // the id the manifest gives it; the metadata must carry the same one.
  static Result<std::unique_ptr<TableReader>> open(const std::string& path, uint64_t id);
  TableReader(const TableReader&) = delete;
  TableReader& operator=(const TableReader&) = delete;

  const TableMeta& meta() const { return meta_; }
  const SourceFile& file() const { return file_; }
  // Bytes of blocks read so far.
  uint64_t bytes_read() const { return bytes_read_; }

  // The next entry in table order into *out (sets *done at the end, once the end-of-table checks
  // have passed). After an error the reader must not be used again.
  Status next(Entry* out, bool* done);

 private:
  explicit TableReader(SourceFile file) : file_(std::move(file)) {}
  Status load_next_partition(bool* done);
  Status load_next_data_block(bool* done);
  Status finish_checks();

  SourceFile file_;
  TableMeta meta_;
  std::vector<std::pair<std::string, BlockHandle>> partitions_;  // from the top level
  size_t next_partition_ = 0;
  std::vector<std::pair<std::string, BlockHandle>> data_handles_;  // of the current partition
  size_t next_data_ = 0;
  std::string block_;  // the current data block's contents
  std::vector<BlockEntry> entries_;
  size_t next_entry_ = 0;
  BlockHandle block_handle_;
  std::string block_separator_;
  uint64_t expect_data_offset_ = 0;  // data blocks follow each other from offset 0
  // What was seen, for the end-of-table checks.
  uint64_t entries_seen_ = 0, deletions_seen_ = 0, soft_deletes_seen_ = 0;
  uint64_t blocks_seen_ = 0, partitions_seen_ = 0;
  uint64_t min_seq_ = UINT64_MAX, max_seq_ = 0;
  std::string first_key_, last_key_;  // encoded internal keys
  uint64_t bytes_read_ = 0;
};

}  // namespace skv::migration::surrealkv

#endif  // SKV_NATIVE_MIGRATE_SURREALKV_TABLE_READER_H_
