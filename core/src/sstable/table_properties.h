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

#include <string>
#include <string_view>

#include "sstable/table_options.h"

namespace skv {

void encode_table_properties(const TableProperties& p, std::string* dst);

// False if `input` is malformed: short, trailing bytes, or keys shorter than an internal key.
bool decode_table_properties(std::string_view input, TableProperties* out);

}  // namespace skv

#endif  // SKV_SSTABLE_TABLE_PROPERTIES_H_
