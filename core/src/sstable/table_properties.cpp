#include "sstable/table_properties.h"

#include "util/coding.h"

namespace skv {

void encode_table_properties(const TableProperties& p, std::string* dst) {
  put_varint64(dst, p.num_entries);
  put_varint64(dst, p.num_deletions);
  put_varint64(dst, p.raw_key_bytes);
  put_varint64(dst, p.raw_value_bytes);
  put_varint64(dst, p.data_blocks);
  put_length_prefixed(dst, p.smallest_key);
  put_length_prefixed(dst, p.largest_key);
  put_varint64(dst, p.smallest_seq);
  put_varint64(dst, p.largest_seq);
}

bool decode_table_properties(std::string_view input, TableProperties* out) {
  TableProperties p;
  std::string_view smallest, largest;
  if (!get_varint64(&input, &p.num_entries) || !get_varint64(&input, &p.num_deletions) ||
      !get_varint64(&input, &p.raw_key_bytes) || !get_varint64(&input, &p.raw_value_bytes) ||
      !get_varint64(&input, &p.data_blocks) || !get_length_prefixed(&input, &smallest) ||
      !get_length_prefixed(&input, &largest) || !get_varint64(&input, &p.smallest_seq) ||
      !get_varint64(&input, &p.largest_seq) || !input.empty()) {
    return false;
  }
  if (smallest.size() < kInternalKeySuffix || largest.size() < kInternalKeySuffix) return false;
  if (p.num_deletions > p.num_entries || p.smallest_seq > p.largest_seq) return false;
  p.smallest_key.assign(smallest);
  p.largest_key.assign(largest);
  *out = std::move(p);
  return true;
}

}  // namespace skv
