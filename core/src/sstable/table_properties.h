// Encoding of TableProperties (sstable/table_options.h), the payload of a table's properties
// block:
//
//   properties := num_entries:varint64 ‖ num_deletions:varint64 ‖ raw_key_bytes:varint64 ‖
//                 raw_value_bytes:varint64 ‖ data_blocks:varint64 ‖
//                 smallest_key:length_prefixed ‖ largest_key:length_prefixed ‖
//                 smallest_seq:varint64 ‖ largest_seq:varint64
//   length_prefixed := len:varint64 ‖ u8[len]
//
// Nothing may follow the last field.
//
// Thread safety: pure functions.

#ifndef SKV_SSTABLE_TABLE_PROPERTIES_H_
#define SKV_SSTABLE_TABLE_PROPERTIES_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "sstable/table_options.h"
#include "util/coding.h"

namespace skv {

void encode_table_properties(const TableProperties& p, std::string* dst);

// The most a properties block can hold: its seven integers and two internal keys whose user keys
// are at most kMaxKeySize bytes (TableBuilder refuses longer ones).
constexpr uint64_t kMaxPropertiesBlockSize =
    7 * kMaxVarint64Bytes + 2 * (kMaxVarint64Bytes + kMaxKeySize + kInternalKeySuffix);

// The most each kind of block of a table with properties `p` can decode to, following how the
// builder lays them out; never above kMaxBlockSize. A block that claims more is corrupt, and a
// reader refuses it before allocating anything for it.
//
//   data:   one block holds some of the entries, each its key and value plus at most
//           kMaxBlockEntryOverhead bytes, then the restart count;
//   index:  one entry per data block, whose key (a separator) is no longer than that block's last
//           key and whose value is a block handle (at most 20 bytes);
//   filter: what bloom_max_filter_bytes() allows for num_entries keys.
//
// The block size the table was built with is not recorded; these bounds follow from what is.
struct TableBlockLimits {
  uint64_t data = 0;
  uint64_t index = 0;
  uint64_t filter = 0;
};
TableBlockLimits table_block_limits(const TableProperties& p);

// False if `input` is malformed: short, trailing bytes, or keys shorter than an internal key.
bool decode_table_properties(std::string_view input, TableProperties* out);

}  // namespace skv

#endif  // SKV_SSTABLE_TABLE_PROPERTIES_H_
