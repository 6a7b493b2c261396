// TableMetadata: the "meta" entry of a SurrealKV 0.20/0.21 SSTable's meta-index block.
//
// Grammar (big-endian):
//   has_point_keys u8 (0 none, 1 true, 2 false) | smallest_seq u64 | largest_seq u64 |
//   props_len u64 (=194) | Properties[props_len] |
//   smallest_point: 0 | 1, len u64, encoded internal key    largest_point: the same
//   Properties: id u64 | table_format u8 (=1) | num_entries | num_deletions | data_size |
//     oldest_vlog_file_id | num_data_blocks | index_size | index_partitions |
//     top_level_index_size | filter_size | raw_key_size | raw_value_size (u64 each) |
//     created_at u128 | item_count | key_count | tombstone_count | num_soft_deletes |
//     num_range_deletions (u64 each) | block_size u32 | block_count u32 | compression u8 |
//     seqno start u64 | seqno end u64 | oldest_key_time u64 | newest_key_time u64
//
// Plain values and a function; thread-compatible.

#ifndef SKV_NATIVE_MIGRATE_SURREALKV_TABLE_META_H_
#define SKV_NATIVE_MIGRATE_SURREALKV_TABLE_META_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "native/migrate/source_file.h"
#include "skv/status.h"

namespace skv::migration::surrealkv {

inline constexpr uint64_t kPropertiesSize = 194;

// The fields the reader checks the table against.
struct TableMeta {
  uint8_t has_point_keys = 0;
  uint64_t smallest_seq = 0;
  uint64_t largest_seq = 0;
  uint64_t id = 0;
  uint64_t num_entries = 0;
  uint64_t num_deletions = 0;  // Delete, SoftDelete and RangeDelete entries
  uint64_t num_soft_deletes = 0;
  uint64_t num_data_blocks = 0;
  uint64_t index_partitions = 0;
  std::optional<std::string> smallest_point;  // encoded internal keys
  std::optional<std::string> largest_point;
};

// Decodes `bytes` (the value of the "meta" entry, read from the block at `offset`). Corruption
// when a field is cut short, a length is wrong, a flag byte is unknown or bytes are left over;
// NotSupported for a table_format other than 1.
Status decode_table_meta(const SourceFile& file, uint64_t offset, std::string_view bytes,
                         TableMeta* out);

}  // namespace skv::migration::surrealkv

#endif  // SKV_NATIVE_MIGRATE_SURREALKV_TABLE_META_H_
