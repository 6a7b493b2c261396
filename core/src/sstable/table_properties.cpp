#include "sstable/table_properties.h"

#include <algorithm>

#include "sstable/block_builder.h"
#include "sstable/block_format.h"
#include "sstable/bloom.h"
#include "util/coding.h"

namespace skv {

namespace {

// Sums and products that stop at kMaxBlockSize instead of overflowing: every input may be
// damaged.
uint64_t capped_add(uint64_t a, uint64_t b) {
  return a > kMaxBlockSize || b > kMaxBlockSize - a ? kMaxBlockSize : a + b;
}
uint64_t capped_mul(uint64_t a, uint64_t b) {
  return b != 0 && a > kMaxBlockSize / b ? kMaxBlockSize : std::min<uint64_t>(a * b, kMaxBlockSize);
}

}  // namespace

TableBlockLimits table_block_limits(const TableProperties& p) {
  TableBlockLimits l;
  l.data =
      capped_add(capped_add(p.raw_key_bytes, p.raw_value_bytes),
                 capped_add(capped_mul(p.num_entries, kMaxBlockEntryOverhead), kBlockCountSize));
  constexpr uint64_t kMaxHandleBytes = 2 * kMaxVarint64Bytes;
  l.index =
      capped_add(p.raw_key_bytes,
                 capped_add(capped_mul(p.data_blocks, kMaxBlockEntryOverhead + kMaxHandleBytes),
                            kBlockCountSize));
  l.filter = std::min<uint64_t>(bloom_max_filter_bytes(p.num_entries), kMaxBlockSize);
  return l;
}

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
