// The bloom filter of an SSTable: one filter over the user keys of the whole table.
//
//   filter_block := bits:u8[m] ‖ num_probes:u8          (m >= 1, 1 <= num_probes <= 30)
//
// A key is hashed once with bloom_hash (64 bits). Probe i (0 <= i < num_probes) sets or tests
// bit (h + i * delta) mod (8 * m), computed in 64-bit arithmetic, where
// delta = rotate_right(h, 33) | 1. Bit b lives in byte b / 8 at position b % 8. The hash is part
// of the format: it is defined on bytes, independent of the machine's endianness and word size.
//
// Thread safety: BloomFilterBuilder is used by one thread; BloomFilter is immutable and may be
// read from many threads.

#ifndef SKV_SSTABLE_BLOOM_H_
#define SKV_SSTABLE_BLOOM_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace skv {

// A 64-bit hash of `key` (a multiply-xorshift mix over 8-byte little-endian words).
uint64_t bloom_hash(std::string_view key);

// The number of probes for `bits_per_key`: round(bits_per_key * 0.69) clamped to [1, 30].
int bloom_num_probes(int bits_per_key);

// BloomFilterBuilder clamps bits_per_key to [1, kMaxBloomBitsPerKey].
constexpr int kMaxBloomBitsPerKey = 100;

// The largest filter_block BloomFilterBuilder::finish() writes for `keys` keys (any
// bits_per_key), saturating instead of overflowing.
uint64_t bloom_max_filter_bytes(uint64_t keys);

class BloomFilterBuilder {
 public:
  // `bits_per_key` is clamped to [1, kMaxBloomBitsPerKey].
  explicit BloomFilterBuilder(int bits_per_key);

  void add_key(std::string_view key) { hashes_.push_back(bloom_hash(key)); }
  size_t num_keys() const { return hashes_.size(); }

  // Appends filter_block for every key added (at least 64 bits even with few keys).
  void finish(std::string* dst) const;

 private:
  int bits_per_key_;
  std::vector<uint64_t> hashes_;
};

// A read-only view of an encoded filter.
class BloomFilter {
 public:
  BloomFilter() = default;
  // Parses `data` (which must outlive the filter). False if it is malformed.
  bool parse(std::string_view data);

  // False only if `key` was certainly not added. A default-constructed filter returns true.
  bool may_contain(std::string_view key) const;

 private:
  std::string_view bits_;
  int num_probes_ = 0;
};

}  // namespace skv

#endif  // SKV_SSTABLE_BLOOM_H_
